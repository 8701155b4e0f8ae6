"""One experiment running in a background thread, in the same server-wide slot pool as training.

    job = ExperimentJob("pe-order", {"seeds": 3})    # params: None, a dict of overrides or a params instance
    job.start()                                      # returns at once; status "queued" or "running"
    job.progress()                                   # fraction, text, elapsed seconds, queue position
    job.stop()                                       # the seeds that finished are kept: job.result.partial
    job.result, job.status, job.message              # once ended

A page keeps the job in its session and polls it; nothing here touches Streamlit. An experiment is a
one-core job (one torch thread, the sweep's cells in turn), so a class pressing Run together queues
for the same few slots as its training runs instead of oversubscribing the machine's cores.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from explorer.experiments import EXPERIMENTS, Result, SerialExecutor, Stopped, refusal_of, run_cached
from explorer.experiments.runner import RESULT_FILE, cache_path, resolve_params
from explorer.jobs.base import Job
from explorer.jobs.ray_training import address
from explorer.search.ray_cluster import RayExecutor


@dataclass(frozen=True)
class ExperimentProgress:
    fraction: float              # 0..1 of the whole experiment
    text: str                    # what is running now ("seed 1, with PE (3/10) · step 40/300")
    elapsed_s: float             # since the slot was granted
    queue_position: int | None   # 1-based while queued, else None


class ExperimentJob(Job):
    """Runs `run_cached(name, params, refresh=refresh)` in a daemon thread once a pool slot is free.
    The parameters are checked here, so a bad value (or more work than MAX_WORK) raises ValueError
    before anything starts. It never ends "diverged"."""

    kind = "experiment"

    def __init__(self, name: str, params=None, refresh: bool = False, cache_dir: str | Path | None = None) -> None:
        if name not in EXPERIMENTS:
            raise ValueError(f"no experiment named {name!r}; choose one of {', '.join(EXPERIMENTS)}")
        self.name, self.refresh, self.cache_dir = name, refresh, cache_dir
        self.params = resolve_params(EXPERIMENTS[name], params)   # ValueError names the field
        refused = refusal_of(name, self.params)                   # more work than one slot may take
        if refused:
            raise ValueError(refused)
        super().__init__()
        self.ray_address = address()
        self.pooled = self.ray_address is None   # on a cluster its CPUs are the queue, not this server's slots
        self._fraction, self._text = 0.0, ""
        self._started: float | None = None
        self._finished: float | None = None
        self._result: Result | None = None

    # -- read side (any thread) ----------------------------------------------------------------
    result = property(lambda self: self._get("_result"), doc="the Result (partial if stopped), or None")

    def progress(self) -> ExperimentProgress:
        position = self.queue_position()
        with self._lock:
            start, end = self._started, self._finished
            elapsed = 0.0 if start is None else (end or time.monotonic()) - start
            return ExperimentProgress(self._fraction, self._text, elapsed, position)

    # -- control -------------------------------------------------------------------------------
    def start(self) -> None:
        if self.status != "idle":
            raise RuntimeError(f"experiment job {self.name!r} was already started (status {self.status})")
        self._launch()

    # -- the worker ----------------------------------------------------------------------------
    def _granted(self) -> None:  # called by the pool, holding its lock
        with self._lock:
            self._status, self._message, self._started = "running", "", time.monotonic()

    def _report(self, fraction: float, text: str) -> None:
        with self._lock:
            self._fraction, self._text = fraction, text

    def _work(self) -> Result:
        # on the app's Ray cluster the runs go there (RayUnavailable names an address that does not answer)
        executor = SerialExecutor() if self.ray_address is None else RayExecutor(self.ray_address)
        try:
            return run_cached(self.name, self.params, progress=self._report, stop=self._stop,
                              cache_dir=self.cache_dir, executor=executor, refresh=self.refresh)
        finally:
            executor.close()

    def _outcome(self, result: Result) -> tuple[str, str]:
        if result.partial:
            return "stopped", "stopped early: the table holds the seeds that finished"
        return "finished", f"finished in {result.seconds:.0f} s"

    def _failure(self, exc: Exception) -> tuple[str, str]:
        if isinstance(exc, Stopped):
            return "stopped", "stopped before the first run finished: nothing to show"
        return super()._failure(exc)

    def _end(self, status: str, message: str, result: Result | None) -> None:
        with self._lock:  # readers see the result and the status together
            self._result, self._status, self._message = result, status, message
            self._finished = time.monotonic()
            if status == "finished":
                self._fraction = 1.0


def cache_created(name: str, params=None, cache_dir: str | Path | None = None) -> datetime | None:
    """When the cached result of this configuration was computed (None if there is none)."""
    try:
        meta = json.loads((cache_path(name, params, cache_dir) / RESULT_FILE).read_text())
        return datetime.fromisoformat(meta["created"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


__all__ = ["ExperimentJob", "ExperimentProgress", "cache_created"]
