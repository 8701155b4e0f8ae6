"""A room database on a temporary SQLite file, with a clock the test moves, and a room in it."""

import pytest

from explorer.rooms import Rooms
from tests.unit.rooms.samples import TEACHER, Clock


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def db(tmp_path, clock):
    rooms = Rooms(tmp_path / "rooms.sqlite", clock=clock)
    yield rooms
    rooms.close()


@pytest.fixture
def room(db):
    return db.create("ch2", 0, TEACHER), TEACHER
