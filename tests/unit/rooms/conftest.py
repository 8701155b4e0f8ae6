"""A room database with a clock the test moves, and a room in it: every test that takes `db` (or `where`)
runs twice, on a temporary SQLite file and on a fresh database of the session's PostgreSQL."""

import pytest

from explorer.rooms import Rooms
from tests.unit.rooms.samples import TEACHER, Clock


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request, tmp_path):
    """Where this test's rooms live: a SQLite file's path, or a PostgreSQL database's URL."""
    return tmp_path / "rooms.sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")


@pytest.fixture
def db(where, clock):
    rooms = Rooms(where, clock=clock)
    yield rooms
    rooms.close()


@pytest.fixture
def room(db):
    return db.create("ch2", 0, TEACHER), TEACHER
