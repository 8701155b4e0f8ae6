"""The app tier: every page under Streamlit's AppTest, in-process, no browser."""

from pathlib import Path

import pytest

from explorer import checkpoints


@pytest.fixture(autouse=True)
def runs_dir(tmp_path, monkeypatch) -> Path:
    """Fresh folders for runs and shipped models, so the sidebar's default (untrained) and its
    lists do not depend on what the developer has trained or the repository ships."""
    path = tmp_path / "runs"
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(path))
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", tmp_path / "pretrained")
    return path
