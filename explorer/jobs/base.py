"""What every background job shares: a worker thread, the lock its readers share with it, a stop event, a
status and a message; and, for a pooled job, its turn in the server-wide slot pool (explorer/jobs/slots.py).

A job subclasses `Job` and says what it does in a slot (`_work`), what that outcome means (`_outcome`), and,
where it differs, what a failure means (`_failure`) and what its end records (`_end`):

    job.start()            # returns at once; "queued" (pooled) or "running"
    job.status, job.message, job.ended, job.alive          # from any thread
    job.stop(); job.close(); job.join(timeout)

Nothing here touches Streamlit: a page keeps its job in the session and polls it.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import torch

from explorer.jobs.slots import background_priority, slot_pool

log = logging.getLogger(__name__)

STATUSES = ("idle", "queued", "running", "stopped", "finished", "diverged", "failed")
ENDED = ("stopped", "finished", "diverged", "failed")


class Job:
    """A job's shared machinery. `kind` names its thread and its log lines; `pooled` jobs wait for a slot
    (`waiting` is what a queued job's message says) and work with `threads` torch threads."""

    kind = "job"
    pooled = True
    waiting = "waiting for a free slot"
    name = ""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._status, self._message = "idle", ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, status={self.status!r})"

    # -- read side (any thread) ----------------------------------------------------------------
    def _get(self, attr: str):
        with self._lock:
            return getattr(self, attr)

    status = property(lambda self: self._get("_status"), doc="one of STATUSES")
    message = property(lambda self: self._get("_message"), doc="human text for the UI, never a traceback")

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def queue_position(self) -> int | None:
        """1-based while the job waits for a slot, else None."""
        return slot_pool().position(self) if self.pooled else None

    # -- control (the session's thread) --------------------------------------------------------
    def stop(self, wait: bool = False, timeout: float = 5.0) -> bool:
        """Ask the worker to stop at its next check (a queued job leaves the queue at once). With wait, join
        up to timeout seconds. Returns True once the worker has ended."""
        self._stop.set()
        if self.pooled:
            slot_pool().withdraw(self)
        if wait and self._thread is not threading.current_thread():
            return self.join(timeout)
        return not self.alive

    def close(self, timeout: float = 5.0) -> bool:
        """Stop and join: call when the session ends."""
        return self.stop(wait=True, timeout=timeout)

    def join(self, timeout: float | None = None) -> bool:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.alive

    def _launch(self) -> None:
        """Start the worker thread: queued in the slot pool (which may grant a slot at once), or running."""
        self._stop.clear()
        with self._lock:
            self._status, self._message = self._launched()
        self._thread = threading.Thread(target=self._run, name=f"{self.kind}-{self.name}", daemon=True)
        if self.pooled:
            slot_pool().enqueue(self)
        self._thread.start()

    def _launched(self) -> tuple[str, str]:
        """(status, message) as the worker starts (called holding the job's lock)."""
        return ("queued", self.waiting) if self.pooled else ("running", "")

    # -- the worker ----------------------------------------------------------------------------
    threads = 1  # torch threads of a pooled job: a slot is one core

    def _granted(self) -> None:  # called by the pool, holding its lock
        with self._lock:
            self._status, self._message = "running", ""

    def _work(self) -> Any:
        """The job itself, in its slot; it checks self._stop as often as it can."""
        raise NotImplementedError

    def _outcome(self, done: Any) -> tuple[str, str]:
        """(status, message) of what `_work` returned, once the slot is given back."""
        raise NotImplementedError

    def _failure(self, exc: Exception) -> tuple[str, str]:
        """(status, message) of an exception in the job: its text, never a traceback (that goes to the log)."""
        log.warning("%s job %r failed", self.kind, self.name, exc_info=True)
        return "failed", str(exc) or type(exc).__name__

    def _end(self, status: str, message: str, done: Any) -> None:
        """Record the end; last of all, so that once a job has ended it may be launched again."""
        with self._lock:
            self._status, self._message = status, message

    def _run(self) -> None:
        status, message, done = "failed", "", None
        pool = slot_pool() if self.pooled else None
        try:
            if pool is not None:
                torch.set_num_threads(self.threads)  # per OS thread: must happen in the worker
                background_priority()
            if pool is None or pool.wait_turn(self, self._stop):
                try:
                    done = self._work()
                finally:
                    if pool is not None:
                        pool.release(self)  # the next job may start while this one saves
                status, message = self._outcome(done)
            else:
                status, message = "stopped", f"stopped while {self.waiting}"
        except Exception as exc:
            status, message = self._failure(exc)
        finally:
            if pool is not None:
                pool.release(self)
            self._end(status, message, done)


__all__ = ["STATUSES", "ENDED", "Job"]
