"""The registry of owned jobs: a job is its owner's (never another's), stays while a tab of the owner polls
it, stops once none has for the grace period and is forgotten once it has ended. The clock is injected:
the grace passes in no time. One test lets the real reaper thread run with a grace of a fraction of a second."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from explorer.jobs import owned, slots
from explorer.jobs.owned import OwnedJobs

ROOT = Path(__file__).resolve().parents[3]

GRACE = 90.0


class FakeJob:
    """What the registry asks of a job: `ended`, and a `stop()` that returns at once."""

    def __init__(self, name: str = "job") -> None:
        self.name, self.stops, self.ended = name, 0, False
        self.stopped = threading.Event()

    def stop(self) -> None:
        self.stops += 1
        self.stopped.set()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def registry(clock):
    return OwnedJobs(grace_s=GRACE, clock=clock, reap=False)


def test_a_job_is_its_owners_alone_one_of_each_kind(registry):
    run, search = FakeJob("run"), FakeJob("search")
    registry.register("alice", "train", run)
    registry.register("alice", "search", search)
    assert registry.job("alice", "train") is run and registry.job("alice", "search") is search
    assert registry.job("bob", "train") is None and registry.job("alice", "experiment") is None
    assert registry.active("alice") and not registry.active("bob")
    newer = FakeJob("newer")
    registry.register("alice", "train", newer)   # the owner's job of that kind from now on
    assert registry.job("alice", "train") is newer and run.stops == 0
    with pytest.raises(ValueError, match="owner"):
        registry.register("", "train", FakeJob())
    with pytest.raises(ValueError, match="train, experiment, search"):
        registry.register("alice", "sweep", FakeJob())


def test_polled_jobs_stay_and_a_job_nobody_polls_stops_after_the_grace(registry, clock):
    watched, left = FakeJob("watched"), FakeJob("left")
    registry.register("alice", "train", watched)
    registry.register("bob", "train", left)
    stopped = []
    for _ in range(5):                     # alice's tab polls; bob's is gone
        clock.now += GRACE / 3
        registry.seen("alice")
        stopped += registry.sweep()
    assert stopped == [left] and watched.stops == 0 and left.stops == 1
    assert registry.job("bob", "train") is left            # still there while it ends (and saves)
    clock.now += GRACE
    registry.seen("alice")
    assert registry.sweep() == [] and left.stops == 1      # asked once, not at every sweep
    left.ended = True
    assert registry.sweep() == [] and registry.job("bob", "train") is None   # ended and unwatched: forgotten
    assert registry.job("alice", "train") is watched


def test_the_grace_is_counted_from_the_last_poll(registry, clock):
    job = FakeJob()
    registry.register("alice", "train", job)
    clock.now += GRACE - 1
    assert registry.sweep() == []
    registry.seen("alice")
    clock.now += GRACE - 1
    assert registry.sweep() == [] and job.stops == 0
    clock.now += 1
    assert registry.sweep() == [job] and job.stops == 1
    assert registry.sweep(now=clock.now - GRACE) == []  # a time given to sweep is the one used


def test_a_job_resumed_after_its_stop_is_watched_afresh(registry, clock):
    job = FakeJob()
    registry.register("alice", "train", job)
    clock.now += GRACE
    assert registry.sweep() == [job]
    registry.seen("alice")        # the owner came back and pressed Resume on the same job
    clock.now += GRACE
    assert registry.sweep() == [job] and job.stops == 2


def test_an_ended_job_stays_while_its_owner_polls(registry, clock):
    job = FakeJob()
    job.ended = True
    registry.register("alice", "train", job)
    clock.now += GRACE / 2
    registry.seen("alice")
    clock.now += GRACE / 2 + 1
    assert registry.sweep() == [] and registry.job("alice", "train") is job and not registry.active("alice")
    clock.now += GRACE
    registry.sweep()
    assert registry.job("alice", "train") is None and job.stops == 0


def test_a_search_stopped_by_the_grace_stays_a_day_for_its_owners_next_tab(registry, clock):
    """A stopped run is on disk, pointed to by the Train page; a search's study is on disk too, but only its
    job says which study was this owner's: kept KEEP_ENDED_S, so a tab opened later shows it (Start resumes)."""
    search, run = FakeJob("search"), FakeJob("run")
    registry.register("alice", "search", search)
    registry.register("alice", "train", run)
    clock.now += GRACE
    assert set(registry.sweep()) == {search, run}
    search.ended = run.ended = True
    clock.now += GRACE
    registry.sweep()
    assert registry.job("alice", "train") is None and registry.job("alice", "search") is search
    clock.now += owned.KEEP_ENDED_S["search"] - 2 * GRACE - 1
    registry.sweep()
    assert registry.job("alice", "search") is search
    clock.now += 1
    registry.sweep()
    assert registry.job("alice", "search") is None


def test_the_reaper_thread_stops_an_unwatched_job_and_ends_when_nothing_is_left():
    registry = OwnedJobs(grace_s=0.2)             # the real clock and the real reaper
    job = FakeJob()
    registry.register("alice", "train", job)
    assert job.stopped.wait(10), "the reaper did not stop the unwatched job"
    job.ended = True
    reaper = registry._reaper
    deadline = time.monotonic() + 10
    while registry.job("alice", "train") is not None or reaper.is_alive():
        assert time.monotonic() < deadline, "the reaper did not forget the job and end"
        time.sleep(0.05)
    again = FakeJob()
    registry.register("alice", "train", again)    # a new job starts a new reaper
    assert again.stopped.wait(10)
    again.ended = True


def test_the_grace_is_a_minute_or_more_and_the_environment_can_change_it(monkeypatch):
    if "EXPLORER_JOB_GRACE_S" not in os.environ:   # the default: a tab throttled to a poll a minute keeps its job
        assert 60 <= owned.GRACE_S <= 120 and 6 * owned.BEAT_S <= owned.GRACE_S
    monkeypatch.setenv("EXPLORER_JOB_GRACE_S", "7.5")
    assert slots.env_number("EXPLORER_JOB_GRACE_S", 90.0, 1.0, 3600.0) == 7.5
    for bad, expected in (("soon", 90.0), ("0", 1.0), ("1e9", 3600.0)):
        monkeypatch.setenv("EXPLORER_JOB_GRACE_S", bad)
        assert slots.env_number("EXPLORER_JOB_GRACE_S", 90.0, 1.0, 3600.0) == expected


def test_the_longest_run_is_ten_minutes_unless_the_environment_says_otherwise():
    from explorer.jobs import budget
    if "EXPLORER_MAX_RUN_S" not in os.environ:
        assert budget.MAX_RUN_SECONDS == 600.0
    for text, expected in (("3600", 3600.0), ("1", 10.0), ("long", 600.0)):
        env = {**os.environ, "EXPLORER_MAX_RUN_S": text}
        out = subprocess.run([sys.executable, "-c", "from explorer.jobs.budget import MAX_RUN_SECONDS as m; print(m)"],
                             cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        assert float(out.stdout) == expected, text
