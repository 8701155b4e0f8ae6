"""The server-wide slot pool: at most MAX_CONCURRENT_JOBS jobs train at once, the others wait in a
FIFO queue. Every kind of job shares it (explorer.jobs.base.Job: TrainingJob, ExperimentJob):

    pool = slot_pool()
    pool.enqueue(job)                  # may grant a slot at once: the pool calls job._granted()
    pool.wait_turn(job, stop_event)    # in the job's worker: True once it holds a slot
    pool.release(job)                  # when it ends; pool.withdraw(job) leaves the queue
    pool_counts()                      # (jobs training, jobs waiting), for the UI
    background_priority()              # first thing in a job's worker thread: the pages come first

The pool is the only module-level state here. EXPLORER_MAX_JOBS sets the limit (default 2);
EXPLORER_JOB_NICE the jobs' CPU priority on Linux (default 10, 0 to train at the pages' priority).
"""

from __future__ import annotations

import os
import sys
import threading
from collections import deque
from typing import Protocol


def env_number(name: str, default: int | float, low: int | float, high: int | float) -> int | float:
    """The environment's number `name` (of default's type), clamped to [low, high]; default when unset or bad."""
    try:
        return min(high, max(low, type(default)(os.environ.get(name, str(default)))))
    except ValueError:  # a typo in the environment must not stop the server
        return default


MAX_CONCURRENT_JOBS = env_number("EXPLORER_MAX_JOBS", 2, 1, 1 << 16)
BACKGROUND_NICE = env_number("EXPLORER_JOB_NICE", 10, 0, 19)   # 2 jobs on 2 cores took the CPU from every rerun


def background_priority() -> None:
    """Lower the calling OS thread's CPU priority, so that on a busy server the pages' reruns get the
    cores before the training jobs do (bench/README.md, "A class in one room under load"). Linux only:
    there a thread is a task of its own; elsewhere setpriority would name a process, so nothing happens."""
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid), BACKGROUND_NICE))
    except OSError:   # a sandbox that forbids it: the job runs at the server's priority
        pass


class SlotHolder(Protocol):
    """What the pool asks of a job (a TrainingJob, an ExperimentJob: explorer/jobs/base.py): the pool calls
    `_granted()`, holding its own lock, when the job gets its slot."""

    def _granted(self) -> None: ...


class _SlotPool:
    """At most MAX_CONCURRENT_JOBS jobs train at once; the others wait first come, first served.
    Lock order: the pool's lock, then a job's (a job never calls the pool holding its own)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._waiting: deque[SlotHolder] = deque()
        self._running: set[SlotHolder] = set()

    def _grant(self) -> None:  # caller holds _cond; reads the limit now, so tests can change it
        granted = False
        while self._waiting and len(self._running) < max(1, MAX_CONCURRENT_JOBS):
            job = self._waiting.popleft()
            self._running.add(job)
            job._granted()
            granted = True
        if granted:  # waking the waiters for nothing made them wake each other in a busy loop
            self._cond.notify_all()

    def enqueue(self, job: SlotHolder) -> None:
        with self._cond:
            self._waiting.append(job)
            self._grant()

    def wait_turn(self, job: SlotHolder, stop: threading.Event) -> bool:
        """Block until job holds a slot (True) or has left the queue (False)."""
        with self._cond:
            while job not in self._running:
                if stop.is_set() or job not in self._waiting:
                    return False
                self._grant()  # the limit may have been raised meanwhile
                self._cond.wait(0.25)
            return True

    def withdraw(self, job: SlotHolder) -> None:
        with self._cond:
            if job in self._waiting:
                self._waiting.remove(job)
            self._cond.notify_all()

    def release(self, job: SlotHolder) -> None:
        with self._cond:
            self._running.discard(job)
            if job in self._waiting:
                self._waiting.remove(job)
            self._grant()

    def position(self, job: SlotHolder) -> int | None:
        with self._cond:
            return self._waiting.index(job) + 1 if job in self._waiting else None

    def counts(self) -> tuple[int, int]:
        with self._cond:
            return len(self._running), len(self._waiting)


_POOL = _SlotPool()


def pool_counts() -> tuple[int, int]:
    """(jobs training, jobs waiting) on this server, for the UI."""
    return _POOL.counts()


def slot_pool() -> _SlotPool:
    """The server-wide pool every kind of job takes its slot from."""
    return _POOL


__all__ = ["MAX_CONCURRENT_JOBS", "SlotHolder", "env_number", "pool_counts", "slot_pool"]
