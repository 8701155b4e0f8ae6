"""A class in one room under AppTest: each AppTest is one tab (a teacher or a student) on the same
rooms database (the tier's runs folder), driven in turn."""

import pytest
from streamlit.testing.v1 import AppTest

from explorer.lessons import LESSONS
from explorer.store import checkpoints
from tests.app.helpers import SHIPPED, assert_ok
from tests.app.rooms import QUESTION, browser, count_text, in_popover, param, tab, teacher, teaching_url, texts
from ui import room


@pytest.fixture(autouse=True)
def shipped_models(monkeypatch):
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", SHIPPED)


def test_students_follow_lock_and_see_the_reveal_only_when_the_teacher_reveals():
    t, code = teacher()
    s = tab({"room": code, "name": "**Ann** <b>x</b>"}, token="a" * 30)
    title = LESSONS[QUESTION[0]].steps[QUESTION[1] - 1].title
    assert [x.value for x in s.title] == [title]
    keys = {b.key for b in s.button}
    assert "lesson_lock" in keys and not keys & {"lesson_reveal", "lesson_next", "lesson_prev", "room_end"}
    assert "Ann" not in texts(s)   # a nickname is for the teacher's eyes
    s.radio(key="lesson_choice").set_value(1).run()
    s.button(key="lesson_lock").click().run()
    assert_ok(s)
    t.run()
    assert count_text(t).endswith("1 of 1 predicted")
    assert not [m for m in s.metric if m.label == "Measured"]
    t.button(key="lesson_reveal").click().run()
    assert_ok(t)
    assert {m.label for m in t.metric} == {"The class predicted", "Measured"}
    s.run()
    assert_ok(s)
    shown = {m.label: m.value for m in s.metric}
    assert shown["You predicted"] == "the high dimensions (near d_model)" and "Measured" in shown
    assert s.radio(key="lesson_choice").disabled and s.button(key="lesson_lock").disabled
    assert len(s.get("plotly_chart")) >= 2   # the class's predictions beside the measured answer
    t.button(key="lesson_next").click().run()
    s.run()
    assert [x.value for x in s.title] == [LESSONS[QUESTION[0]].steps[QUESTION[1]].title]


def test_the_teacher_sees_nicknames_as_plain_text_and_students_never_do():
    t, code = teacher()
    tab({"room": code, "name": "**Ann** <b>x</b>"}, token="a" * 30)
    other = tab({"room": code, "name": "Bo"}, token="b" * 30)
    t.run()
    assert "**Ann** <b>x</b>" in [x.value for x in t.text][0]   # st.text: markup shown, never rendered
    assert "Ann" not in texts(other)


def test_a_reopened_tab_keeps_its_prediction_and_a_restarted_server_keeps_the_room():
    t, code = teacher()
    s = tab({"room": code}, token="c" * 30)
    s.radio(key="lesson_choice").set_value(2).run()
    s.button(key="lesson_lock").click().run()
    room._rooms.clear()   # as after a server restart: a new connection to the same file
    again = tab({"room": code}, token="c" * 30)
    assert again.radio(key="lesson_choice").value == 2
    assert "Locked" in texts(again)
    t2 = tab(teaching_url(t), token=browser(t))   # the teacher's browser, reloaded after the restart
    assert count_text(t2).endswith("1 of 1 predicted")


@pytest.mark.parametrize("code", ["ZZZZZZZ", "<script>", "x" * 500])
def test_a_wrong_code_says_so_and_offers_to_continue_alone(code):
    s = tab({"room": code})
    assert "There is no room" in texts(s) or "not a room code" in texts(s)
    s.button(key="room_alone").click().run()
    assert_ok(s)
    assert param(s, "room") is None and any(b.key == "lesson_open_ch2" for b in s.button)


def test_an_ended_room_sends_students_on_alone_from_its_step():
    t, code = teacher()
    t.button(key="room_end").click().run()
    s = tab({"room": code})
    assert "is closed" in texts(s)
    s.button(key="room_alone").click().run()
    assert param(s, "lesson") == QUESTION[0] and param(s, "step") == str(QUESTION[1])
    assert [x.value for x in s.title] == [LESSONS[QUESTION[0]].steps[QUESTION[1] - 1].title]


def test_a_guessed_teacher_key_gives_a_students_page():
    t, code = teacher()
    s = tab({"room": code, "key": "guess", "lesson": "ch2", "step": "5"})   # an old link's key: dropped, ignored
    assert param(s, "key") is None and param(s, "room") == code
    assert not any(b.key in ("lesson_reveal", "room_end", "lesson_next", "room_take_over") for b in s.button)
    assert [x.value for x in s.title] == [LESSONS[QUESTION[0]].steps[QUESTION[1] - 1].title]


def test_the_projected_url_in_another_browser_is_a_students_page():
    t, code = teacher()
    phone = tab(teaching_url(t), token="p" * 30)   # the exact address on the projector, another browser
    keys = {b.key for b in phone.button}
    assert "lesson_lock" in keys and not keys & {"lesson_reveal", "lesson_next", "lesson_prev", "room_end",
                                                 "room_take_over", "room_pin_new"}
    assert not phone.get("toggle") or all(x.key != "room_distribution" for x in phone.toggle)
    t.run()
    assert count_text(t).endswith("0 of 1 predicted")   # it sits as a student
    assert any(b.key == "lesson_next" for b in t.button) and "read-only" not in texts(t)


def test_a_reloaded_teacher_tab_teaches_at_once(monkeypatch):
    from explorer import rooms

    monkeypatch.setattr(rooms, "HOLDER_S", 600.0)   # the old tab's claim stays fresh: only the reload's own counts
    t, code = teacher()
    again = tab(teaching_url(t), token=browser(t))
    assert "read-only" not in texts(again) and any(b.key == "lesson_next" for b in again.button)
    again.button(key="lesson_next").click().run()
    assert_ok(again)
    assert room.rooms().state(code).step == QUESTION[1]   # it moved the room (0-based: the next step)


def test_the_newest_teacher_tab_teaches_and_an_older_one_is_read_only_until_it_takes_over(monkeypatch):
    """Two tabs of the teacher's browser: the newest teaches (a reload is one), the other is read-only."""
    from explorer import rooms

    monkeypatch.setattr(rooms, "HOLDER_S", 600.0)   # AppTest has no heartbeat: the holder stays fresh
    second, code = teacher()
    first = tab(teaching_url(second), token=browser(second))   # opened after it: it holds the room now
    second.run()
    assert "read-only" in texts(second) and second.button(key="lesson_reveal").disabled
    assert not any(b.key == "lesson_next" for b in second.button)   # it cannot move the room either
    second.button(key="room_take_over").click().run()
    assert_ok(second)
    assert not second.button(key="lesson_reveal").disabled and "read-only" not in texts(second)
    assert any(b.key == "lesson_next" for b in second.button)
    first.run()
    assert "read-only" in texts(first)


def test_another_device_joins_with_the_pin_the_teacher_asks_for():
    t, code = teacher()
    assert in_popover(t, "room_pin_new") == "Another device"
    assert not t.subheader   # no PIN before it is asked for
    tablet = tab({"room": code}, token="t" * 30)   # the teacher's tablet opens the students' link
    t.button(key="room_pin_new").click().run()
    pin = t.session_state[room.SHOWN_PIN][1]
    assert [h.value for h in t.subheader] == [f"{pin[:3]} {pin[3:]}"]
    wrong = f"{(int(pin) + 1) % 10 ** 6:06d}"
    tablet.text_input(key="room_pin").input(wrong)
    tablet.button(key="room_pin_enter").click().run()
    assert "wrong PIN: 4 tries left" in texts(tablet) and not any(b.key == "lesson_next" for b in tablet.button)
    tablet.text_input(key="room_pin").input(pin)
    tablet.button(key="room_pin_enter").click().run()
    assert_ok(tablet)
    assert any(b.key == "lesson_next" for b in tablet.button) and f"Room **{code}**" in texts(tablet)
    t.run()
    assert count_text(t).endswith("0 of 0 predicted")   # the tablet gave up its student's seat


def test_presenter_view_never_shows_the_pin():
    t, code = teacher()
    t.query_params["present"] = "1"
    t.run()
    assert_ok(t)
    assert not any(b.key == "room_pin_new" for b in t.button) and any(b.key == "room_end" for b in t.button)


def test_end_room_asks_first_and_is_not_beside_show_predictions():
    t, code = teacher()
    assert in_popover(t, "room_end") == "End room" and in_popover(t, "room_distribution") is None
    row = [getattr(n, "key", None) or type(n).__name__ for n in _bar(t)]
    assert row.index("room_end_menu") - row.index("room_distribution") > 1, row   # something stands between
    assert not room.rooms().state(code).closed   # the popover only asks
    t.button(key="room_end").click().run()
    assert room.rooms().state(code).closed


def _bar(at: AppTest) -> list:
    """The children of the teacher's bar: the horizontal block holding the room's code."""
    def walk(node):
        kids = list(getattr(node, "children", {}).values())
        if any(getattr(k, "key", None) == "room_code" for k in kids):
            return kids
        for child in kids:
            found = walk(child)
            if found is not None:
                return found
        return None
    return walk(at.main)


def test_a_run_trained_in_a_room_is_named_after_the_student():
    t, code = teacher()
    s = tab({"room": code, "name": "Ann Lee"}, token="d" * 30)
    assert s.session_state[room.JOINED] == code and s.session_state[room.NICKNAME] == "Ann Lee"
    s.text_input(key=room.NICKNAME).input("Ann B").run()
    t.run()
    assert "Ann B" in [x.value for x in t.text][0]   # the teacher sees the new name
    assert room.run_name_for(code, s.session_state[room.NICKNAME]) == f"Ann-B-{code}"
    assert room.run_name_for(code, "") == room.run_name_for(code, "***") == f"student-{code}"


def test_a_tab_guessing_codes_is_slowed_down():
    s = tab({"room": "ZZZZZZ2"})
    for i in range(12):
        s.query_params["room"] = f"ZZZZZ{'23456789ABCDE'[i]}2"
        s.run()
    assert_ok(s)
    assert "Too many wrong room codes" in texts(s)
