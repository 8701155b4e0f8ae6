"""Glue between a browser session and its background training job, and the job's status in the
sidebar of every page.

The job is an `explorer.jobs.TrainingJob`: its worker thread makes no Streamlit call. The session
keeps it in `st.session_state[JOB]`, and a session-scoped resource remembers every job the tab
started so that closing the tab stops them (its `on_release` runs when the session disconnects; a tab
that reconnects within RECONNECT_GRACE_S keeps them).
Pages poll a job from a fragment that reruns a few times a second while the job is active; when the
job ends the fragment reruns the whole app, which draws it again without polling.
"""

from __future__ import annotations

import contextlib
import copy
import io
import logging
import math
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from explorer import runs
from explorer.budget import check_budget, estimate_budget
from explorer.config import ModelConfig
from explorer.jobs import ENDED, TrainingJob
from explorer.model import build_model
from explorer.runs import safe_name
from explorer.slots import pool_counts
from explorer.tasks import Task
from explorer.train_config import SCHEDULES, TrainConfig
from pages.frame import live_fragment
from pages.state import (
    _DISK_RUNS,
    _JOB_DONE,
    JOB,
    PAGE_NUMBERS,
    RUN,
    SESSION_RUNS,
    TASK,
    TRAIN_BATCH,
    TRAIN_CLIP,
    TRAIN_ERROR,
    TRAIN_FIGS,
    TRAIN_LR,
    TRAIN_SCHEDULE,
    TRAIN_SEED,
    TRAIN_SMOOTHING,
    TRAIN_STEPS,
    TRAIN_THREADS,
    TRAIN_WARMUP,
    add_session_run,
    current_config,
    current_task,
    select_run,
    state_value,
)
from pages.widgets import SHARED, human_bytes

POLL_S = 0.5            # the Train page's progress and numbers
CHART_POLL_S = 1.0      # its curves; figures cost server and browser time (see pages/train.py)
INSIDE_POLL_S = 4.0     # its attention and gradient heatmaps
SIDEBAR_POLL_S = 1.0    # the sidebar's progress line on other pages
QUEUE_POLL_S = 1.5      # any view of a queued run: only its place in the queue changes (see poll)
# A tab whose connection comes back within this keeps its runs (see _release): a browser reconnects in
# ~0.7 s. A closed tab's run must stop within 5 s, and the stop itself waits for the current step.
RECONNECT_GRACE_S = 2.5
MAX_WAITING = 6         # a longer queue refuses new runs: "try again in a minute"
EVALS_PER_RUN = 25      # validation points on the curves
SNAPSHOTS_PER_RUN = 60  # attention frames for the time-lapse
MIN_EVAL_EVERY = 5
EVAL_EXAMPLES = 200
TRAIN_PAGE, TRAIN_URL = "pages/train.py", "train"
THREAD_OPTIONS = (1, 2)  # one leaves a core for the server; two only pay on an idle machine


# ----------------------------------------------------------------------------- settings
def cadence(steps: int) -> dict:
    """How often a run of `steps` evaluates and records attention: a fixed number of points per run."""
    return dict(eval_every=max(MIN_EVAL_EVERY, math.ceil(steps / EVALS_PER_RUN)),
                snapshot_every=max(1, math.ceil(steps / SNAPSHOTS_PER_RUN)))


SETTINGS = {"steps": TRAIN_STEPS, "batch_size": TRAIN_BATCH, "lr": TRAIN_LR, "warmup": TRAIN_WARMUP,
            "schedule": TRAIN_SCHEDULE, "label_smoothing": TRAIN_SMOOTHING, "grad_clip": TRAIN_CLIP,
            "seed": TRAIN_SEED, "threads": TRAIN_THREADS}  # TrainConfig field -> widget key


def settings_values() -> dict:
    """The training settings as the widgets left them (defaults where a widget was never drawn)."""
    return {field: state_value(key, PAGE_NUMBERS[key][2] if key in PAGE_NUMBERS else SCHEDULES[0])
            for field, key in SETTINGS.items()}


def train_config(values: dict) -> tuple[TrainConfig | None, str | None]:
    """Widget values (steps, batch_size, lr, ...) -> (TrainConfig, None) or (None, what is wrong)."""
    try:
        return TrainConfig(**values, eval_examples=EVAL_EXAMPLES, **cadence(values["steps"])), None
    except (TypeError, ValueError) as err:
        return None, str(err)


def settings_widgets(columns: int = 4) -> tuple[TrainConfig | None, str | None]:
    """The training settings in a grid, bound to the URL; returns (config, None) or (None, message)."""
    n = PAGE_NUMBERS
    cols = st.columns(columns)
    values = {}
    with cols[0]:
        values["steps"] = st.number_input("Steps", *n[TRAIN_STEPS], step=50, key=TRAIN_STEPS, **SHARED,
                                          help="Optimiser updates. Small models learn the toy tasks in a few hundred.")
        values["schedule"] = st.selectbox("Schedule", SCHEDULES, key=TRAIN_SCHEDULE, **SHARED,
                                          help="After the warmup: cosine decay to zero, the paper's inverse "
                                               "square root, or a constant rate.")
    with cols[1]:
        values["batch_size"] = st.number_input("Batch size", *n[TRAIN_BATCH], step=8, key=TRAIN_BATCH, **SHARED,
                                               help="Examples per update.")
        values["label_smoothing"] = st.slider("Label smoothing", *n[TRAIN_SMOOTHING], step=0.05,
                                              key=TRAIN_SMOOTHING, **SHARED,
                                              help="Moves this much probability off the right answer in the "
                                                   "target (the paper uses 0.1).")
    with cols[2]:
        values["lr"] = st.number_input("Learning rate", *n[TRAIN_LR], step=1e-3, format="%g", key=TRAIN_LR,
                                       **SHARED, help="Peak AdamW learning rate, reached after the warmup. "
                                                      "Too high and the loss explodes.")
        values["grad_clip"] = st.number_input("Gradient clipping", *n[TRAIN_CLIP], step=0.5, key=TRAIN_CLIP,
                                              **SHARED, help="Largest total gradient norm per update; 0 = off.")
    with cols[3]:
        values["warmup"] = st.number_input("Warmup steps", *n[TRAIN_WARMUP], step=10, key=TRAIN_WARMUP, **SHARED,
                                           help="The learning rate rises linearly from 0 over these steps.")
        seed_col, threads_col = st.columns(2)
        values["seed"] = seed_col.number_input("Seed", *n[TRAIN_SEED], key=TRAIN_SEED, **SHARED,
                                               help="Initial weights, batches and dropout: the same seed "
                                                    "repeats a run exactly.")
        values["threads"] = threads_col.radio("Threads", THREAD_OPTIONS, key=TRAIN_THREADS, **SHARED,
                                              horizontal=True, help="CPU threads for this run.")
    cfg, err = train_config(values)
    if err:
        st.error(f"**These settings do not work.** {err}", icon=":material/error:")
    return cfg, err


def budget_text(cfg: ModelConfig, train_cfg: TrainConfig, task: Task) -> tuple[str, str | None]:
    """(an estimate to show, or None) and the reason the run is refused, if it is."""
    b = estimate_budget(cfg, train_cfg, task)
    estimate = (f"Estimated: about {_duration(b.run_s)} on one core · {human_bytes(b.memory_bytes)} of memory "
                f"· {b.params:,} parameters")
    try:
        check_budget(cfg, train_cfg, task)
    except ValueError as err:
        return estimate, f"Too big for this machine: {err}."
    return estimate, None


def _duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "—"
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"


# ----------------------------------------------------------------------------- the job
class _SessionJobs:
    """The jobs one browser tab started (a list: a tab starts few)."""

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        self.jobs: list[TrainingJob] = []

    def add(self, job: TrainingJob) -> None:
        self.jobs = [j for j in self.jobs if not j.ended and j is not job] + [job]


log = logging.getLogger(__name__)

# Active jobs of a connection that closed, by session id, until the session comes back for them.
_ORPHANS: dict[str | None, list[TrainingJob]] = {}
_ORPHANS_LOCK = threading.Lock()


def _session_id() -> str | None:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def _connected(session_id: str | None) -> bool:
    """Whether the session has a live connection (internal to Streamlit 1.67, not part of st.*)."""
    return session_id is not None and runtime.exists() and runtime.get_instance().is_active_session(session_id)


def _release(holder: _SessionJobs) -> None:
    """The tab's connection closed. Streamlit releases session resources on every disconnect, a network
    blip included, and resumes the same session when the browser reconnects (~1 s): stopping at once
    stopped a run at every blip. So the jobs stop after their current step RECONNECT_GRACE_S from now
    unless the session is connected again by then (and it takes them back, `take_back`). No join and
    no wait here: this runs on the server's event loop; a worker that ends saves its run as usual."""
    active = [job for job in holder.jobs if not job.ended]
    if active:
        with _ORPHANS_LOCK:
            _ORPHANS.setdefault(holder.session_id, []).extend(active)
        _watch(holder.session_id, active)


def _watch(session_id: str | None, jobs: list[TrainingJob]) -> None:
    """RECONNECT_GRACE_S from now: stop the jobs if their session is still disconnected; if it is back
    but has not rerun yet to take them (`take_back`), look again later."""
    def check() -> None:
        left = [job for job in jobs if not job.ended]
        if not left:
            return
        if _connected(session_id):
            with _ORPHANS_LOCK:
                waiting = [job for job in _ORPHANS.get(session_id, []) if job in left]
            if waiting:
                _watch(session_id, waiting)
            return
        with _ORPHANS_LOCK:  # gone: forget them, even if a rerun in flight at the close took them back
            rest = [job for job in _ORPHANS.pop(session_id, []) if job not in left]
            if rest:
                _ORPHANS[session_id] = rest
        log.warning("session %s still disconnected %.1f s after its connection closed: stopping %s",
                    session_id, RECONNECT_GRACE_S, ", ".join(str(getattr(job, "name", job)) for job in left))
        for job in left:
            job.stop()

    timer = threading.Timer(RECONNECT_GRACE_S, check)
    timer.daemon = True
    timer.start()


@st.cache_resource(scope="session", on_release=_release, show_spinner=False)
def _session_jobs() -> _SessionJobs:
    return _SessionJobs(_session_id())


def take_back() -> None:
    """After a reconnect, this session takes back the jobs its last connection left (called on every
    rerun and poll), so that closing the tab later stops them."""
    session_id = _session_id()
    if session_id not in _ORPHANS or not _connected(session_id):  # nearly always: nothing to take back
        return
    holder = _session_jobs()
    with _ORPHANS_LOCK:
        for job in _ORPHANS.pop(session_id, []):
            holder.add(job)


def current_job() -> TrainingJob | None:
    return st.session_state.get(JOB)


def run_name(preset: str, cfg: ModelConfig, train_cfg: TrainConfig) -> str:
    """Names that tell runs apart in the lists: task, norm, width, seed (runs add -2, -3 if taken)."""
    return safe_name(f"{preset or 'run'}-{cfg.norm}LN-d{cfg.d_model}-seed{train_cfg.seed}")


def start(preset: str, cfg: ModelConfig, task: Task, train_cfg: TrainConfig) -> str | None:
    """Start a new run for this session; returns why it was refused, or None."""
    old = current_job()
    if old is not None and not old.ended:
        return "A run is already training in this session: stop it first."
    _, waiting = pool_counts()
    if waiting >= MAX_WAITING:
        return (f"The server is busy: {waiting} runs are waiting for a training slot. "
                "Try again in a minute.")
    try:
        check_budget(cfg, train_cfg, task)
        model = build_model(cfg, seed=train_cfg.seed)
        job = TrainingJob(model, task, train_cfg, name=run_name(preset, cfg, train_cfg))
    except ValueError as err:
        return str(err)
    st.session_state[JOB] = job
    _session_jobs().add(job)
    job.start()
    return None


# Button callbacks. They run before the script, read the widgets' values from session state (so a
# value typed just before the click counts) and leave a refusal for `take_error()` to show.
def on_train() -> None:
    task = current_task()
    cfg, err = current_config(task=task)
    train_cfg, train_err = train_config(settings_values())
    error = err or train_err
    st.session_state[TRAIN_ERROR] = error or start(state_value(TASK, ""), cfg, task, train_cfg)


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
    _session_jobs().add(job)


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


def poll(job: TrainingJob, body: Callable[[TrainingJob], None], every: float = POLL_S) -> None:
    """Draw body(job) in a fragment that reruns every `every` seconds while the job is active.
    When it ends, offer its run and rerun the whole app: that draws the fragment without polling.
    A queued job polls every QUEUE_POLL_S at most and reruns the app once it leaves the queue, which
    draws it at the running pace: with six tabs waiting at the running pace, their reruns took the
    GIL from the one run training often enough to slow it 3-5x."""
    drawn = job.status

    def live() -> None:
        take_back()
        now = job.status
        if now in ENDED and drawn not in ENDED:
            finalize(job)
            st.rerun()
        if drawn == "queued" and now != "queued":
            st.rerun()
        body(job)

    live_fragment(live, None if drawn in ENDED else max(every, QUEUE_POLL_S) if drawn == "queued" else every)


# ----------------------------------------------------------------------------- saved runs
def delete_run(name: str) -> str | None:
    """Delete a run's folder (if it has one) and forget it in this session; returns an error or None."""
    try:
        runs.delete_run(name)
    except FileNotFoundError:
        pass  # a run of this session only
    except (OSError, ValueError) as err:
        return f"Could not delete run {name!r}: {err}"
    for key in (SESSION_RUNS, _DISK_RUNS):
        with contextlib.suppress(KeyError):
            st.session_state.get(key, {}).pop(name)
    return None


def run_archive(path: Path) -> bytes:
    """A zip of a run's folder (weights, meta.json, metrics), built in memory for a download."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(Path(path).iterdir()):
            if file.is_file() and not file.name.startswith("."):  # not a half-written temp file
                archive.write(file, f"{Path(path).name}/{file.name}")
    return buffer.getvalue()


# ----------------------------------------------------------------------------- reading a job
def progress_text(job: TrainingJob) -> str:
    p = job.progress()
    rate = f"{p.steps_per_s:.1f} steps/s" if p.steps_per_s else "measuring speed…"
    eta = f" · ETA {_duration(p.eta_s)}" if job.status == "running" and p.eta_s is not None else ""
    return f"Step {p.step:,} / {p.total:,} · {rate}{eta}"


def best_head(pattern: np.ndarray, expected: np.ndarray | None) -> tuple[int, int]:
    """(layer, head) of a snapshot (L, H, Q, K) that puts the most weight on the expected cells (Q, K),
    or, with no expectation, the most focused one (highest mean of each row's largest weight)."""
    score = (pattern * expected).sum((-2, -1)) if expected is not None else pattern.max(-1).mean(-1)  # (L, H)
    layer, head = np.unravel_index(int(np.argmax(score)), score.shape)
    return int(layer), int(head)


def reuse_figure(name: str, what: tuple, build: Callable[[], object]):
    """The figure drawn last time if it shows the same thing, else build(): a Plotly figure costs
    tens of milliseconds to build, taken from the training thread, and an attention snapshot
    changes only every few dozen steps."""
    figs = st.session_state.setdefault(TRAIN_FIGS, {})
    if name not in figs or figs[name][0] != what:
        figs[name] = (what, build())
    return figs[name][1]


def thin(history: pd.DataFrame, max_rows: int = 400) -> pd.DataFrame:
    """Evenly spaced rows of a long history, keeping every evaluated row and the last one, so a
    curve redrawn a few times a second stays cheap."""
    if len(history) <= max_rows:
        return history
    stride = math.ceil(len(history) / max_rows)
    keep = np.arange(len(history)) % stride == 0
    if "val_loss" in history.columns:
        keep |= history["val_loss"].notna().to_numpy()  # pandas 3 hands out read-only arrays: keep is ours
    keep[-1] = True
    return history[keep]


def job_status(page=None) -> None:
    """The sidebar's line about this session's run, on every page (app.py draws it with the page
    about to run). On the Train page it does not poll: the page's own live view does, and reruns
    the app when the job ends."""
    take_back()
    job = current_job()
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


__all__ = ["CHART_POLL_S", "ENDED", "INSIDE_POLL_S", "POLL_S", "SETTINGS", "best_head", "budget_text", "cadence",
           "current_job",
           "delete_run", "finalize", "job_status", "offered_run", "on_resume", "on_stop", "on_train", "poll",
           "progress_text", "reuse_figure", "run_archive", "run_name", "settings_values", "settings_widgets", "start",
           "take_error", "thin", "train_config"]
