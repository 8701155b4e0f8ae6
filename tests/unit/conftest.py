"""The unit tier: the library alone (`explorer/`, no Streamlit), the fast loop a contributor runs:
`python -m pytest tests/unit`."""

import pytest


@pytest.fixture(autouse=True)
def _own_runs_dir(tmp_path, monkeypatch):
    """Runs a test saves land in its own folder, never in the developer's runs/ (a test that needs
    another folder sets EXPLORER_RUNS_DIR itself, which wins)."""
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))


@pytest.fixture
def unreplayed(tmp_path, monkeypatch):
    """Every shipped model as if its training had not been replayed (no pretrained/snapshots/)."""
    from explorer.store import snapshots

    monkeypatch.setattr(snapshots, "shipped_folder", lambda: tmp_path / "no-replays")
