"""Per-session background training: a `TrainingJob` drives `train_steps` in a daemon thread.

    job = TrainingJob(model, task, train_cfg)        # raises ValueError if model and task disagree
    job.start()                                      # returns at once; status "queued" or "running"
    job.progress(), job.history_frame(), job.latest_snapshot()   # poll from any thread
    job.stop(); job.resume(extra_steps=200); job.close()

The Train page keeps one job per session in st.session_state and polls it; nothing here touches
Streamlit. The worker appends under a lock and readers get copies, so a poll never sees a torn list.
The server-wide slot pool (explorer/jobs/slots.py) caps how many jobs train at once; the others wait in a
FIFO queue. `limits.check_run` refuses, before anything starts, runs over the caps or too big for a laptop CPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
from torch import nn

from explorer.evaluation import AttentionSnapshot
from explorer.jobs.base import Job
from explorer.limits import check_run
from explorer.store.runs import MAX_NAME, delete_run, open_for_resume, safe_name, save_run, wall_of
from explorer.tasks import Task
from explorer.train_config import TrainConfig
from explorer.training import StepMetrics, new_state, train_steps

log = logging.getLogger(__name__)

RATE_WINDOW = 20                 # steps/s is measured over the last this-many steps


@dataclass(frozen=True)
class Progress:
    step: int                    # steps completed
    total: int                   # steps planned
    steps_per_s: float | None    # over the last RATE_WINDOW steps of the current segment
    eta_s: float | None          # None until a rate is known
    elapsed_s: float             # training seconds so far, across resumes
    queue_position: int | None   # 1-based while queued, else None

    @property
    def fraction(self) -> float:
        return min(1.0, self.step / self.total) if self.total else 0.0


class TrainingJob(Job):
    """One training run in a background thread. `on_update(job)` is called from the worker after
    every step (an exception in it fails the job) and once when the job ends: keep it quick and
    make no Streamlit calls in it. Use the model for inference only while the job is not running."""

    kind, waiting = "train", "waiting for a free training slot"

    def __init__(self, model: nn.Module, task: Task, train_cfg: TrainConfig, name: str | None = None,
                 on_update: Callable[[TrainingJob], None] | None = None, owner: str | None = None) -> None:
        self.model, self.task, self.on_update, self.owner = model, task, on_update, owner  # owner: of its runs
        self.name = safe_name(name or f"{task.name}-d{model.cfg.d_model}-seed{train_cfg.seed}")
        self.state = new_state(model, task, train_cfg)  # ValueError now if model and task disagree
        super().__init__()
        self._cfg, self._run_name = train_cfg, None
        self._history: list[StepMetrics] = []
        self._snapshots: list[AttentionSnapshot] = []
        self._columns: dict[str, list] = {}  # history_frame's columns, extended as steps arrive
        self._columns_lock = threading.Lock()
        self._saved_len = 0  # len(history) at the last save
        self._step = self.state.step  # steps completed, as far as readers have been told
        self._window: deque[tuple[float, int]] = deque(maxlen=RATE_WINDOW + 1)
        self._wall, self._began = 0.0, 0.0  # clock seconds in _work, across resumes (the run's wall time)

    @classmethod
    def from_run(cls, name: str, on_update: Callable[[TrainingJob], None] | None = None,
                 owner: str | None = None, **options) -> TrainingJob:
        """A job that continues saved run `name` exactly where it stopped (`resume` it). It saves as a
        run of its own, `owner`'s; the saved run stays as it is. ValueError (or FileNotFoundError) says why not.
        `options` go to the class (a RayTrainingJob's address)."""
        model, task, cfg, state, meta = open_for_resume(name)
        job = cls(model, task, cfg, name=name, on_update=on_update, owner=owner, **options)
        job.state = state
        job._history = list(state.history)
        job._step = state.step
        job._status = "finished" if state.step >= cfg.steps else "stopped"
        job._message = f"continues run '{name}' from step {state.step:,}"
        job._saved_len = len(state.history)  # on disk already, as the source run
        job._wall = wall_of(meta)
        return job

    def __repr__(self) -> str:
        return f"TrainingJob({self.name!r}, status={self.status!r}, step={self.state.step}/{self.train_cfg.steps})"

    # -- read side (any thread) ----------------------------------------------------------------
    run_name = property(lambda self: self._get("_run_name"), doc="the saved run's name, once saved")
    train_cfg = property(lambda self: self._get("_cfg"), doc="the config in use (resume may extend steps)")
    threads = property(lambda self: self.train_cfg.threads, doc="torch threads of the worker")

    def history(self) -> list[StepMetrics]:
        with self._lock:
            return list(self._history)

    def history_frame(self) -> pd.DataFrame:
        """The metrics, a row per step. The columns are kept and extended with the new steps only: the
        Train page asks for this table a few times a second while the job trains, and rebuilding every row
        held the GIL, which the training thread waited for (bench/README.md, "Job history")."""
        with self._columns_lock:
            with self._lock:
                new = self._history[len(self._columns.get("step", ())):]
            for rec in new:
                for name, value in rec.to_row(self.state.layer_labels).items():
                    self._columns.setdefault(name, []).append(value)
            if not self._columns:
                names = [f.name for f in dataclasses.fields(StepMetrics) if f.name not in ("grad_norms", "snapshot")]
                return pd.DataFrame(columns=names)
            return pd.DataFrame(self._columns)  # copies the lists: the caller's table is its own

    def snapshots(self) -> list[AttentionSnapshot]:
        with self._lock:
            return list(self._snapshots)

    def latest_snapshot(self) -> AttentionSnapshot | None:
        with self._lock:
            return self._snapshots[-1] if self._snapshots else None

    def progress(self) -> Progress:
        position = self.queue_position()
        with self._lock:
            step, total = self._step, self._cfg.steps
            rate = None
            if len(self._window) >= 2:
                (t0, s0), (t1, s1) = self._window[0], self._window[-1]
                rate = (s1 - s0) / (t1 - t0) if t1 > t0 and s1 > s0 else None
            elapsed = self._history[-1].elapsed if self._history else 0.0
        eta = 0.0 if step >= total else (total - step) / rate if rate else None
        return Progress(step, total, rate, eta, elapsed, position)

    # -- control (the session's thread) ----------------------------------------------------------
    def start(self) -> None:
        if self.status != "idle":
            raise RuntimeError(f"job {self.name!r} was already started (status {self.status}); use resume()")
        self._check(self.train_cfg)
        self._launch()

    def resume(self, extra_steps: int | None = None) -> None:
        """Continue a stopped or finished run from where it is, optionally with more steps."""
        status, cfg = self.status, self.train_cfg
        if status not in ("stopped", "finished"):
            raise RuntimeError(f"job {self.name!r} is {status}; only a stopped or finished job can resume"
                               + (" (start a new job with a lower lr)" if status == "diverged" else ""))
        if extra_steps is not None:
            if not isinstance(extra_steps, int) or isinstance(extra_steps, bool) or extra_steps < 1:
                raise ValueError(f"extra_steps={extra_steps!r} must be a whole number >= 1")
            cfg = cfg.replace(steps=cfg.steps + extra_steps)
        if self.state.step >= cfg.steps:
            raise RuntimeError(f"job {self.name!r} already trained its {cfg.steps} steps; pass extra_steps")
        self._check(cfg)
        with self._lock:
            self._cfg = cfg
        self._launch()

    # -- the worker ----------------------------------------------------------------------------
    def _check(self, cfg: TrainConfig) -> None:
        """ValueError (the Train page's message) unless the steps still to train fit the limits."""
        check_run(self.model.cfg, cfg.replace(steps=cfg.steps - self.state.step), self.task)

    def _outcome(self, done: tuple[str, str]) -> tuple[str, str]:
        outcome, reason = done
        self._wall += time.monotonic() - self._began
        return outcome, self._save_message(outcome, reason)

    def _end(self, status: str, message: str, done) -> None:
        super()._end(status, message, done)
        if self.on_update is not None:
            try:
                self.on_update(self)
            except Exception:
                log.warning("on_update of job %r failed", self.name, exc_info=True)

    def _work(self) -> tuple[str, str]:
        self._began = time.monotonic()  # the wall time of this segment ends in _outcome, before the save
        cfg, state = self.train_cfg, self.state
        with self._lock:
            self._window.clear()
            self._window.append((time.monotonic(), state.step))
        steps = train_steps(self.model, self.task, cfg, state)
        try:
            while not self._stop.is_set():
                rec = next(steps, None)
                if rec is None:
                    break
                self._append(rec)
                if rec.stopped:
                    return "diverged", rec.stopped
        finally:
            steps.close()
            self.model.eval()  # ready for inspection; train_steps switches back on resume
        if state.step >= cfg.steps:
            return "finished", f"finished {cfg.steps} steps"
        return "stopped", f"stopped at step {state.step} of {cfg.steps}"

    def _append(self, rec: StepMetrics) -> None:
        """A new step for the readers (and on_update)."""
        with self._lock:
            self._history.append(rec)
            if rec.snapshot is not None:
                self._snapshots.append(rec.snapshot)
            if rec.stopped is None:
                self._step = rec.step
                self._window.append((time.monotonic(), rec.step))
        if self.on_update is not None:
            self.on_update(self)

    def _save_message(self, outcome: str, reason: str) -> str:
        """Save the run if it has steps not yet on disk; the message says where, or why not."""
        if len(self.history()) <= self._saved_len:
            return reason
        try:
            return f"{reason}; saved as run '{self._save(outcome)}'"
        except Exception as exc:
            log.warning("saving job %r failed", self.name, exc_info=True)
            return f"{reason}; saving the run failed: {exc}"

    def _extra(self, outcome: str) -> dict:
        """What the saved run's meta.json records of how the run ended."""
        return {"status": outcome}

    def _save(self, outcome: str) -> str:
        """runs.save_run cannot overwrite a run, so a later save takes a "-step<N>" name and the
        superseded run is deleted only once the new one is safely on disk."""
        history, old = self.history(), self.run_name
        suffix = "" if old is None else f"-step{self.state.step}"
        info = save_run(self.name[:MAX_NAME - len(suffix)] + suffix, self.model, self.task.cfg, self.train_cfg,
                        history, extra=self._extra(outcome), owner=self.owner, state=self.state,
                        wall_seconds=self._wall)
        with self._lock:
            self._run_name, self._saved_len = info.name, len(history)
        if old is not None and old != info.name:
            with contextlib.suppress(OSError):  # already deleted on the Runs page, say
                delete_run(old)
        return info.name


__all__ = ["RATE_WINDOW", "Progress", "TrainingJob"]
