"""Shared by every tier: the repository root on sys.path, so `explorer`, `ui` and `tests` import the
same way under `pytest` as under `python -m pytest` and `streamlit run`.

The tiers: tests/unit (the library, no Streamlit), tests/system (the library as a user runs it: CLI
processes, training to a quality bar, rebuilds), tests/app (every page under Streamlit's AppTest),
tests/browser (a real `streamlit run` server and headless Chromium). `python -m pytest tests/unit` is
the fast loop; `python -m pytest` runs them all.
"""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# each store uses its own file in a test's runs folder, never a database the developer's shell names (a test
# that wants EXPLORER_DATABASE_URL sets it, for itself or for the servers it starts)
os.environ.pop("EXPLORER_DATABASE_URL", None)
# The tests' Ray heads listen on loopback only, without token auth: Ray 2.60 turns token auth on for a head
# once ~/.ray/auth_token exists (any local `ray.init()` writes one), and then the tests' drivers were refused
# ("InvalidAuthToken"); the heads (tests/ray_head.py), in-process drivers and servers all inherit this.
os.environ["RAY_AUTH_MODE"] = "disabled"


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server for the session (tests/postgres.py), started on first use and stopped at the end.
    Missing PostgreSQL binaries fail the tests that need them, with what to install: never a skip."""
    from tests.postgres import Postgres

    try:
        server = Postgres.start()
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres) -> str:
    """A new, empty database on the session's PostgreSQL: this test's alone."""
    return postgres.fresh_database()


@pytest.hookimpl(tryfirst=True)   # before xdist's own hook, which turns the groups into node ids
def pytest_collection_modifyitems(items):
    """A module-scoped fixture (a server, a study, trained models) is built once per xdist worker that runs
    any of the module's tests: the 2026-12-03 run built test_browser_studies.py's study twice (64 + 75 s).
    So each such module's tests go to one worker (`--dist loadgroup`); a module already in a group keeps it."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None or item.get_closest_marker("xdist_group") is not None:
            continue
        if any(d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs[-1:]):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
