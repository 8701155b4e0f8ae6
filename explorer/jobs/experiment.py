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
import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import torch

from explorer.experiments import EXPERIMENTS, Result, SerialExecutor, Stopped, refusal_of, run_cached
from explorer.experiments.runner import RESULT_FILE, cache_path, resolve_params
from explorer.jobs.slots import background_priority, slot_pool

log = logging.getLogger(__name__)

STATUSES = ("idle", "queued", "running", "stopped", "finished", "failed")
ENDED = ("stopped", "finished", "failed")


@dataclass(frozen=True)
class ExperimentProgress:
    fraction: float              # 0..1 of the whole experiment
    text: str                    # what is running now ("seed 1, with PE (3/10) · step 40/300")
    elapsed_s: float             # since the slot was granted
    queue_position: int | None   # 1-based while queued, else None


class ExperimentJob:
    """Runs `run_cached(name, params, refresh=refresh)` in a daemon thread once a pool slot is free.
    The parameters are checked here, so a bad value (or more work than MAX_WORK) raises ValueError
    before anything starts."""

    def __init__(self, name: str, params=None, refresh: bool = False, cache_dir: str | Path | None = None) -> None:
        if name not in EXPERIMENTS:
            raise ValueError(f"no experiment named {name!r}; choose one of {', '.join(EXPERIMENTS)}")
        self.name, self.refresh, self.cache_dir = name, refresh, cache_dir
        self.params = resolve_params(EXPERIMENTS[name], params)   # ValueError names the field
        refused = refusal_of(name, self.params)                   # more work than one slot may take
        if refused:
            raise ValueError(refused)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._status, self._message = "idle", ""
        self._fraction, self._text = 0.0, ""
        self._started: float | None = None
        self._finished: float | None = None
        self._result: Result | None = None

    def __repr__(self) -> str:
        return f"ExperimentJob({self.name!r}, status={self.status!r})"

    # -- read side (any thread) ----------------------------------------------------------------
    def _get(self, attr: str):
        with self._lock:
            return getattr(self, attr)

    status = property(lambda self: self._get("_status"), doc="one of STATUSES")
    message = property(lambda self: self._get("_message"), doc="human text for the UI, never a traceback")
    result = property(lambda self: self._get("_result"), doc="the Result (partial if stopped), or None")

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    def progress(self) -> ExperimentProgress:
        position = slot_pool().position(self)
        with self._lock:
            start, end = self._started, self._finished
            elapsed = 0.0 if start is None else (end or time.monotonic()) - start
            return ExperimentProgress(self._fraction, self._text, elapsed, position)

    # -- control -------------------------------------------------------------------------------
    def start(self) -> None:
        if self.status != "idle":
            raise RuntimeError(f"experiment job {self.name!r} was already started (status {self.status})")
        with self._lock:
            self._status, self._message = "queued", "waiting for a free slot"
        self._thread = threading.Thread(target=self._work, name=f"experiment-{self.name}", daemon=True)
        slot_pool().enqueue(self)  # may grant a slot at once
        self._thread.start()

    def stop(self, wait: bool = False, timeout: float = 5.0) -> bool:
        """Ask the worker to stop (between training steps); a queued job leaves the queue at once.
        With wait, join up to timeout seconds. Returns True once the worker has ended."""
        self._stop.set()
        slot_pool().withdraw(self)
        if wait and self._thread is not threading.current_thread():
            return self.join(timeout)
        return not self.alive

    def close(self, timeout: float = 5.0) -> bool:
        return self.stop(wait=True, timeout=timeout)

    def join(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.alive

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- the worker ----------------------------------------------------------------------------
    def _granted(self) -> None:  # called by the pool, holding its lock
        with self._lock:
            self._status, self._message, self._started = "running", "", time.monotonic()

    def _report(self, fraction: float, text: str) -> None:
        with self._lock:
            self._fraction, self._text = fraction, text

    def _work(self) -> None:
        status, message, result = "failed", "", None
        pool = slot_pool()
        try:
            torch.set_num_threads(1)  # per OS thread; the pool's slot is one core
            background_priority()
            if pool.wait_turn(self, self._stop):
                try:
                    result = run_cached(self.name, self.params, progress=self._report, stop=self._stop,
                                        cache_dir=self.cache_dir, executor=SerialExecutor(), refresh=self.refresh)
                finally:
                    pool.release(self)
                if result.partial:
                    status, message = "stopped", "stopped early: the table holds the seeds that finished"
                else:
                    status, message = "finished", f"finished in {result.seconds:.0f} s"
            else:
                status, message = "stopped", "stopped while waiting for a free slot"
        except Stopped:
            status, message = "stopped", "stopped before the first run finished: nothing to show"
        except Exception as exc:
            log.warning("experiment job %r failed", self.name, exc_info=True)
            message = str(exc) or type(exc).__name__
        finally:
            pool.release(self)
            with self._lock:  # last: readers see the result and the status together
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


__all__ = ["STATUSES", "ENDED", "ExperimentJob", "ExperimentProgress", "cache_created"]
