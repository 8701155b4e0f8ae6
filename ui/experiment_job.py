"""Glue between the Experiments page and `explorer.jobs.experiment`: the session's experiment job
(started and stopped by button callbacks, polled by a fragment), its line in the sidebar, and reading
a result from the job or the shared cache.

The job's worker thread makes no Streamlit call. Like a training run it is the visitor's, not the tab's:
`ui.session_jobs` keeps it for the owner cookie (and the session in `st.session_state[EXP_JOB]`), so a
reloaded tab shows it again, and it stops only once no tab of the browser watches it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd
import streamlit as st

from explorer.analysis.evidence import equivalence_text, fmt, fmt_interval
from explorer.experiments import EXPERIMENTS, Result, cache_key, cache_path, cached
from explorer.jobs.experiment import ExperimentJob
from explorer.jobs.slots import pool_counts
from ui.frame import live_fragment
from ui.session_jobs import EXPERIMENT, adopt, keep

EXP_JOB = "experiment_job"        # this visitor's ExperimentJob (one at a time)
EXP_ERROR = "_exp_error"          # why the last Run click was refused, shown once
EXP_SHOWN = "_exp_shown"          # cache key -> (file mtime, Result): a cached result is read once per session
POLL_S = 0.5
MAX_WAITING = 6                   # a longer queue refuses new work: "try again in a minute"
MEMO_SIZE = 12                    # cached results kept per session
OUTCOME = {True: "as predicted", False: "NOT as predicted"}


def current_job() -> ExperimentJob | None:
    """This visitor's experiment: started in this tab, in another of their browser, or before a reload."""
    return adopt(EXPERIMENT, EXP_JOB)


def active(job: ExperimentJob | None) -> bool:
    return job is not None and not job.ended


def same(job: ExperimentJob | None, name: str, params) -> bool:
    return job is not None and job.name == name and job.params == params


def on_run(name: str, params, refresh: bool) -> None:
    """Button callback: start this session's experiment job (or leave a refusal for take_error)."""
    if active(current_job()):
        st.session_state[EXP_ERROR] = ("An experiment of yours is already running (in this tab or another of "
                                       "this browser): stop it first.")
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
    keep(EXPERIMENT, job)
    job.start()


def on_stop() -> None:
    job = current_job()
    if job is not None:
        job.stop()


def take_error() -> str | None:
    return st.session_state.pop(EXP_ERROR, None)


def poll(job: ExperimentJob, body: Callable[[ExperimentJob], None], was_active: bool | None = None) -> None:
    """Draw body(job) in a fragment that reruns while the job is active; when it ends, rerun the
    whole page, which then draws the result without polling. `was_active` is what the page drew its
    buttons for (default: now): a job that ended after them still reruns the page."""
    was_active = active(job) if was_active is None else was_active

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


def evidence_view(result: Result) -> pd.DataFrame | None:
    """What decides the verdict, a row per claim: the estimate, its 95% interval over seeds, n, the test."""
    if not result.evidence:
        return None
    rows = []
    for e in result.evidence:
        low, high = e.interval
        rows.append({"claim": e.claim, "measured": fmt(e.estimate, e.unit, e.difference),
                     f"{e.level:.0%} interval": "—" if math.isnan(low) else fmt_interval(low, high, e.unit,
                                                                                           e.difference),
                     "seeds": " / ".join(str(n) for n in e.n), "test": e.test,
                     "margin": "—" if e.margin is None else f"±{fmt(e.margin, e.unit, True)}",
                     "outcome": outcome(e)})
    return pd.DataFrame(rows)


def outcome(e) -> str:
    """A claim's outcome as the evidence table says it (with the equivalence test when it decided)."""
    if e.holds is not None:
        return OUTCOME[e.holds]
    if e.equivalent:
        return f"no meaningful difference: {equivalence_text(e)}"
    return f"inconclusive: {e.reason}"


def failed_cells(result: Result):
    """The sweep cells that could not run, with the reason (an invalid combination, a divergence), or None."""
    grid = result.extra.get("grid")
    if grid is None or grid.empty:
        return None
    bad = grid[grid["error"].astype(str).str.len() > 0]
    return bad[["x", "y", "seed", "error"]] if len(bad) else None
