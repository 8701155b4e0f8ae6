"""Glue between a browser session and its background training job, and the job's status in the
sidebar of every page.

The job is an `explorer.jobs.training.TrainingJob`: its worker thread makes no Streamlit call. It is the
visitor's, not the tab's: `ui.session_jobs` keeps it for the owner cookie, so a reloaded or reopened tab
of the same browser shows it again (and the session keeps it in `st.session_state[JOB]`). Pages poll a job
from a fragment that reruns a few times a second while the job is active; when the job ends the fragment
reruns the whole app, which draws it again without polling. A run no tab watched any more stopped and
saved itself: `stopped_run` points to it, with Resume.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import streamlit as st

from explorer.config import ModelConfig
from explorer.jobs.base import ENDED
from explorer.jobs.ray_training import follow, job_from_run, new_job
from explorer.jobs.slots import pool_counts
from explorer.jobs.training import TrainingJob
from explorer.limits import check_run
from explorer.model import build_model
from explorer.store import runs
from explorer.store.checkpoints import CheckpointError, read_meta
from explorer.store.resume import can_resume
from explorer.tasks import Task
from explorer.train_config import TrainConfig
from ui import room
from ui.frame import live_fragment
from ui.links import state_value
from ui.model_config import TASK, current_config, current_task
from ui.models import RUN, SESSION_RUNS, add_session_run, select_run
from ui.own_data import current as current_own
from ui.own_data import refusal as own_refusal
from ui.owner import owner_id
from ui.session_jobs import TRAIN, adopt, heartbeat, keep
from ui.train_settings import TRAIN_NAME, check_run_name, duration, settings_values, train_config

JOB = "train_job"                 # this visitor's TrainingJob; every page's sidebar shows its progress
_JOB_DONE = "_train_job_done"     # (job, run name) already offered in the sidebar's run list
TRAIN_ERROR = "_train_error"      # why the last Train / Resume click was refused, shown once
_LOOKED_UP = "_train_looked_up"   # this session asked the Ray cluster for the visitor's run already
POLL_S = 0.5            # the Train page's progress and numbers
CHART_POLL_S = 1.0      # its curves: a redrawn chart costs server and browser time (bench/README.md, "The app")
INSIDE_POLL_S = 4.0     # its attention and gradient heatmaps
SIDEBAR_POLL_S = 1.0    # the sidebar's progress line on other pages
QUEUE_POLL_S = 1.5      # any view of a queued run: only its place in the queue changes (see poll)
MAX_WAITING = 6         # a longer queue refuses new runs: "try again in a minute"
TRAIN_PAGE, TRAIN_URL = "pages/train.py", "train"
BUSY = "A run of yours is already training (in this tab or another of this browser): stop it first."


def current_job() -> TrainingJob | None:
    """This visitor's run: started in this tab, in another of their browser, or before a reload; with a Ray
    cluster, also one still training there from before this server restarted (looked up once a session)."""
    job = adopt(TRAIN, JOB)
    if job is None and not st.session_state.get(_LOOKED_UP):
        st.session_state[_LOOKED_UP] = True
        job = follow(owner_id())
        if job is not None:
            st.session_state[JOB] = job
    return job


def run_name(preset: str, cfg: ModelConfig, train_cfg: TrainConfig) -> str:
    """The default name, telling runs apart in the lists: task, norm, width, seed (a name used before
    gets -2, -3, ...)."""
    return runs.safe_name(f"{preset or 'run'}-{cfg.norm}LN-d{cfg.d_model}-seed{train_cfg.seed}")


def start(preset: str, cfg: ModelConfig, task: Task, train_cfg: TrainConfig, name: str | None = None) -> str | None:
    """Start a new run for this visitor, named `name` (else `run_name`); returns why it was refused, or None."""
    old = current_job()
    if old is not None and not old.ended:
        return BUSY
    _, waiting = pool_counts()
    if waiting >= MAX_WAITING:
        return (f"The server is busy: {waiting} runs are waiting for a training slot. "
                "Try again in a minute.")
    try:
        check_run(cfg, train_cfg, task)   # before the model is built: nothing over a cap is ever allocated
        model = build_model(cfg, seed=train_cfg.seed)
        job = new_job(model, task, train_cfg, name=name or run_name(preset, cfg, train_cfg), owner=owner_id())
    except ValueError as err:
        return str(err)
    st.session_state[JOB] = job
    keep(TRAIN, job)
    job.start()
    return None


# Button callbacks. They run before the script, read the widgets' values from session state (so a
# value typed just before the click counts) and leave a refusal for `take_error()` to show.
def on_train() -> None:
    own = current_own()  # the Train page's own data, checked as it arrived
    task = own[0] if own else current_task()
    cfg, err = current_config(task=task)
    train_cfg, train_err = train_config(settings_values())
    name, name_err = check_run_name(state_value(TRAIN_NAME, ""))
    name = name or room.run_name()   # in a class's room: named after the student
    error = own_refusal() or err or train_err or name_err
    st.session_state[TRAIN_ERROR] = error or start(own[1] if own else state_value(TASK, ""), cfg, task, train_cfg, name)


def resume_saved(name: str, more: int) -> str | None:
    """Continue saved run `name` as this visitor's job (from where it stopped; a finished run trains
    `more` steps beyond its end). It saves as a run of its own. Returns why it was refused, or None."""
    old = current_job()
    if old is not None and not old.ended:
        return BUSY
    _, waiting = pool_counts()
    if waiting >= MAX_WAITING:
        return f"The server is busy: {waiting} runs are waiting for a training slot. Try again in a minute."
    try:
        job = job_from_run(name, owner=owner_id())  # a copy of anyone's run, this visitor's own
        job.resume(extra_steps=more if job.status == "finished" else None)
    except (ValueError, RuntimeError, OSError, CheckpointError) as err:
        return f"Run {name!r} cannot resume: {err}"
    st.session_state[JOB] = job
    keep(TRAIN, job)
    return None


def on_resume_saved(key: str, more: int) -> None:
    """Button callback: resume the saved run picked in the select box under `key`."""
    name = st.session_state.get(key)
    if name:
        st.session_state[TRAIN_ERROR] = resume_saved(name, more)


def stopped_run() -> runs.RunInfo | None:
    """This visitor's newest saved run if it stopped before its last step and can resume: the run a closed
    tab (or Stop) left, to point to when no run of theirs is here."""
    me = owner_id()
    info = next((r for r in runs.list_runs() if r.owner == me), None)
    if info is None or info.steps >= int(info.train.get("steps", 0)) or not can_resume(info.path):
        return None
    try:
        return info if read_meta(info.path).get("status") == "stopped" else None  # not diverged
    except (OSError, CheckpointError):
        return None


def stopped_pointer(info: runs.RunInfo) -> None:
    """Where this visitor's run is after its tab closed: "Your run X stopped at step N of M", with Resume."""
    st.info(f"Your run `{info.name}` stopped at step {info.steps:,} of {int(info.train['steps']):,}. **Resume** "
            "continues it from there, as a run of its own.", icon=":material/pause_circle:")
    st.button("Resume", key="train_resume_stopped", icon=":material/resume:", on_click=on_resume_run,
              args=(info.name,), help="Continue exactly where it stopped; the saved run stays as it is.")


def on_resume_run(name: str) -> None:
    """Button callback: resume this visitor's stopped run `name` (stopped_pointer)."""
    st.session_state[TRAIN_ERROR] = resume_saved(name, 0)


def on_stop() -> None:
    job = current_job()
    if job is not None:
        job.stop()


def on_resume(extra_steps: int | None = None) -> None:
    job = current_job()
    if job is None:
        return
    try:
        job.resume(extra_steps=extra_steps)
    except (RuntimeError, ValueError) as err:
        st.session_state[TRAIN_ERROR] = str(err)
        return
    keep(TRAIN, job)  # watched afresh, in case the registry forgot the ended job


def take_error() -> str | None:
    return st.session_state.pop(TRAIN_ERROR, None)


def offered_run(job: TrainingJob) -> str | None:
    """The name under which the ended job's model is offered in the sidebar, once it is (and until
    the run is deleted)."""
    done = st.session_state.get(_JOB_DONE)
    if done is None or done[0] is not job or done[1] not in st.session_state.get(SESSION_RUNS, {}):
        return None
    return done[1]


def finalize(job: TrainingJob) -> None:
    """Once a job has ended, offer a copy of its model as a run in the sidebar (once per save).
    A copy, because Resume trains the job's own model again in place."""
    if not job.ended or not job.history():
        return
    name = job.run_name or job.name
    done = st.session_state.get(_JOB_DONE)
    if done is not None and done[0] is job and done[1] == name:
        return
    add_session_run(name, copy.deepcopy(job.model).eval(), job.model.cfg, job.task, job.history_frame())
    if done is not None and done[0] is job:  # a resumed run was saved again under a new name
        st.session_state.get(SESSION_RUNS, {}).pop(done[1], None)
        if st.session_state.get(RUN) == done[1]:
            select_run(name)
    st.session_state[_JOB_DONE] = (job, name)


def poll(job: TrainingJob, body: Callable[[TrainingJob], None], every: float = POLL_S,
         drawn: str | None = None) -> None:
    """Draw body(job) in a fragment that reruns every `every` seconds while the job is active.
    `drawn` is the status the page drew its buttons for (default: now): a job that ended after them
    still reruns the app, which redraws them.
    When it ends, offer its run and rerun the whole app: that draws the fragment without polling.
    A queued job polls every QUEUE_POLL_S at most and reruns the app once it leaves the queue, which
    draws it at the running pace: many waiting tabs polling fast take the GIL from the run that trains
    (bench/README.md, "Queued tabs")."""
    drawn = job.status if drawn is None else drawn

    def live() -> None:
        now = job.status
        if now in ENDED and drawn not in ENDED:
            finalize(job)
            st.rerun()
        if drawn == "queued" and now != "queued":
            st.rerun()
        body(job)

    live_fragment(live, None if drawn in ENDED else max(every, QUEUE_POLL_S) if drawn == "queued" else every)


def progress_text(job: TrainingJob) -> str:
    p = job.progress()
    rate = f"{p.steps_per_s:.1f} steps/s" if p.steps_per_s else "measuring speed…"
    eta = f" · ETA {duration(p.eta_s)}" if job.status == "running" and p.eta_s is not None else ""
    return f"Step {p.step:,} / {p.total:,} · {rate}{eta}"


def job_status(page=None) -> None:
    """The sidebar's line about this session's run, on every page (app.py draws it with the page
    about to run). On the Train page it does not poll: the page's own live view does, and reruns
    the app when the job ends. It also tells the server this tab still watches the visitor's jobs."""
    job = current_job()   # first: a run followed from the Ray cluster just now is watched by the heartbeat too
    heartbeat()
    if job is None:
        return
    if job.ended:
        finalize(job)
    if getattr(page, "url_path", None) == TRAIN_URL:
        _sidebar_status(job, live=False)
    else:
        poll(job, _sidebar_status, SIDEBAR_POLL_S)


def _sidebar_status(job: TrainingJob, live: bool = True) -> None:
    status = job.status
    with st.container(border=True):
        if status == "queued":
            p = job.progress()
            st.markdown(f":material/hourglass_top: **Waiting:** position {p.queue_position or 1} in the queue")
        elif status == "running" and not live:
            st.markdown(":material/model_training: **Training** · progress on this page")
        elif status == "running":
            p = job.progress()
            st.progress(p.fraction, text=f"**Training** · {progress_text(job)}")
        else:
            icon = {"finished": ":material/check_circle:", "stopped": ":material/pause_circle:"}.get(
                status, ":material/error:")
            st.markdown(f"{icon} **Run {status}** at step {job.progress().step:,}")
        st.caption(job.name)
        if live:
            st.page_link(TRAIN_PAGE, label="Open Train", icon=":material/model_training:")
