"""Search: an Optuna study over the settings you pick, its trials trained in the server's worker processes
(or on a Ray cluster), watched live: history, parallel coordinates, importances, the trials and their runs;
constraints, trials enqueued by hand, several objectives with their Pareto front, and the best rerun over
seeds."""

import streamlit as st

from explorer.figures import studies as studies_figures
from explorer.figures.search import importance_bars, optimization_history, parallel_coordinates
from explorer.jobs.search import SearchView
from explorer.jobs.slots import pool_counts
from explorer.quoting import md, md_text
from ui import frame, own_data, search_confirm, search_job, search_params, train_settings, widgets
from ui.owner import owner_id

frame.require_app()  # a deep link on a fresh server: rerun through app.py

STATE_ICONS = {"finished": ":material/check_circle:", "stopped": ":material/pause_circle:",
               "failed": ":material/error:"}


def controls(spec, error: str | None) -> bool:
    """Start / Stop; returns whether they were drawn for a running search."""
    job = search_job.current_job()
    busy = search_job.active(job)  # returned: the live view reruns the page if the job ends after this
    row = st.container(horizontal=True, vertical_alignment="center")
    row.button("Start", key="search_start", type="primary", icon=":material/play_arrow:",
               on_click=search_job.on_start, args=(spec, owner_id()), disabled=busy or error is not None,
               help="Run the trials in the background; a study started before with these settings resumes.")
    row.button("Stop", key="search_stop", icon=":material/stop:", on_click=search_job.on_stop, disabled=not busy,
               help="End the running trials after their current step; the finished trials and runs are kept.")
    search_confirm.controls(row, spec, owner_id(), busy, error)
    running, waiting = pool_counts()
    row.caption(f"Server: {running} job(s) or trials training, {waiting} waiting")
    refused = search_job.take_error()
    if refused:
        st.error(md_text(refused), icon=":material/error:")
    return busy


def status(view: SearchView) -> None:
    if view.status == "running":
        queue = (f" · next trial waits for a slot (position {view.queue_position})" if view.queue_position else "")
        what = "reruns over seeds" if view.confirming else "trials"
        st.progress(view.fraction, text=f"**{view.finished} / {view.total} {what}** · {view.running} running"
                                        f"{queue} · {view.elapsed_s:.0f} s")
        st.caption(f"Trials run on {view.where}.")
    elif view.status in STATE_ICONS:
        box = st.error if view.status == "failed" else st.info
        box(md_text(view.message[:1].upper() + view.message[1:] + "."), icon=STATE_ICONS[view.status])


def _words(params: dict) -> str:
    return ", ".join(f"{k} = {v:.3g}" if isinstance(v, float) else f"{k} = {v}" for k, v in params.items())


def trial_box(trial: dict, metric: str, head: str, key: str) -> None:
    """A trial's values and settings, and its run to use or to train again (`key`: the buttons' prefix)."""
    values = trial.get("values") or {metric: trial["value"]}
    run = search_job.trial_run(trial.get("run"))
    with st.container(border=True):
        st.markdown(f"{head}: trial {trial['number']}**, "
                    + ", ".join(f"{md(k, None)} **{v:,.0f}**" if k == "params" else f"{md(k, None)} **{v:.4g}**"
                                for k, v in values.items() if v is not None)
                    + f" with {md(_words(trial['params']), None)}")
        row = st.container(horizontal=True)
        row.button("Use this model", key=f"{key}_use", icon=":material/check:", on_click=search_job.on_use,
                   args=(run.name if run else "",), disabled=run is None,
                   help="Select this trial's run in the sidebar, so every page looks inside it.")
        row.button("Train with these settings", key=f"{key}_recipe", icon=":material/model_training:",
                   on_click=search_job.on_train_recipe, args=(run,), disabled=run is None,
                   help="Load this trial's model and training settings on the Train page, as a recipe.")


def best_box(view: SearchView, metric: str) -> None:
    if view.best is not None:
        trial_box(view.best, metric, ":material/emoji_events: **Best", "search")
        search_job.recipe_loaded()


def front(view: SearchView, names: list[str], study) -> None:
    """The Pareto front (the Studies page's figure, of the search's study), its points clickable: a click picks
    the trial and offers its run and settings."""
    try:
        fig = studies_figures.pareto(study, names)
    except ValueError as why:   # no complete trial yet
        st.caption(md_text(f"The Pareto front: {why}."))
        return
    widgets.chart(fig, key=search_confirm.PARETO_CHART, on_select="rerun", selection_mode="points")
    picked = search_confirm.picked_trial(view)
    if picked is None:
        st.caption(f"{len(view.pareto)} trial(s) on the front: none is beaten on every objective. Click a point "
                   "to pick its trial.")
    else:
        trial_box(picked, names[0], ":material/ads_click: **Picked", "search_picked")


def results(view: SearchView, metric: str, minimize: bool, params: list[str], names: list[str], study) -> None:
    status(view)
    if not view.rows:
        return
    best_box(view, metric)
    search_confirm.results(view)
    if len(names) > 1:
        front(view, names, study)
    left, right = st.columns(2)
    with left:
        widgets.chart(optimization_history(view.rows, metric, minimize), key="search_history")
    with right:
        if view.importances:
            widgets.chart(importance_bars(view.importances), key="search_importance")
        else:
            st.caption("Parameter importance appears once two trials have completed with different settings.")
    widgets.chart(parallel_coordinates(view.rows, params, metric), key="search_parallel")
    st.dataframe(search_job.trials_table(view), hide_index=True, key="search_trials",
                 column_config={"run": st.column_config.LinkColumn("run", display_text=r"model_run=(.*)$"),
                                "value": st.column_config.NumberColumn(metric, format="%.4g"),
                                "seconds": st.column_config.NumberColumn("seconds", format="%.1f")})


# ------------------------------------------------------------------------------------- page
st.title("Search")
st.markdown("Pick the settings to search and their ranges; an Optuna study proposes the trials, trains each in "
            "the background and learns where to look next. Every trial is saved as a run you can open, compare "
            "and resume.")
with st.container(border=True):
    task = widgets.task_picker()
    own, refused = own_data.pairs_expander(search_params.SEARCH_DATA, "search on them instead of the task above; "
                                           "every trial's run keeps them")
    fields, specs = search_params.space_widgets()
    control = search_params.control_widgets()
    run = search_params.run_widgets()
with st.expander("Fixed settings (the ones not searched)"):
    st.caption("The model and training settings every trial shares, the same as on the Train page. A trial "
               "trains **Steps per trial** steps on one thread; d_ff follows 2 × d_model when d_model is searched.")
    widgets.config_widgets(task=own or task)
    train_settings.settings_widgets()
spec, error = search_params.build_spec(fields, specs, run, owner_id(), own, control)
if refused:
    spec, error = None, own_data.REFUSED
if error:
    st.error(f"**This search does not work.** {md_text(error)}", icon=":material/error:")
else:
    st.caption("From a terminal (the same study, every fixed setting with it): "
               f"{md(search_params.command_line(spec), None)}")
busy = controls(spec, error)

job = search_job.current_job()
if job is not None:
    metric = job.spec.objective()
    names = [n for n, _ in job.spec.objectives()]
    minimize = job.spec.objectives()[0][1] == "minimize"
    search_job.poll(job, lambda view: results(view, metric, minimize, list(job.spec.dims()), names, job.study),
                    busy)
elif spec is not None:
    st.info("No search yet in this browser. Press **Start**: trials train in the background, each in a "
            "training slot of this server, and show up here as they finish.", icon=":material/travel_explore:")
