"""The Experiments page's questions: which experiment, at which budget, with which parameters.
Parameter widgets are built from an experiment's params dataclass; `refusal` says what a shared
server will not run; `command_line` gives the same configuration for the terminal."""

from __future__ import annotations

import dataclasses
import math

import streamlit as st

from explorer.config import POS_ENCODINGS
from explorer.experiments import Experiment, parse_values, refusal_of, takes_own_data
from explorer.experiments.sweep import AXES
from explorer.tasks import TASK_PRESETS, own_data
from ui import own_data as own_upload
from ui.widgets import grid

EXP_NAME, EXP_BUDGET = "exp_name", "exp_budget"  # the experiment shown and its budget (in the URL)
EXP_PARAM = "exp_param"           # prefix of the parameter widgets: "exp_param_pe-order_full_seeds"
LIMITS = {"seeds": 10, "steps": 3000}          # a shared server: bigger budgets belong on the command line
MAX_CELLS = 36                                 # sweep cells x seeds
BUDGETS = {"full": "Full (default budget)", "quick": "Quick (tiny budget)"}  # labels are in shared links
SHORT = {"pe-order": "PE and order", "pre-post-ln": "Pre-LN vs Post-LN", "residuals": "Residuals",
         "label-smoothing": "Label smoothing", "alignment-heads": "Alignment heads", "heads": "Heads",
         "length": "Length", "pe-types": "PE types", "decoding": "Decoding", "lm-length": "LM length",
         "attn-scale": "Attention scale", "d-head": "Head width", "scan": "SCAN",
         "induction-heads": "Induction heads",
         "grokking": "Grokking", "sweep": "Sweep"}
MAIN = ("x_axis", "x_values", "y_axis", "y_values", "seeds", "steps", "metric")  # shown outside "More"
CHOICES = {"encodings": POS_ENCODINGS, "x_axis": tuple(AXES), "y_axis": tuple(AXES),
           "metric": ("val_exact", "val_token_acc"), "task": tuple(TASK_PRESETS)}
AXIS_EXAMPLES = {"d_model": (16, 32, 64), "n_heads": (1, 2, 4), "n_layers": (1, 2, 3), "d_ff": (32, 64, 128),
                 "pos_encoding": POS_ENCODINGS, "norm": ("pre", "post"), "residual": ("add", "none"),
                 "attn_scale": ("sqrt_d_k", "none"), "dropout": (0.0, 0.1, 0.2),
                 "lr": (0.001, 0.003, 0.01), "steps": (100, 200, 300), "batch_size": (16, 32, 64),
                 "warmup": (0, 50, 100), "label_smoothing": (0.0, 0.1, 0.2)}
HELP = {"seeds": "Independent repetitions: each seed draws its own data and initial weights; the table "
                 "shows mean ± std over them.",
        "steps": "Training steps of every run.", "lr": "Peak learning rate.",
        "x_values": "Comma-separated values of the x axis, e.g. 16, 32, 64.",
        "y_values": "Comma-separated values of the y axis."}


def _text(values: tuple) -> str:
    return ", ".join(str(v) for v in values)



def _options(exp: Experiment, base, field: str) -> tuple | None:
    """The values a str field offers; for the task, the presets its params do not refuse (a seq2seq
    experiment takes the reversal tasks, the order experiments the order tasks)."""
    if field not in CHOICES or isinstance(getattr(base, field), tuple):
        return None
    if field != "task":  # an axis is checked with its values, which follow it: offer every axis
        return CHOICES[field]
    ok = []
    for option in CHOICES[field]:
        try:
            dataclasses.replace(base, **{field: option})
            ok.append(option)
        except ValueError:
            pass
    return tuple(ok) if getattr(base, field) in ok else None


def _widget(exp: Experiment, base, field: str, prefix: str, values: dict):
    """One parameter's widget; returns its value in the params' type (tuples parsed from text)."""
    default, label, help_ = getattr(base, field), field, HELP.get(field)
    key, kw = f"{prefix}_{field}", dict(persist_state="session", help=help_)
    options = _options(exp, base, field)
    if field in ("x_values", "y_values"):  # their examples follow the chosen axis
        axis = values.get(field[0] + "_axis", getattr(base, field[0] + "_axis"))
        default = default if axis == getattr(base, field[0] + "_axis") else AXIS_EXAMPLES[axis]
        key, label = f"{key}_{axis}", f"{axis} values ({field[0]})"
    if options is not None:
        return st.selectbox(label, options, index=options.index(default), key=key, **kw)
    if isinstance(default, tuple) and field in CHOICES:
        return tuple(st.multiselect(label, CHOICES[field], default=list(default), key=key, **kw))
    if isinstance(default, tuple):
        return parse_values(st.text_input(label, _text(default), key=key, **kw))
    if isinstance(default, bool) or isinstance(default, str):
        return st.text_input(label, str(default), key=key, **kw)
    if isinstance(default, float):
        step = 10.0 ** math.floor(math.log10(default)) if default > 0 else 0.01   # a float: 1.0 gives 1.0
        return st.number_input(label, value=default, step=step, format="%g", key=key, **kw)
    return st.number_input(label, value=default, step=1, key=key, **kw)


def param_widgets(exp: Experiment, budget: str) -> tuple[object | None, str | None]:
    """The experiment's parameters as widgets (the main ones in view, the rest under "More");
    returns (params, None) or (None, what is wrong and what is valid)."""
    base = exp.tiny if budget == "quick" else exp.params()
    prefix = _prefix(exp, budget)
    fields = [f.name for f in dataclasses.fields(exp.params) if f.name != "data"]  # own data: an upload
    main = [f for f in MAIN if f in fields] + [f for f in fields if isinstance(getattr(base, f), tuple)
                                               and f not in MAIN]
    values: dict = {}
    for cell, field in zip(grid(len(main), 4), main):
        with cell:
            values[field] = _widget(exp, base, field, prefix, values)
    more, own, refused = st.expander("More parameters"), None, None
    if takes_own_data(exp.params):
        own, refused = own_upload.pairs_expander(f"{prefix}_data", "run this experiment on them instead of the "
                                                 "task under More parameters: each seed draws its own 90/10 split")
        if own is not None:  # the file is the task
            fields.remove("task")
            values.update(task=own_data.OWN, data=own.cfg.text)
    with more:
        rest = [f for f in fields if f not in main]
        for cell, field in zip(grid(len(rest), 4), rest):
            with cell:
                values[field] = _widget(exp, base, field, prefix, values)
    if refused:
        return None, own_upload.REFUSED
    try:
        params = exp.make_params(values, tiny=budget == "quick")
    except (TypeError, ValueError) as err:
        return None, str(err)
    return params, refusal(exp.name, params)


def _prefix(exp: Experiment, budget: str) -> str:
    return f"{EXP_PARAM}_{exp.name}_{budget}"


def data_file(exp: Experiment, budget: str) -> str:
    """The name of the pairs uploaded for this experiment and budget (for the command line)."""
    upload = st.session_state.get(f"{_prefix(exp, budget)}_data")
    return getattr(upload, "name", "FILE.tsv")


def refusal(name: str, params) -> str | None:
    """Why a configuration is too big for a shared server, or None."""
    for field, limit in LIMITS.items():
        if getattr(params, field, 0) > limit:
            return f"{field}={getattr(params, field)} is more than this server runs (at most {limit})"
    if hasattr(params, "x_values"):
        cells = len(params.x_values) * len(params.y_values) * params.seeds
        if cells > MAX_CELLS:
            return f"{cells} cells (x values × y values × seeds) is more than this server runs (at most {MAX_CELLS})"
    return refusal_of(name, params)  # the total work: conditions x seeds x steps


def command_line(exp: Experiment, params, budget: str) -> str:
    """The CLI call that runs this configuration (and writes CSV)."""
    base = exp.tiny if budget == "quick" else exp.params()
    parts = ["python -m explorer experiment", exp.name] + (["--tiny"] if budget == "quick" else [])
    if getattr(params, "task", None) == own_data.OWN:
        parts.append(f"--data {data_file(exp, budget)}")
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        if f.name in ("task", "data") and params.task == own_data.OWN:
            continue
        if value != getattr(base, f.name):
            shown = ",".join(map(str, value)) if isinstance(value, tuple) else value
            parts.append(f"--set {f.name}={shown}")
    return " ".join(parts)
