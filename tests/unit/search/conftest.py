"""The studies' storage for the tests that keep one: a SQLite file, and a fresh database of the session's
PostgreSQL (tests/conftest.py), so every such test runs on both."""

import pytest


@pytest.fixture(params=["sqlite", "postgresql"])
def storage(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    return request.getfixturevalue("postgres_url")
