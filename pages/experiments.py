"""Experiments: the seeds' claims, each run over several seeds and set against what the seed predicts."""

from datetime import datetime

import streamlit as st

from explorer.experiments import EXPERIMENTS
from explorer.jobs.experiment import ExperimentJob, cache_created
from explorer.jobs.slots import pool_counts
from explorer.quoting import md_text
from ui import experiment_job, experiment_params, frame, widgets

frame.require_app()  # a deep link on a fresh server: rerun through app.py

VERDICT = {"holds": (st.success, ":material/check_circle:"), "does not hold": (st.warning, ":material/report:"),
           "equivalent": (st.info, ":material/drag_handle:"), "inconclusive": (st.info, ":material/help:")}


def controls(name: str, params, error: str | None, has_result: bool) -> bool:
    """Run / Stop; returns whether they were drawn for a running experiment."""
    job = experiment_job.current_job()
    busy = experiment_job.active(job)  # returned: the live view reruns the page if the job ends after this
    row = st.container(horizontal=True, vertical_alignment="center")
    row.button("Run again" if has_result else "Run", key="exp_run", type="primary", icon=":material/play_arrow:",
               on_click=experiment_job.on_run, args=(name, params, has_result), disabled=busy or error is not None,
               help="Recompute this configuration (and replace the cached result)" if has_result else
                    "Run every seed of every condition in the background; the result is cached for the next visitor.")
    row.button("Stop", key="exp_stop", icon=":material/stop:", on_click=experiment_job.on_stop, disabled=not busy,
               help="Stop between training steps; the seeds that finished are kept.")
    running, waiting = pool_counts()
    row.caption(f"Server: {running} job(s) running, {waiting} waiting")
    refused = experiment_job.take_error()
    if refused:
        st.error(refused, icon=":material/error:")
    if busy and not experiment_job.same(job, name, params):
        st.info(f"**{EXPERIMENTS[job.name].title}** is running in this session (with other settings than "
                "these): Stop it or wait for it to finish.", icon=":material/hourglass_top:")
    return busy


def live(job: ExperimentJob) -> None:
    p = job.progress()
    if job.status == "queued":
        st.info(f"**Waiting: position {p.queue_position or 1} in the queue.** Every slot on this server is busy "
                "(training runs and experiments share them); this starts by itself when one frees up.",
                icon=":material/hourglass_top:")
    elif job.status == "running":
        st.progress(p.fraction, text=f"**{100 * p.fraction:.0f}%** · {p.text or 'starting…'} · {p.elapsed_s:.0f} s")
    elif job.status == "failed":
        st.error(f"The experiment failed: {job.message}", icon=":material/error:")
    elif job.result is None:
        st.info(job.message[:1].upper() + job.message[1:] + ".", icon=":material/pause_circle:")


def result_view(name: str, result, params) -> None:
    if result.cached:
        when = cache_created(name, params)
        stamp = f"computed {when.astimezone():%d %b %Y, %H:%M}" if isinstance(when, datetime) else "from the cache"
        st.caption(f":material/cached: **Cached result**, {stamp}, took {result.seconds:.0f} s. "
                   "**Run again** recomputes it.")
    else:
        st.caption(f":material/bolt: Computed just now in {result.seconds:.0f} s"
                   + (" (stopped early: fewer seeds than asked)." if result.partial else
                      "; cached for the next visitor."))
    box, icon = VERDICT[result.outcome]
    box(f"**Measured:** {result.verdict}", icon=icon)
    evidence = experiment_job.evidence_view(result)
    if evidence is not None:
        st.markdown("**What decides it**: each claim over seeds, with its 95% confidence interval. A claim "
                    "holds or fails only with at least 3 seeds and an interval on one side of the line. A claim "
                    "with a margin (the smallest difference that matters) otherwise concludes *no meaningful "
                    "difference* when two one-sided tests put the difference within it (its 90% interval inside "
                    "±margin); else it is inconclusive.")
        st.table(evidence, hide_index=True)
    for cell, (i, fig) in zip(widgets.grid(len(result.figures), 2), enumerate(result.figures)):
        with cell:
            widgets.chart(fig, key=f"exp_fig_{name}_{i}")
    st.markdown("**Mean ± std over seeds, beside what the seed predicts**")
    st.table(experiment_job.table_view(result), hide_index=True)
    failed = experiment_job.failed_cells(result)
    if failed is not None:
        with st.expander(f"{len(failed)} cell(s) could not run"):
            st.table(failed, hide_index=True)
    row = st.container(horizontal=True)
    row.download_button("Table (CSV)", result.table.to_csv(index=False), f"{name}-table.csv", "text/csv",
                        key="exp_csv_table", icon=":material/download:", on_click="ignore")
    row.download_button("Per-seed samples (CSV)", result.samples.to_csv(index=False), f"{name}-samples.csv",
                        "text/csv", key="exp_csv_samples", icon=":material/download:", on_click="ignore")
    frames = {"curves": result.curves, **result.extra}
    for key, table in frames.items():
        if table is not None and not table.empty:
            row.download_button(f"{key.capitalize()} (CSV)", table.to_csv(index=False), f"{name}-{key}.csv",
                                "text/csv", key=f"exp_csv_{key}", icon=":material/download:", on_click="ignore")


# ------------------------------------------------------------------------------------- page
st.title("Experiments")
st.markdown("The claims of the chapter and the notebook, each run over several seeds and set against what "
            "they predict. A result is cached per configuration, so the next visitor sees it at once.")
names = list(EXPERIMENTS)
name = st.segmented_control("Experiment", names, format_func=experiment_params.SHORT.get, required=True,
                            default=names[0], key=experiment_params.EXP_NAME, bind="query-params",
                            persist_state="session", width="stretch")
exp = EXPERIMENTS[name or names[0]]
name = exp.name

st.subheader(exp.title)
st.markdown(f"**Question.** {exp.question}")
st.markdown(f"**The seed predicts.** {exp.prediction}")
st.caption(f"Source: {exp.source}")

with st.container(border=True):
    budget = st.segmented_control("Budget", list(experiment_params.BUDGETS), format_func=experiment_params.BUDGETS.get,
                                  required=True, default="full", key=experiment_params.EXP_BUDGET,
                                  bind="query-params", persist_state="session",
                                  help="Full: the experiment's default budget (a minute or two on one core). "
                                       "Quick: a preview in seconds, too few seeds to decide.") or "full"
    if budget == "quick":
        st.caption(":material/visibility: **A preview, not a test**: one seed and a few steps show the shape of "
                   "the result in seconds, but never decide a claim. Full runs enough seeds to.")
    params, error = experiment_params.param_widgets(exp, budget)
    if name == "sweep":
        st.caption("Here the cells train one after another in one slot of this shared server; from the command "
                   "line they train in parallel across the machine's cores.")
    if error:
        st.error(f"**These parameters do not work.** {md_text(error)}", icon=":material/error:")
    else:
        if getattr(params, "data", ""):
            st.caption(f":material/dataset: On **{experiment_params.data_file(exp, budget)}**: the question is asked "
                       "of your pairs, and the seed's prediction was made for its own task.")
        st.caption(f"Command line (writes CSV): `{experiment_params.command_line(exp, params, budget)}`")

job = experiment_job.current_job()
mine = params is not None and experiment_job.same(job, name, params)
result = job.result if mine and job.ended and job.result is not None else None
if result is None and params is not None and not (mine and experiment_job.active(job)):
    result = experiment_job.stored(name, params)
busy = controls(name, params, error, result is not None and not result.partial)
if mine:
    experiment_job.poll(job, live, busy)
if result is not None:
    result_view(name, result, params)
elif not mine and params is not None:
    st.info("No result yet for this configuration. Press **Run**: it trains in the background, one core, "
            "and shows progress here.", icon=":material/science:")
