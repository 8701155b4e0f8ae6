"""The teacher's controls during class and the class's answers afterwards: explorer/rooms/conduct.py,
results.py and report.py on a temporary SQLite file with a clock the test moves."""

import csv
import io

import pytest

from explorer import rooms as R
from explorer.lessons import LESSONS
from explorer.rooms import RoomError
from explorer.rooms import report as room_report
from tests.unit.rooms.samples import TEACHER, seat

PERMUTATION = 0   # ch2 step 1: a choice question whose reveal needs no experiment (the right choice: index 1)
NUMBER = 4        # ch2 step 5: a number question, also measured live


def test_pause_and_resume_move_the_version_students_poll(db, room):
    code, teacher = room
    v = db.version(code)
    db.pause(code, teacher, True)
    assert db.state(code).paused and db.version(code) == v + 1
    db.pause(code, teacher, False)
    assert not db.state(code).paused and db.version(code) == v + 2
    with pytest.raises(RoomError, match="does not teach"):
        db.pause(code, "someone-elses-owner-id", True)


def test_a_countdown_closes_locks_but_leaves_the_reveal_to_the_teacher(db, room, clock):
    code, teacher = room
    db.join(code, seat(0), "Ada")
    db.join(code, seat(1), "Bo")
    deadline = db.start_countdown(code, teacher, 30)
    assert db.state(code).deadline == deadline == clock.now + 30
    db.predict(code, seat(0), "ch2", 0, 1)
    clock.now += 31
    with pytest.raises(RoomError, match="time is up"):
        db.predict(code, seat(1), "ch2", 0, 1)
    assert not db.state(code).revealed          # the countdown never reveals
    db.move(code, teacher, "ch2", 1)             # a move drops the countdown
    assert db.state(code).deadline is None
    db.predict(code, seat(1), "ch2", 1, 0)
    for bad in (0, 4, 601, "30", True, float("nan")):
        with pytest.raises(RoomError, match="5 to 600"):
            db.start_countdown(code, teacher, bad)
    db.start_countdown(code, teacher, 60)
    db.stop_countdown(code, teacher)
    assert db.state(code).deadline is None


def test_ask_again_clears_this_questions_locks_and_reveal_only(db, room):
    code, teacher = room
    for n in range(3):
        db.join(code, seat(n), f"S{n}")
        db.predict(code, seat(n), "ch2", 0, n % 2)
    db.move(code, teacher, "ch2", 1)
    db.predict(code, seat(0), "ch2", 1, 2)
    db.move(code, teacher, "ch2", 0)
    db.reveal(code, teacher, "ch2", 0)
    with pytest.raises(RoomError, match="predictions are closed"):
        db.predict(code, seat(0), "ch2", 0, 1)
    v = db.version(code)
    db.ask_again(code, teacher, "ch2", 0)
    assert db.version(code) > v and not db.state(code).revealed
    assert db.count(code, "ch2", 0) == (0, 3) and db.count(code, "ch2", 1) == (1, 3)   # the other step keeps its lock
    db.predict(code, seat(2), "ch2", 0, 1)       # the class predicts afresh
    assert db.prediction(code, seat(2), "ch2", 0) == 1
    with pytest.raises(RoomError, match="another step"):
        db.ask_again(code, teacher, "ch2", 1)


def test_hiding_the_reveal_keeps_predictions_closed(db, room):
    code, teacher = room
    db.join(code, seat(0))
    with pytest.raises(RoomError, match="nothing to hide"):
        db.hide_reveal(code, teacher, "ch2", 0, True)
    db.reveal(code, teacher, "ch2", 0)
    db.hide_reveal(code, teacher, "ch2", 0, True)
    state = db.state(code)
    assert state.revealed and state.reveal_hidden
    with pytest.raises(RoomError, match="predictions are closed"):
        db.predict(code, seat(0), "ch2", 0, 1)
    db.hide_reveal(code, teacher, "ch2", 0, False)
    assert not db.state(code).reveal_hidden


def test_who_has_locked_is_the_teachers_in_joining_order(db, room):
    code, teacher = room
    for n, name in enumerate(["Ada", "", "<b>Cy</b>"]):
        db.join(code, seat(n), name)
    db.predict(code, seat(2), "ch2", 0, 0)
    assert db.locks(code, teacher, "ch2", 0) == [("Ada", False), ("anonymous", False), ("<b>Cy</b>", True)]
    with pytest.raises(RoomError, match="only the teacher"):
        db.locks(code, "a-students-owner-id", "ch2", 0)


def test_a_v3_file_upgrades_to_the_controls(tmp_path, clock):
    import sqlite3

    from explorer.rooms import db as rooms_db
    path = tmp_path / "v3.sqlite"
    old = sqlite3.connect(path)
    for statements in rooms_db.MIGRATIONS[:3]:
        for statement in statements:
            old.execute(statement)
    old.execute("INSERT INTO rooms (code, teacher_hash, lesson, step, created, touched) "
                "VALUES ('ABCDEFG', '', 'ch2', 2, 1, ?)", (clock.now,))
    old.execute("INSERT INTO reveals VALUES ('ABCDEFG', 'ch2', 2, 1)")
    old.execute("PRAGMA user_version = 3")
    old.commit()
    old.close()
    rooms = R.Rooms(path, clock=clock)
    state = rooms.state("ABCDEFG")
    assert state.revealed and not state.reveal_hidden and not state.paused and state.deadline is None
    rooms.close()


def test_room_days_come_from_the_setting_or_say_why_not(monkeypatch, tmp_path, clock):
    monkeypatch.delenv(R.ROOM_DAYS, raising=False)
    assert R.room_days() == (30.0, None)
    monkeypatch.setenv(R.ROOM_DAYS, "3")
    assert R.room_days() == (3.0, None)
    for bad in ("0", "a week", "1e9", "nan"):
        monkeypatch.setenv(R.ROOM_DAYS, bad)
        days, problem = R.room_days()
        assert days == 30.0 and "EXPLORER_ROOM_DAYS" in problem and "1 to 3650" in problem
    monkeypatch.setenv(R.ROOM_DAYS, "2")
    rooms = R.Rooms(tmp_path / "r.sqlite", clock=clock)
    code = rooms.create("ch2", 0, TEACHER)
    clock.now += 1.5 * 86_400
    rooms.create("ch2", 0, TEACHER)
    assert rooms.state(code) is not None       # 1.5 days: kept
    clock.now += 0.6 * 86_400
    rooms.create("ch2", 0, TEACHER)
    assert rooms.state(code) is None           # past 2 days idle: deleted
    rooms.close()


def _class(db, code, teacher):
    """Three students: two lock the permutation question (one right), one the number question."""
    for n, name in enumerate(["Ada", "Bo", "=HYPERLINK(\"x\")"]):
        db.join(code, seat(n), name)
    db.predict(code, seat(0), "ch2", PERMUTATION, 1)
    db.predict(code, seat(1), "ch2", PERMUTATION, 0)
    db.reveal(code, teacher, "ch2", PERMUTATION)
    db.move(code, teacher, "ch2", NUMBER)
    db.predict(code, seat(2), "ch2", NUMBER, 12.5)


def test_the_results_hold_every_students_answer_per_question(db, room):
    code, teacher = room
    _class(db, code, teacher)
    with pytest.raises(RoomError, match="only the teacher"):
        db.answers(code, "a-students-owner-id")
    answers = db.answers(code, teacher)
    assert [(a.step, a.nickname, a.value) for a in answers] == [
        (PERMUTATION, "Ada", 1), (PERMUTATION, "Bo", 0), (PERMUTATION, '=HYPERLINK("x")', None),
        (NUMBER, "Ada", None), (NUMBER, "Bo", None), (NUMBER, '=HYPERLINK("x")', 12.5)]
    rows, summaries = room_report.build(answers)
    question = LESSONS["ch2"].steps[PERMUTATION].question
    first = summaries[0]
    assert (first.step, first.prompt, first.locked, first.students) == (1, question.prompt, 2, 3)
    assert first.counts == {c: (1 if i in (0, 1) else 0) for i, c in enumerate(question.choices)}
    assert (first.right, first.decided) == (1, 2)           # choice 1 (the same vectors) is measured right
    assert rows[0]["correct"] == "yes" and rows[1]["correct"] == "no" and rows[2]["correct"] == ""
    assert rows[0]["prediction"] == question.choices[1] and rows[5]["prediction"] == "12.5"
    parsed = list(csv.DictReader(io.StringIO(room_report.to_csv(rows))))
    assert tuple(parsed[0]) == room_report.COLUMNS and len(parsed) == 6
    assert parsed[0]["locked_at"].endswith("Z") and parsed[2]["locked_at"] == ""
    assert parsed[2]["nickname"] == '\'=HYPERLINK("x")' and parsed[5]["prediction"] == "12.5"   # no formula
    anonymous, _ = room_report.build(answers, anonymise=True)
    assert [r["nickname"] for r in anonymous[:3]] == ["student 1", "student 2", "student 3"]


def test_the_offline_page_escapes_every_name_and_fetches_nothing(db, room):
    code, teacher = room
    db.join(code, seat(0), "<img src=x onerror=alert(1)>")
    db.predict(code, seat(0), "ch2", PERMUTATION, 1)
    rows, summaries = room_report.build(db.answers(code, teacher))
    page = room_report.to_html(code, "ch2", rows, summaries, 30)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script" not in page and "http" not in page and "30 days" in page


def test_a_teacher_lists_their_own_rooms_only(db, clock):
    first = db.create("ch2", 0, TEACHER)
    clock.now += 10
    second = db.create("module6", 0, TEACHER)
    db.create("ch2", 0, "another-teachers-id-0002")
    db.join(second, seat(0))
    db.end(first, TEACHER)
    mine = db.teacher_rooms(TEACHER)
    assert [(r.code, r.lesson, r.closed, r.students) for r in mine] == [(second, "module6", False, 1),
                                                                       (first, "ch2", True, 0)]
    assert db.teacher_rooms("not a token!") == [] and len(db.kept_rooms()) == 3
