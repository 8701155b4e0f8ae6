"""Where trials (and the sweep's cells) run. An executor starts `fn(arg)` and hands back a
`concurrent.futures.Future`; the driver waits for whichever finishes first.

    SerialExecutor()            in this process, one at a time (tests, a server that must keep its cores)
    ProcessExecutor(n)          n spawned worker processes on this machine, one torch thread each
    PooledExecutor(inner, pool) the app's: each trial first takes a slot of the server's pool (explorer/jobs/slots.py)
    RayExecutor(address)        Ray tasks on an existing cluster, one CPU each (explorer/search/ray_cluster.py)

Each has `workers` (trials at once), `ready()` (may a trial start now), `submit(fn, arg)`, `cancel(future)`,
`close()`, and `map(fn, items)`: fn(item) for every item, yielded as each finishes.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor, as_completed

from explorer.search import worker

log = logging.getLogger(__name__)


class Executor:
    """What every executor shares: `map` on top of `submit`, and nothing to wait for or clean up."""

    workers = 1

    def ready(self) -> bool:
        return True

    def submit(self, fn, arg) -> Future:
        raise NotImplementedError

    def cancel(self, future: Future) -> None:
        future.cancel()

    def close(self) -> None:
        pass

    def map(self, fn, items):
        """fn(item) for every item, in completion order; closing the iterator early cancels the rest."""
        futures = [self.submit(fn, item) for item in items]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for future in futures:
                self.cancel(future)
            self.close()


class SerialExecutor(Executor):
    """Runs each call at once in this process: `submit` returns a finished future."""

    def map(self, fn, items):
        for item in items:  # one at a time, so a stop between items leaves the rest undone
            yield fn(item)

    def submit(self, fn, arg) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(arg))
        except Exception as exc:
            future.set_exception(exc)
        return future


def _spawn_pool(workers: int) -> ProcessPoolExecutor:
    # spawned, so no torch state is forked; each worker single-threaded before torch loads (worker.init:
    # OMP / MKL / BLAS env and torch's pools, as Ray's workers; bench/README.md, "Hyperparameter search
    # that scales")
    return ProcessPoolExecutor(max_workers=workers, initializer=worker.init,
                               mp_context=multiprocessing.get_context("spawn"))


class ProcessExecutor(Executor):
    """`max_workers` worker processes (default: one per core). Closing cancels what has not started;
    what runs finishes in the background (a trial reads the driver's stop file and ends after a step)."""

    def __init__(self, max_workers: int | None = None, pool: ProcessPoolExecutor | None = None) -> None:
        self.workers = max(1, max_workers or os.cpu_count() or 1)
        self._pool, self._own = pool, pool is None

    def submit(self, fn, arg) -> Future:
        if self._pool is None:
            self._pool = _spawn_pool(self.workers)
        return self._pool.submit(fn, arg)

    def close(self) -> None:
        if self._own and self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


_SHARED: dict[int, ProcessPoolExecutor] = {}
_SHARED_LOCK = threading.Lock()


def server_processes(workers: int) -> ProcessPoolExecutor:
    """The server's worker processes, started once and shared by every search (kept warm: a spawned
    worker takes seconds to import torch)."""
    with _SHARED_LOCK:
        pool = _SHARED.get(workers)
        if pool is not None and pool._broken:   # a worker died (killed, out of memory): the pool refuses all work
            log.warning("the server's %d search workers broke (%s): starting new ones", workers, pool._broken)
            pool.shutdown(wait=False, cancel_futures=True)
            pool = None
        if pool is None:
            pool = _SHARED[workers] = _spawn_pool(workers)
        return pool


class _Slot:
    """A place in the server's slot pool for one trial (explorer/jobs/slots.py)."""

    def __init__(self) -> None:
        self.granted = threading.Event()

    def _granted(self) -> None:  # called by the pool, holding its lock
        self.granted.set()


class PooledExecutor(Executor):
    """`inner` behind the server's slot pool: a trial starts once it holds a slot, which it gives back
    when it ends, so a search queues with the training runs and never takes more cores than its slots."""

    def __init__(self, inner, pool) -> None:
        self.inner, self.pool = inner, pool
        self.workers = inner.workers
        self._pending: _Slot | None = None

    def ready(self) -> bool:
        if self._pending is None:
            self._pending = _Slot()
            self.pool.enqueue(self._pending)
        return self._pending.granted.is_set()

    def queued(self) -> int | None:
        """1-based place of the next trial in the server's queue, or None."""
        return None if self._pending is None else self.pool.position(self._pending)

    def submit(self, fn, arg) -> Future:
        if not self.ready():
            raise RuntimeError("submit before ready(): the trial holds no slot")
        slot, self._pending = self._pending, None
        try:
            future = self.inner.submit(fn, arg)
        except BaseException:
            self.pool.release(slot)
            raise
        future.add_done_callback(lambda _: self.pool.release(slot))
        return future

    def cancel(self, future: Future) -> None:
        self.inner.cancel(future)

    def close(self) -> None:
        if self._pending is not None:
            self.pool.release(self._pending)
            self._pending = None
        self.inner.close()


def _started(seconds: float) -> int:
    import explorer.search.trial  # noqa: F401  (the imports a worker's first trial would pay)

    time.sleep(seconds)  # held, so that each worker gets one of these
    return os.getpid()


def warm(executor, seconds: float = 1.0) -> list[int]:
    """Start every worker of `executor` and pay its imports now; returns their pids."""
    return [f.result() for f in [executor.submit(_started, seconds) for _ in range(executor.workers)]]


__all__ = ["warm", "Executor", "SerialExecutor", "ProcessExecutor", "PooledExecutor", "server_processes"]
