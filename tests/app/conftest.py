"""The app tier: every page under Streamlit's AppTest, in-process, no browser."""

from pathlib import Path

import pytest

from explorer.jobs import owned as owned_module
from explorer.jobs.experiment import ExperimentJob
from explorer.jobs.owned import OwnedJobs
from explorer.jobs.search import SearchJob
from explorer.jobs.slots import pool_counts
from explorer.jobs.training import TrainingJob
from explorer.store import checkpoints


@pytest.fixture(autouse=True)
def runs_dir(tmp_path, monkeypatch) -> Path:
    """Fresh folders for runs and shipped models, so the sidebar's default (untrained) and its
    lists do not depend on what the developer has trained or the repository ships."""
    path = tmp_path / "runs"
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(path))
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", tmp_path / "pretrained")
    return path


@pytest.fixture(autouse=True)
def owned(monkeypatch) -> OwnedJobs:
    """The test's own registry of owned jobs, swept only when the test says (`owned.sweep(now=...)`): a job
    of one test never reattaches in the next one, whose AppTests may share an owner token."""
    fresh = OwnedJobs(reap=False)
    monkeypatch.setattr(owned_module, "_JOBS", fresh)
    return fresh


@pytest.fixture
def jobs(monkeypatch):
    """Every training and experiment job launched during the test, closed and joined afterwards (a torch
    thread still alive at exit aborts the process)."""
    launched: list = []

    def recorded(launch):
        def recording(self):
            launched.append(self)
            launch(self)
        return recording

    monkeypatch.setattr(TrainingJob, "_launch", recorded(TrainingJob._launch))
    monkeypatch.setattr(ExperimentJob, "start", recorded(ExperimentJob.start))
    try:
        yield launched
    finally:
        for job in launched:
            job.close(timeout=60)
        assert not any(job.alive for job in launched)
        assert pool_counts() == (0, 0)


@pytest.fixture
def searches(monkeypatch):
    """Every search started in the test, stopped and joined afterwards."""
    started: list = []
    start = SearchJob.start

    def recording(self):
        started.append(self)
        start(self)

    monkeypatch.setattr(SearchJob, "start", recording)
    try:
        yield started
    finally:
        for job in started:
            job.close()
