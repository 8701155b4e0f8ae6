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
HEAVY = "heavy"   # the xdist group of the browser tier and the Ray heads (pytest_collection_modifyitems)
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
    """Which tests share an xdist worker (`--dist loadgroup`); a test already in a group keeps it.
    - The browser tier is one group, `heavy`, with the tests that start a Ray head: they run one at a time. Two
      at once (two Chromiums, two app servers on 2 cores) ran 2-3x slower, past their waits (stop 44's CI).
    - Every other module that uses a module-scoped fixture (a study, trained models) is a group of its own, so
      that fixture is built once, not once per worker (the 2026-12-03 run built a study twice, 64 + 75 s)."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if item.get_closest_marker("xdist_group") is not None:
            continue
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.xdist_group(HEAVY))
        elif info is not None and any(d.scope == "module" for defs in info.name2fixturedefs.values()
                                      for d in defs[-1:]):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
