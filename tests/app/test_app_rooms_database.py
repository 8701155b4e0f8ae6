"""The room page on EXPLORER_DATABASE_URL: a class on a PostgreSQL database (nothing in the runs folder), and
a bad setting said on the page, the lesson going on alone."""

import pytest

from explorer.rooms import Rooms
from explorer.store import checkpoints
from explorer.store.database import DATABASE_ENV
from tests.app.helpers import SHIPPED, assert_ok
from tests.app.rooms import count_text, tab, teacher


@pytest.fixture(autouse=True)
def shipped_models(monkeypatch):
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", SHIPPED)


def test_a_class_on_postgresql_keeps_its_room_there(postgres_url, monkeypatch, runs_dir):
    monkeypatch.setenv(DATABASE_ENV, postgres_url)
    t, code = teacher()
    s = tab({"room": code}, token="a" * 30)
    s.radio(key="lesson_choice").set_value(1).run()
    s.button(key="lesson_lock").click().run()
    assert_ok(s)
    t.run()
    assert count_text(t).endswith("1 of 1 predicted")
    shared = Rooms(postgres_url)   # another server's view of the same database
    state = shared.state(code)
    assert state is not None and shared.count(code, state.lesson, state.step) == (1, 1)
    shared.close()
    assert not (runs_dir / "rooms.sqlite").exists()


@pytest.mark.parametrize("query", [{"room": "ABCDEFG"}, {"lesson": "module6", "step": "2", "teach": "1"}])
def test_a_bad_database_url_is_said_on_the_page(query, monkeypatch):
    monkeypatch.setenv(DATABASE_ENV, "mysql://ann:hunter2@db/rooms")
    at = tab(query)
    said = " ".join(w.value for w in at.warning).replace("\u200b", "")   # quoted: no link in a message
    assert DATABASE_ENV in said and "postgresql://user@host:port/db" in said and "hunter2" not in said
    assert_ok(at)
    if "room" in query:   # a student's link: said with a way on, alone
        assert at.button(key="room_alone").label == "Continue alone"
    else:                 # the teacher's: the lesson stays open, no room made
        assert "room" not in at.query_params and [x.value for x in at.title]
