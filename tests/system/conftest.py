"""The system tier: the library as a user runs it, taking seconds a test. Command-line processes,
saves killed half way, training runs held to a quality bar, experiments end to end, the shipped
models rebuilt. `python -m pytest tests/unit` leaves these out; `python -m pytest` runs them."""

import pytest


@pytest.fixture(autouse=True)
def _own_runs_dir(tmp_path, monkeypatch):
    """Runs a test saves land in its own folder, never in the developer's runs/ (a test that needs
    another folder sets EXPLORER_RUNS_DIR itself, which wins)."""
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
