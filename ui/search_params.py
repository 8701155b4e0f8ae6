"""The Search page's questions: which settings to search and over what, how many trials, which sampler
and pruner. The fixed settings are the shared config and training widgets (ui/widgets.py,
ui/train_settings.py), so a search starts from the model the other pages show. Each dimension is typed
as on the command line (`1e-4:1e-2:log`, `16, 32, 64`) and checked by the same parser; the command line
printed for a terminal fixes every setting as the page does (`--set`), so it runs the same study. The
constraints, the metrics and the trials to run first are the CLI's `--constraint`, `--metric` and
`--enqueue`, checked by the same library."""

from __future__ import annotations

import shlex

import streamlit as st

from explorer.limits import check_search_work
from explorer.search import FIELDS, SAMPLERS, SearchSpec
from explorer.search.objectives import NAMES
from explorer.search.space import parse_space
from explorer.search.study import METRICS
from explorer.search.trial import PRUNERS
from explorer.tasks import Task, own_data
from explorer.train_config import TrainConfig
from ui.links import SHARED, state_value
from ui.model_config import CFG, DEFAULT_TASK, config_values, current_task, vector_width
from ui.train_settings import settings_values
from ui.widgets import grid

SEARCH_FIELDS = "search_fields"       # the settings searched (in the URL)
SEARCH_SPACE = "search_space"         # prefix of each one's range or choices: "search_space_lr"
SEARCH_TRIALS, SEARCH_STEPS = "search_trials", "search_steps"
SEARCH_SAMPLER, SEARCH_PRUNER, SEARCH_SEED = "search_sampler", "search_pruner", "search_seed"
SEARCH_DATA = "search_own_file"       # a TSV of own pairs searched instead of the task (never in the URL)
SEARCH_METRICS = "search_metrics"     # the objectives: none = the task's; two or more = a Pareto front
SEARCH_CONSTRAINTS = "search_constraints"   # "d_ff>=2*d_model; lr<=1e-2" (in the URL)
SEARCH_ENQUEUE = "search_enqueue"     # trials to run first, one a line (the form's, submitted)
SEARCH_ENQUEUE_FORM = "search_enqueue_form"
NUMBERS = {SEARCH_TRIALS: (1, 40, 8), SEARCH_STEPS: (10, 2000, 200), SEARCH_SEED: (0, 9999, 0)}
DEFAULT_FIELDS = ["lr", "d_model"]
EXAMPLES = {"d_model": "16, 32, 64", "n_heads": "1, 2, 4", "n_layers": "1, 2", "d_ff": "32, 64, 128",
            "pos_encoding": "sinusoidal, rope, none", "norm": "pre, post", "activation": "relu, gelu",
            "residual": "add, none", "attn_scale": "sqrt_d_k, none",
            "dropout": "0:0.3", "lr": "1e-4:1e-2:log", "steps": "100, 200", "batch_size": "16, 32, 64",
            "warmup": "0:100", "label_smoothing": "0:0.2", "weight_decay": "0:0.1", "seed": "0, 1, 2"}
SAMPLER_LABELS = {"tpe": "TPE (Bayesian)", "random": "Random", "grid": "Grid (every combination)"}
PRUNER_LABELS = {"none": "None", "median": "Median", "halving": "Successive halving"}
MODEL_BASE = ("d_model", "n_heads", "d_ff", "pos_encoding", "norm", "residual", "attn_scale", "activation", "dropout")
TRAIN_BASE = ("lr", "batch_size", "warmup", "label_smoothing")


def base_of_widgets(space_fields) -> dict:
    """The fixed settings of every trial: the shared config and training widgets' values for every field
    not searched (weight_decay, which no widget sets, at its default)."""
    values, train = config_values(CFG), settings_values()
    base = {f: values[f] for f in MODEL_BASE}
    width = vector_width(current_task(CFG))
    if width is not None:
        base["d_model"] = width
    base["n_layers"] = values["n_encoder_layers"]
    if "d_model" in space_fields and "d_ff" not in space_fields:
        base.pop("d_ff")  # d_ff follows d_model (2x), as in the sweep
    base.update({f: train[f] for f in TRAIN_BASE}, weight_decay=TrainConfig.weight_decay)
    return {f: v for f, v in base.items() if f not in space_fields}


def space_widgets() -> tuple[list[str], list[str]]:
    """The settings to search and their specs (`["lr=1e-4:1e-2:log", ...]`)."""
    fields = st.multiselect("Settings to search", list(FIELDS), default=DEFAULT_FIELDS, key=SEARCH_FIELDS,
                            **SHARED, help="Every other setting stays as set below (Fixed settings).")
    specs = []
    for cell, name in zip(grid(len(fields), 3), fields):
        text = cell.text_input(name, EXAMPLES[name], key=f"{SEARCH_SPACE}_{name}", **SHARED,
                               help="A range LOW:HIGH (add :log for a log scale), or choices A, B, C.")
        specs.append(f"{name}={text}")
    return fields, specs


def control_widgets() -> dict:
    """The objectives, the constraints and (in a form) the trials to run first."""
    left, right = st.columns(2)
    metrics = left.multiselect("Objectives", NAMES, key=SEARCH_METRICS, **SHARED, max_selections=3,
                               placeholder="the task's own metric",
                               help="Empty: the task's metric. Two or more (e.g. val_exact and params) make a "
                                    "multi-objective search with a Pareto front; params and seconds are minimised.")
    constraints = right.text_input("Constraints", "", key=SEARCH_CONSTRAINTS, **SHARED,
                                   placeholder="d_ff>=2*d_model; lr<=5e-3",
                                   help="Separated by ';'. Numbers and numeric settings with + - * / and one "
                                        "comparison each. Built in: n_heads divides d_model, and d_ff >= d_model "
                                        "when both are searched. No trial trains on a point they refuse.")
    with st.expander("Trials to run first (enqueue)"):
        with st.form(SEARCH_ENQUEUE_FORM, border=False):
            st.text_area("One trial a line, FIELD=VALUE pairs joined by commas", key=SEARCH_ENQUEUE,
                         placeholder="lr=3e-3, d_model=32", height=90,
                         help="Each value must be one the space can give; a searched field left out is drawn "
                              "by the sampler.")
            st.form_submit_button("Run these first", icon=":material/queue:")
    queued = [line.strip() for line in str(st.session_state.get(SEARCH_ENQUEUE) or "").splitlines() if line.strip()]
    return {"metrics": tuple(metrics), "constraints": tuple(c.strip() for c in constraints.split(";") if c.strip()),
            "enqueue": tuple(queued)}


def run_widgets() -> dict:
    """Trials, steps per trial, sampler, pruner and seed."""
    n = NUMBERS
    cols = st.columns([1, 1, 1.4, 1.4, 1])
    out = {"trials": cols[0].number_input("Trials", *n[SEARCH_TRIALS], key=SEARCH_TRIALS, **SHARED,
                                          help="Finished trials the study holds at the end; a study started "
                                               "before runs only the ones it lacks."),
           "steps": cols[1].number_input("Steps per trial", *n[SEARCH_STEPS], step=50, key=SEARCH_STEPS, **SHARED),
           "sampler": cols[2].selectbox("Sampler", SAMPLERS, format_func=SAMPLER_LABELS.get, key=SEARCH_SAMPLER,
                                        **SHARED, help="TPE learns from the trials so far; grid tries every "
                                                       "combination of listed values."),
           "pruner": cols[3].selectbox("Pruning", PRUNERS, format_func=PRUNER_LABELS.get, key=SEARCH_PRUNER,
                                       **SHARED, help="Stop poor trials early, from their validation metric "
                                                      "during training."),
           "seed": cols[4].number_input("Seed", *n[SEARCH_SEED], key=SEARCH_SEED, **SHARED,
                                        help="The sampler's; trial n trains with seed × 10000 + n.")}
    return out


def build_spec(fields, specs, run: dict, owner: str, own: Task | None = None,
               control: dict | None = None) -> tuple[SearchSpec | None, str | None]:
    """(spec, None) or (None, what is wrong and what is valid); on `own` pairs (ui.own_data) instead of the
    task when given. The study is this visitor's own: its name starts with the owner, so the same settings
    resume it and nobody else adds to it."""
    preset, data = (own_data.OWN, own.cfg.text) if own is not None else (state_value(f"{CFG}_task", DEFAULT_TASK), "")
    try:
        check_search_work(int(run["trials"]), int(run["steps"]), parse_space(specs))   # limits.MAX_SEARCH_WORK
        spec = SearchSpec(task=preset, data=data, space=tuple(specs), trials=int(run["trials"]),
                          steps=int(run["steps"]), sampler=run["sampler"], pruner=run["pruner"], seed=int(run["seed"]),
                          base=base_of_widgets(fields), **metric_fields(control or {}))
        return spec.replace(study=f"u{owner[:8]}-{spec.study_name()}"), None
    except ValueError as err:
        return None, str(err)


def metric_fields(control: dict) -> dict:
    """The controls as SearchSpec's fields: one objective as `metric` (the study the CLI's --metric makes)."""
    metrics = tuple(control.get("metrics", ()))
    one = len(metrics) == 1 and metrics[0] in METRICS
    return {"constraints": tuple(control.get("constraints", ())), "enqueue": tuple(control.get("enqueue", ())),
            **({"metric": metrics[0]} if one else {"metrics": metrics} if metrics else {})}


def command_line(spec: SearchSpec) -> str:
    """The same search from a terminal, every fixed setting with it (its own study: the app's is this
    visitor's)."""
    space = " ".join(f"--space {shlex.quote(d.spec())}" for d in spec.dims().values())
    fixed = "".join(f" --set {shlex.quote(f'{k}={v}')}" for k, v in spec.settings().items() if k != "steps")
    extra = "".join(f" --{k} {v}" for k, v, default in (("sampler", spec.sampler, "tpe"),
                                                        ("pruner", spec.pruner, "none"), ("seed", spec.seed, 0))
                    if v != default)
    extra += "".join(f" --metric {shlex.quote(m)}" for m in (spec.metrics or ([spec.metric] if spec.metric else [])))
    extra += "".join(f" --constraint {shlex.quote(c)}" for c in spec.constraints)
    extra += "".join(f" --enqueue {shlex.quote(e.replace(' ', ''))}" for e in spec.enqueue if isinstance(e, str))
    own = getattr(st.session_state.get(SEARCH_DATA), "name", "FILE.tsv")
    task = f"--data {shlex.quote(own)}" if spec.data else f"--task {spec.task}"
    return f"python -m explorer search {task} --trials {spec.trials} {space} --steps {spec.steps}{fixed}{extra}"


__all__ = ["SEARCH_DATA", "SEARCH_FIELDS", "SEARCH_SPACE", "SEARCH_TRIALS", "SEARCH_STEPS", "SEARCH_SAMPLER",
           "SEARCH_PRUNER", "SEARCH_SEED", "SEARCH_METRICS", "SEARCH_CONSTRAINTS", "SEARCH_ENQUEUE", "NUMBERS",
           "base_of_widgets", "space_widgets", "control_widgets", "run_widgets", "build_spec", "metric_fields",
           "command_line"]
