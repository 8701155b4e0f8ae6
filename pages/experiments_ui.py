"""Glue between the Experiments page and `explorer.experiment_job`: parameter widgets built from an
experiment's params dataclass, the session's experiment job (started and stopped by button callbacks,
polled by a fragment), and reading a result from the job or the shared cache.

The job's worker thread makes no Streamlit call. It is kept in `st.session_state[EXP_JOB]` and
registered with the same session-scoped holder as training jobs, so closing the tab stops it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st

from explorer.config import POS_ENCODINGS
from explorer.experiment_job import ExperimentJob
from explorer.experiments import EXPERIMENTS, Experiment, Result, cache_key, cache_path, cached
from explorer.experiments.sweep import AXES
from explorer.slots import pool_counts
from explorer.tasks import TASK_PRESETS
from pages.frame import live_fragment
from pages.state import EXP_BUDGET, EXP_ERROR, EXP_JOB, EXP_NAME, EXP_PARAM, EXP_SHOWN
from pages.training_ui import _session_jobs  # the tab-close hook that stops a session's jobs

POLL_S = 0.5
MAX_WAITING = 6                                # a longer queue refuses new work: "try again in a minute"
LIMITS = {"seeds": 10, "steps": 3000}          # a shared server: bigger budgets belong on the command line
MEMO_SIZE = 12                                 # cached results kept per session
MAX_CELLS = 36                                 # sweep cells x seeds
BUDGETS = {"full": "Full (default budget)", "quick": "Quick (tiny budget)"}
SHORT = {"pe-order": "PE and order", "pre-post-ln": "Pre-LN vs Post-LN", "label-smoothing": "Label smoothing",
         "alignment-heads": "Alignment heads", "heads": "Heads", "length": "Length", "pe-types": "PE types",
         "decoding": "Decoding", "sweep": "Sweep"}
MAIN = ("x_axis", "x_values", "y_axis", "y_values", "seeds", "steps", "metric")  # shown outside "More"
CHOICES = {"encodings": POS_ENCODINGS, "x_axis": tuple(AXES), "y_axis": tuple(AXES),
           "metric": ("val_exact", "val_token_acc"), "task": tuple(TASK_PRESETS)}
AXIS_EXAMPLES = {"d_model": (16, 32, 64), "n_heads": (1, 2, 4), "n_layers": (1, 2, 3), "d_ff": (32, 64, 128),
                 "pos_encoding": POS_ENCODINGS, "norm": ("pre", "post"), "dropout": (0.0, 0.1, 0.2),
                 "lr": (0.001, 0.003, 0.01), "steps": (100, 200, 300), "batch_size": (16, 32, 64),
                 "warmup": (0, 50, 100), "label_smoothing": (0.0, 0.1, 0.2)}
HELP = {"seeds": "Independent repetitions: each seed draws its own data and initial weights; the table "
                 "shows mean ± std over them.",
        "steps": "Training steps of every run.", "lr": "Peak learning rate.",
        "x_values": "Comma-separated values of the x axis, e.g. 16, 32, 64.",
        "y_values": "Comma-separated values of the y axis."}


# ----------------------------------------------------------------------------- parameters
def _text(values: tuple) -> str:
    return ", ".join(str(v) for v in values)


def _parse(text: str) -> tuple:
    def auto(t: str):
        for convert in (int, float):
            try:
                return convert(t)
            except ValueError:
                pass
        return t
    return tuple(auto(t.strip()) for t in text.split(",") if t.strip())


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
        return _parse(st.text_input(label, _text(default), key=key, **kw))
    if isinstance(default, bool) or isinstance(default, str):
        return st.text_input(label, str(default), key=key, **kw)
    if isinstance(default, float):
        step = 10 ** math.floor(math.log10(default)) if default > 0 else 0.01
        return st.number_input(label, value=default, step=step, format="%g", key=key, **kw)
    return st.number_input(label, value=default, step=1, key=key, **kw)


def param_widgets(exp: Experiment, budget: str) -> tuple[object | None, str | None]:
    """The experiment's parameters as widgets (the main ones in view, the rest under "More");
    returns (params, None) or (None, what is wrong and what is valid)."""
    base = exp.tiny if budget == "quick" else exp.params()
    prefix = f"{EXP_PARAM}_{exp.name}_{budget}"
    fields = [f.name for f in dataclasses.fields(exp.params)]
    main = [f for f in MAIN if f in fields] + [f for f in fields if isinstance(getattr(base, f), tuple)
                                               and f not in MAIN]
    values: dict = {}
    cols = st.columns(4)
    for i, field in enumerate(main):
        with cols[i % len(cols)]:
            values[field] = _widget(exp, base, field, prefix, values)
    with st.expander("More parameters"):
        rest = [f for f in fields if f not in main]
        cols = st.columns(4)
        for i, field in enumerate(rest):
            with cols[i % 4]:
                values[field] = _widget(exp, base, field, prefix, values)
    try:
        params = exp.make_params(values, tiny=budget == "quick")
    except (TypeError, ValueError) as err:
        return None, str(err)
    return params, refusal(params)


def refusal(params) -> str | None:
    """Why a configuration is too big for a shared server, or None."""
    for field, limit in LIMITS.items():
        if getattr(params, field, 0) > limit:
            return f"{field}={getattr(params, field)} is more than this server runs (at most {limit})"
    if hasattr(params, "x_values"):
        cells = len(params.x_values) * len(params.y_values) * params.seeds
        if cells > MAX_CELLS:
            return f"{cells} cells (x values × y values × seeds) is more than this server runs (at most {MAX_CELLS})"
    return None


def command_line(exp: Experiment, params, budget: str) -> str:
    """The CLI call that runs this configuration (and writes CSV)."""
    base = exp.tiny if budget == "quick" else exp.params()
    parts = ["python -m explorer experiment", exp.name] + (["--tiny"] if budget == "quick" else [])
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        if value != getattr(base, f.name):
            shown = ",".join(map(str, value)) if isinstance(value, tuple) else value
            parts.append(f"--set {f.name}={shown}")
    return " ".join(parts)


# ----------------------------------------------------------------------------- the job
def current_job() -> ExperimentJob | None:
    return st.session_state.get(EXP_JOB)


def active(job: ExperimentJob | None) -> bool:
    return job is not None and not job.ended


def same(job: ExperimentJob | None, name: str, params) -> bool:
    return job is not None and job.name == name and job.params == params


def on_run(name: str, params, refresh: bool) -> None:
    """Button callback: start this session's experiment job (or leave a refusal for take_error)."""
    if active(current_job()):
        st.session_state[EXP_ERROR] = "An experiment is already running in this session: stop it first."
        return
    if pool_counts()[1] >= MAX_WAITING:
        st.session_state[EXP_ERROR] = (f"The server is busy: {pool_counts()[1]} jobs are waiting for a slot. "
                                       "Try again in a minute.")
        return
    try:
        job = ExperimentJob(name, params, refresh=refresh)
    except ValueError as err:
        st.session_state[EXP_ERROR] = str(err)
        return
    st.session_state[EXP_JOB] = job
    _session_jobs().add(job)
    job.start()


def on_stop() -> None:
    job = current_job()
    if job is not None:
        job.stop()


def take_error() -> str | None:
    return st.session_state.pop(EXP_ERROR, None)


def poll(job: ExperimentJob, body: Callable[[ExperimentJob], None]) -> None:
    """Draw body(job) in a fragment that reruns while the job is active; when it ends, rerun the
    whole page, which then draws the result without polling."""
    was_active = active(job)

    def live() -> None:
        if was_active and job.ended:
            st.rerun()
        body(job)

    live_fragment(live, POLL_S if was_active else None)


def sidebar_status(page=None) -> None:
    """The sidebar's line about this session's experiment while it waits or runs, on the other pages
    (the Experiments page shows its own progress)."""
    job = current_job()
    if not active(job) or getattr(page, "url_path", None) == "experiments":
        return

    def line(job: ExperimentJob) -> None:
        with st.container(border=True):
            p = job.progress()
            if p.queue_position:
                st.markdown(f":material/hourglass_top: **Experiment waiting:** {p.queue_position} in the queue")
            elif not job.ended:
                st.progress(p.fraction, text=f"**Experiment** · {p.fraction:.0%}")
            else:
                st.markdown(f":material/science: **Experiment {job.status}**")
            st.caption(EXPERIMENTS[job.name].title)
            st.page_link("pages/experiments.py", label="Open Experiments", icon=":material/science:")

    poll(job, line)


# ----------------------------------------------------------------------------- results
def stored(name: str, params) -> Result | None:
    """The cached result of this configuration, read from disk once per session (and again only when
    the entry changes: another visitor pressed Run again)."""
    path = cache_path(name, params) / "result.json"
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    memo = st.session_state.setdefault(EXP_SHOWN, {})
    key = cache_key(name, params)
    if key not in memo or memo[key][0] != mtime:
        memo[key] = (mtime, cached(name, params))
        for old in list(memo)[:-MEMO_SIZE]:  # oldest first: a session that browses many configurations
            memo.pop(old)
    return memo[key][1]


def table_view(result: Result):
    """The table as shown: mean ± std over seeds beside what the seed predicts (its number and words)."""
    t = result.table

    def measured(m: float, s: float) -> str:
        return "—" if math.isnan(m) else f"{m:.4g} ± {s:.2g}"

    def predicted(e: float, words: str) -> str:
        number = "" if math.isnan(e) else f"{e:.4g}"
        return " · ".join(x for x in (number, words) if x) or "—"

    return t.assign(**{"measured (mean ± std over seeds)": [measured(m, s) for m, s in zip(t["mean"], t["std"])],
                       "the seed predicts": [predicted(e, w) for e, w in zip(t["expected"], t["prediction"])]})[
        ["condition", "metric", "measured (mean ± std over seeds)", "n", "the seed predicts"]]


def failed_cells(result: Result):
    """The sweep cells that could not run, with the reason (an invalid combination, a divergence), or None."""
    grid = result.extra.get("grid")
    if grid is None or grid.empty:
        return None
    bad = grid[grid["error"].astype(str).str.len() > 0]
    return bad[["x", "y", "seed", "error"]] if len(bad) else None


def fit_title(fig: go.Figure, chars: int = 58) -> go.Figure:
    """A copy whose long title breaks onto two lines: half a page is too narrow for some of them."""
    text = fig.layout.title.text or ""
    if len(text) <= chars or "<br>" in text:
        return fig
    cut = text.rfind(" ", 0, chars)
    cut = cut if cut > 0 else chars
    out = go.Figure(fig)
    top = fig.layout.margin.t if fig.layout.margin.t is not None else 60
    return out.update_layout(title_text=f"{text[:cut]}<br>{text[cut:].strip()}", margin_t=top + 22)


__all__ = ["BUDGETS", "EXPERIMENTS", "EXP_BUDGET", "EXP_JOB", "EXP_NAME", "EXP_PARAM", "LIMITS", "SHORT", "active",
           "sidebar_status", "command_line", "current_job", "failed_cells", "fit_title", "on_run", "on_stop",
           "param_widgets", "poll", "same", "stored", "table_view", "take_error"]
