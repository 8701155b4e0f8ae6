"""The app tier: every page under Streamlit's AppTest, in-process, no browser."""

from pathlib import Path

import pytest

from explorer import checkpoints
from explorer.experiment_job import ExperimentJob
from explorer.jobs import TrainingJob
from explorer.slots import pool_counts


@pytest.fixture(autouse=True)
def runs_dir(tmp_path, monkeypatch) -> Path:
    """Fresh folders for runs and shipped models, so the sidebar's default (untrained) and its
    lists do not depend on what the developer has trained or the repository ships."""
    path = tmp_path / "runs"
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(path))
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", tmp_path / "pretrained")
    return path


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
