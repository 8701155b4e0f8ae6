"""A search running in the background for the app: its driver in a daemon thread, its trials in the
server's worker processes, each trial holding a slot of the same pool as training (explorer/jobs/slots.py),
or as Ray tasks when EXPLORER_RAY_ADDRESS names a cluster.

    job = SearchJob(spec, owner=owner_id)        # ValueError now for a bad spec or another search's study
    job.start(); job.view()                      # status, trials, best, importances: poll from any thread
    job.stop()                                   # the running trials end after a step; the finished stay
    SearchJob(spec, owner, confirm=(3, 2))       # "Rerun over seeds": the best 2 over 3 fresh seeds each

Nothing here touches Streamlit. The driver only samples and records, so it takes no slot of its own:
a search never starves the page, and a class that searches queues with the class that trains.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from explorer.jobs.base import Job
from explorer.jobs.slots import MAX_CONCURRENT_JOBS, slot_pool
from explorer.search import (
    PooledExecutor,
    ProcessExecutor,
    SearchSpec,
    best,
    importances,
    open_study,
    run_search,
    server_processes,
    trial_rows,
)
from explorer.search.confirm import best_configurations, check_counts, run_confirm
from explorer.search.ray_cluster import ENV_ADDRESS, RayExecutor, RayUnavailable
from explorer.search.studies import claim
from explorer.search.study import counts, pareto


@dataclass(frozen=True)
class SearchView:
    """What the page draws, copied out of the driver thread after every recorded trial."""

    status: str
    message: str
    finished: int                  # trials finished in the study (across resumes)
    total: int                     # trials the study is to hold
    running: int
    queue_position: int | None     # the next trial's place in the server's queue, while it waits
    elapsed_s: float
    rows: list = field(default_factory=list)       # study.trial_rows
    best: dict | None = None
    importances: dict = field(default_factory=dict)
    where: str = ""                # "2 worker processes of this server", "Ray cluster at ..."
    pareto: list = field(default_factory=list)     # study.pareto: a multi-objective study's front
    confirming: bool = False       # the job reruns the best over seeds (finished/total count the reruns)
    confirm: dict | None = None    # explorer/search/confirm.py, run_confirm's outcome, once it ended

    @property
    def fraction(self) -> float:
        return min(1.0, self.finished / self.total) if self.total else 0.0


def app_executor():
    """(executor, words): the Ray cluster of EXPLORER_RAY_ADDRESS, else the server's worker processes
    behind its slot pool. RayUnavailable names an address that does not answer."""
    address = os.environ.get(ENV_ADDRESS, "").strip()
    if address:
        return RayExecutor(address), f"the Ray cluster at {address}"
    workers = max(1, MAX_CONCURRENT_JOBS)
    inner = ProcessExecutor(workers, pool=server_processes(workers))
    return (PooledExecutor(inner, slot_pool()),
            f"up to {workers} worker processes of this server, one training slot each")


class SearchJob(Job):
    """One search in a daemon thread. `owner` owns the runs its trials save. Its driver takes no slot (its
    trials do): it never queues, and never ends "diverged"."""

    kind, pooled = "search", False

    def __init__(self, spec: SearchSpec, owner: str | None = None, confirm: tuple[int, int] | None = None) -> None:
        self.spec, self.owner, self.name = spec, owner, spec.study_name()
        if confirm is not None:
            check_counts(*confirm)   # ValueError now: seeds or configurations out of range
        self.confirm = confirm       # (seeds, configurations): rerun the best instead of searching
        self.study = open_study(spec)   # ValueError now: another search's study, a bad storage
        if confirm is not None and not best_configurations(self.study, 1):
            raise ValueError("no trial of this search has completed yet: run the search first, then rerun "
                             "its best over seeds")
        claim(self.study, owner)        # a study it creates is the owner's: only they may delete it
        super().__init__()
        self._executor, self._where = None, ""
        self._started: float | None = None
        self._ended: float | None = None
        self._snapshot: dict = {}
        self._record(self.study)
        self.total = spec.trials if confirm is None else confirm[0] * confirm[1]

    def view(self) -> SearchView:
        with self._lock:
            snap, executor = dict(self._snapshot), self._executor
            start, end = self._started, self._ended
            status, message, where = self._status, self._message, self._where
        queued = getattr(executor, "queued", None)
        position = queued() if queued is not None and status == "running" else None
        elapsed = 0.0 if start is None else (end or time.monotonic()) - start
        return SearchView(status, message, snap.get("finished", 0), self.total, snap.get("running", 0),
                          position, elapsed, snap.get("rows", []), snap.get("best"), snap.get("importances", {}),
                          where, snap.get("pareto", []), self.confirm is not None, snap.get("confirm"))

    # -- control -------------------------------------------------------------------------------
    def start(self) -> None:
        """Connect the executor (RayUnavailable names a cluster that does not answer) and start."""
        if self.status != "idle":
            raise RuntimeError(f"search {self.name!r} was already started (status {self.status})")
        executor, where = app_executor()
        with self._lock:
            self._executor, self._where, self._started = executor, where, time.monotonic()
        self._launch()

    def close(self, timeout: float = 15.0) -> bool:
        return self.stop(wait=True, timeout=timeout)

    # -- the driver thread ---------------------------------------------------------------------
    def _record(self, study) -> None:
        done, running = counts(study)
        snap = {"finished": done, "running": running, "rows": trial_rows(study), "best": best(study),
                "importances": importances(study), "pareto": pareto(study)}
        with self._lock:
            self._snapshot = snap

    def _record_rerun(self, rerun) -> None:
        """While confirming: the reruns' counts; the search's trials stay as they were."""
        done, running = counts(rerun)
        with self._lock:
            self._snapshot = {**self._snapshot, "finished": done, "running": running}

    def _work(self) -> dict:
        if self.confirm is not None:
            return run_confirm(self.spec, *self.confirm, self._executor, on_record=self._record_rerun,
                               stop=self._stop, owner=self.owner, study=self.study)
        return run_search(self.spec, self._executor, on_record=self._record, stop=self._stop, owner=self.owner,
                          study=self.study)

    def _outcome(self, outcome: dict) -> tuple[str, str]:
        if self.confirm is not None:
            with self._lock:
                self._snapshot = {**self._snapshot, "confirm": outcome}
            seeds, top = self.confirm
            if outcome["stopped"]:
                return "stopped", "the reruns were stopped; rerun over seeds again to finish them"
            if outcome["failure"]:
                return "failed", outcome["failure"]
            return "finished", (f"the best {len(outcome['configurations'])} configurations rerun over {seeds} "
                                "fresh seeds each")
        done = sum(t["state"] in ("COMPLETE", "PRUNED", "FAIL") for t in outcome["trials"])
        if outcome["stopped"]:
            return "stopped", f"stopped with {done} of {self.spec.trials} trials finished; start again to run the rest"
        if outcome["failure"]:
            return "failed", outcome["failure"]
        return "finished", f"{done} trials finished"

    def _failure(self, exc: Exception) -> tuple[str, str]:
        if isinstance(exc, (RayUnavailable, ValueError, OSError)):  # said plainly: a cluster, a study, a disk
            return "failed", str(exc)
        return super()._failure(exc)

    def _end(self, status: str, message: str, done) -> None:
        with self._lock:
            self._status, self._message, self._ended = status, message, time.monotonic()


__all__ = ["SearchView", "SearchJob", "app_executor"]
