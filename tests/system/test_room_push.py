"""A student at rest costs the server nothing, and the room's moves still reach every screen (ui/room_push.py):
a real `streamlit run` and protocol students (bench/room_client.py, Streamlit's own websocket, no renderer), the
room moved through its database as the teacher's tab moves it. The Followers' rules without a server: unit tests
in tests/unit/test_room_followers.py."""

import time

from bench.room_client import Student
from explorer.lessons import LESSONS
from explorer.rooms import Rooms
from tests.browser.helpers import streamlit_server

LESSON, QUESTION = "module6", 1          # 0-based step 1 asks a question whose reveal needs no experiment
TITLES = [step.title for step in LESSONS[LESSON].steps]
TEACHER, TAB = "push-test-teacher-owner", "push-test-teacher-tab"
ARRIVE_S = 30.0                           # generous for a loaded 2-core machine; seconds, not a timing claim


def wait_for(condition, seconds: float = ARRIVE_S) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_students_at_rest_run_nothing_and_every_move_and_reveal_reaches_them(tmp_path):
    url_db = f"sqlite:///{tmp_path / 'rooms.sqlite'}"
    rooms = Rooms(url_db)
    code = rooms.create(LESSON, 0, TEACHER)
    assert rooms.claim(code, TEACHER, TAB)
    with streamlit_server(tmp_path, env={"EXPLORER_DATABASE_URL": url_db}) as url:
        students = [Student(url, f"push-test-student-{i:02d}-xxxxxxxx", f"room={code}") for i in range(3)]
        try:
            for s in students:
                s.start()
            assert all(s.wait_rendered(90) for s in students), [s.errors for s in students]
            assert wait_for(lambda: all(TITLES[0] in s.titles for s in students))
            time.sleep(1.0)   # the first runs' tails
            before = [s.runs for s in students]
            time.sleep(3.0)
            assert [s.runs for s in students] == before   # at rest: no poll, no rerun
            assert all(not s._timers for s in students)   # ... and no fragment timer on the page

            full = [s.full_runs for s in students]
            rooms.move(code, TEACHER, LESSON, QUESTION, TAB)
            assert wait_for(lambda: all(TITLES[QUESTION] in s.titles for s in students)), [
                sorted(s.titles) for s in students]
            assert [s.full_runs for s in students] == full   # the step's fragment reran, not the page

            rooms.reveal(code, TEACHER, LESSON, QUESTION, TAB)
            assert wait_for(lambda: all(s.result is not None for s in students))
            assert all(not s.errors for s in students), [s.errors for s in students]
        finally:
            for s in students:
                s.close()
