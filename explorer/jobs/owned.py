"""Whose each background job is: the server-wide registry of the jobs visitors started, by owner (the id of
the owner cookie, explorer's runs record the same) and kind ("train", "experiment", "search"). A job belongs
to its owner, not to the tab that started it: a reloaded or reopened tab of the same browser finds it here
and shows it live, and a job no tab of its owner looks at any more stops after a grace period.

    jobs = owned_jobs()
    jobs.register(owner, "train", job)   # the owner's training job from now on (one job of each kind)
    jobs.job(owner, "train")             # that job or None: another owner's job is never returned
    jobs.seen(owner)                     # a tab of this owner is still watching: every job of theirs stays
    jobs.sweep()                         # stop the jobs not seen for GRACE_S; forget the ended ones later

A job is anything with `ended` and a `stop()` that returns at once; stopping keeps what was learned (a
training run saves itself as "stopped", to be resumed). A reaper thread sweeps every BEAT_S while the
registry holds a job. Nothing here touches Streamlit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from explorer.jobs.slots import env_number

log = logging.getLogger(__name__)

# A tab of the owner polls every BEAT_S; Chrome lets a tab hidden for 5 minutes poll once a minute, so the
# grace must outlast a minute. EXPLORER_JOB_GRACE_S changes it (a test's server takes a few seconds).
GRACE_S = float(env_number("EXPLORER_JOB_GRACE_S", 90.0, 1.0, 24 * 3600.0))
BEAT_S = max(0.5, min(10.0, GRACE_S / 6))
KINDS = ("train", "experiment", "search")
# How long an ended job nobody polls is kept. A run is on disk and the Train page points to it; an
# experiment's result is cached for every visitor; a search's study is on disk too, but only its job tells
# a reopened tab which one was theirs, so a stopped search is shown (Start resumes it) for a day.
KEEP_ENDED_S = {"search": 24 * 3600.0}


@dataclass
class _Entry:
    job: object
    seen: float                  # the clock's time a tab of the owner last polled
    stopping: bool = False       # the sweep asked the job to stop


class OwnedJobs:
    """The jobs of every owner on this server, one of each kind per owner. `clock` is injectable for
    tests (seconds, monotonic); `reap=False` leaves sweeping to the caller."""

    def __init__(self, grace_s: float = GRACE_S, clock: Callable[[], float] = time.monotonic,
                 reap: bool = True) -> None:
        self.grace_s, self._clock, self._reap = grace_s, clock, reap
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._reaper: threading.Thread | None = None

    def register(self, owner: str, kind: str, job) -> None:
        """`job` is the owner's job of this kind from now on (the one before is forgotten, not stopped)."""
        if not owner:
            raise ValueError("a job needs an owner")
        if kind not in KINDS:
            raise ValueError(f"kind={kind!r}; use one of {', '.join(KINDS)}")
        with self._lock:
            self._entries[(owner, kind)] = _Entry(job, self._clock())
            if self._reap and self._reaper is None:
                self._reaper = threading.Thread(target=self._reap_loop, name="owned-jobs-reaper", daemon=True)
                self._reaper.start()

    def job(self, owner: str, kind: str):
        with self._lock:
            entry = self._entries.get((owner, kind))
            return entry.job if entry is not None else None

    def active(self, owner: str) -> bool:
        """Whether the owner has a job that has not ended."""
        with self._lock:
            jobs = [e.job for (o, _), e in self._entries.items() if o == owner]
        return any(not job.ended for job in jobs)

    def seen(self, owner: str) -> None:
        """A tab of `owner` is polling: their jobs are watched, so none stops for the grace from now."""
        now = self._clock()
        with self._lock:
            for (o, _), entry in self._entries.items():
                if o == owner:
                    entry.seen, entry.stopping = now, False   # a job resumed since is watched afresh

    def sweep(self, now: float | None = None) -> list:
        """Ask the jobs no tab of their owner has polled for grace_s to stop (they keep what they learned) and
        forget the ended ones nobody polled for as long (a search: KEEP_ENDED_S). Returns the jobs asked to stop."""
        now = self._clock() if now is None else now
        stop = []
        with self._lock:
            for key, entry in list(self._entries.items()):
                if now - entry.seen < self.grace_s:
                    continue
                if entry.job.ended:
                    if now - entry.seen >= max(self.grace_s, KEEP_ENDED_S.get(key[1], 0.0)):
                        del self._entries[key]
                elif not entry.stopping:
                    entry.stopping = True
                    stop.append(entry.job)
        for job in stop:
            log.warning("no tab of its owner polled job %s for %.0f s: stopping it", getattr(job, "name", job),
                        self.grace_s)
            try:
                job.stop()
            except Exception:
                log.warning("stopping job %s failed", getattr(job, "name", job), exc_info=True)
        return stop

    def _reap_loop(self) -> None:
        while True:
            time.sleep(min(BEAT_S, self.grace_s / 6))
            with self._lock:
                if not self._entries:   # nothing left to watch: the next register starts a new reaper
                    self._reaper = None
                    return
            try:
                self.sweep()
            except Exception:  # the reaper must outlive a bad job
                log.warning("sweeping the owned jobs failed", exc_info=True)


_JOBS = OwnedJobs()


def owned_jobs() -> OwnedJobs:
    """The server-wide registry every page asks for its owner's jobs."""
    return _JOBS


__all__ = ["GRACE_S", "BEAT_S", "KINDS", "KEEP_ENDED_S", "OwnedJobs", "owned_jobs"]
