"""The teacher's dashboard during class and the room's Results afterwards, under AppTest: each AppTest is a
tab (the teacher or a student) on the same rooms database, driven in turn."""

import sqlite3
import time

import pytest

from explorer.lessons import LESSONS
from explorer.store import checkpoints
from tests.app.helpers import SHIPPED, assert_ok
from tests.app.rooms import QUESTION, count_text, in_popover, param, tab, teacher, texts
from ui import owner, room, room_dashboard, room_results

CHOICES = LESSONS[QUESTION[0]].steps[QUESTION[1] - 1].question.choices


@pytest.fixture(autouse=True)
def shipped_models(monkeypatch):
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", SHIPPED)


def under(at, key: str) -> list:
    """Every element inside the block keyed `key`."""
    def walk(node, inside):
        inside = inside or getattr(node, "key", None) == key or key in str(getattr(node, "proto", ""))[:0]
        kids = list(getattr(node, "children", {}).values())
        found = [node] if inside and not kids else []
        for child in kids:
            found += walk(child, inside)
        return found
    return walk(at.main, False)


def locked_lists(at) -> tuple[str, str]:
    """The dashboard's two lists, as drawn: (locked, not yet)."""
    texts = [e.value for e in under(at, f"st-key-{room_dashboard.LOCKED}") + under(at, room_dashboard.LOCKED)
             if type(e).__name__ == "Text"]
    return texts[0], texts[1]


def student(code: str, name: str, token: str, choice: int | None = None):
    s = tab({"room": code, "name": name}, token=token * 30)
    if choice is not None:
        s.radio(key="lesson_choice").set_value(choice).run()
        s.button(key="lesson_lock").click().run()
        assert_ok(s)
    return s


def test_the_dashboard_shows_who_has_locked_and_anonymises_on_request():
    t, code = teacher()
    student(code, "<b>Ann</b>", "a", choice=1)
    student(code, "Bo", "b")
    t.run()
    assert locked_lists(t) == ("<b>Ann</b>", "Bo")   # st.text: a nickname is never markup
    t.toggle(key=room_dashboard.ANONYMISE).set_value(True).run()
    assert locked_lists(t) == ("student 1", "student 2")
    assert in_popover(t, room_dashboard.PAUSE) is None   # the teacher's own screen: an open panel


def test_in_presenter_view_the_dashboard_waits_closed_and_anonymous():
    t, code = teacher()
    student(code, "Ann", "a")
    t.query_params["present"] = "1"
    t.run()
    assert_ok(t)
    assert in_popover(t, room_dashboard.PAUSE) == "Dashboard"
    assert "Ann" not in locked_lists(t)[1] and locked_lists(t)[1] == "student 1"


def test_pause_shows_students_only_eyes_on_the_teacher_until_resumed():
    t, code = teacher()
    s = student(code, "Ann", "a")
    t.toggle(key=room_dashboard.PAUSE).set_value(True).run()
    assert room.rooms().state(code).paused
    s.run()
    assert [x.value for x in s.title] == ["Eyes on the teacher"] and not any(b.key == "lesson_lock" for b in s.button)
    t.toggle(key=room_dashboard.PAUSE).set_value(False).run()
    s.run()
    assert [x.value for x in s.title] == [LESSONS[QUESTION[0]].steps[QUESTION[1] - 1].title]


def test_ask_again_clears_every_lock_and_the_reveal_for_everyone():
    t, code = teacher()
    s = student(code, "Ann", "a", choice=1)
    t.run()
    t.button(key="lesson_reveal").click().run()
    s.run()
    assert any(m.label == "Measured" for m in s.metric)
    t.button(key=room_dashboard.ASK_AGAIN).click().run()
    assert_ok(t)
    assert not any(m.label == "Measured" for m in t.metric) and not t.button(key="lesson_reveal").disabled
    assert count_text(t).endswith("0 of 1 predicted")
    s.run()
    assert_ok(s)
    assert not any(m.label == "Measured" for m in s.metric) and "Locked:" not in texts(s)
    assert s.radio(key="lesson_choice").value is None and not s.radio(key="lesson_choice").disabled


def test_a_countdown_closes_the_lock_and_leaves_the_reveal_to_the_teacher():
    t, code = teacher()
    s = student(code, "Ann", "a")
    t.selectbox(key=room_dashboard.COUNTDOWN_S).set_value(30)
    t.button(key=room_dashboard.COUNTDOWN).click().run()
    assert_ok(t)
    assert room.rooms().state(code).deadline == pytest.approx(time.time() + 30, abs=5)
    s.run()
    assert "left** to lock your prediction" in texts(s)
    with sqlite3.connect(room.rooms().path) as db:   # as if 30 seconds had gone by
        db.execute("UPDATE rooms SET deadline = ? WHERE code = ?", (time.time() - 1, code))
    s.run()
    s.radio(key="lesson_choice").set_value(0).run()
    assert s.button(key="lesson_lock").disabled and "Time is up" in texts(s)
    t.run()
    assert not room.rooms().state(code).revealed and not t.button(key="lesson_reveal").disabled


def test_a_hidden_reveal_leaves_every_screen_until_shown_again():
    t, code = teacher()
    s = student(code, "Ann", "a", choice=2)
    t.run()
    t.button(key="lesson_reveal").click().run()
    t.toggle(key=room_dashboard.HIDE).set_value(True).run()
    s.run()
    assert not any(m.label == "Measured" for m in s.metric) and "hidden the answer" in texts(s)
    assert s.button(key="lesson_lock").disabled   # predictions stay closed
    t.toggle(key=room_dashboard.HIDE).set_value(False).run()
    s.run()
    assert any(m.label == "Measured" for m in s.metric)


def test_results_are_the_teachers_with_every_answer_and_both_downloads():
    t, code = teacher()
    student(code, "Ann", "a", choice=1)
    student(code, "=cmd|x", "b", choice=2)
    t.run()
    t.button(key="lesson_reveal").click().run()
    t.button(key="room_end").click().run()
    results = tab({"results": code}, token=t.session_state[owner.TOKEN])
    assert_ok(results)
    assert [x.value for x in results.title] == [f"Room {code}: results"]
    table = results.dataframe[0].value
    assert list(table["nickname"]) == ["Ann", "=cmd|x"] and list(table["prediction"]) == [CHOICES[1], CHOICES[2]]
    assert "kept 30 days" in texts(results) and "1 of 1 locked" not in texts(results)
    keys = {b.key for b in results.get("download_button")}
    assert {room_results.CSV, room_results.HTML} <= keys
    assert any(code in b.key for b in results.button)   # the past rooms list this one
    other = tab({"results": code}, token="z" * 30)    # another browser: a student's, say
    assert "No results to show" in texts(other) and not other.dataframe
    assert param(other, "results") == code
