"""The teacher's dashboard and the room's Results in real browsers against the session's `streamlit run`
server: who has locked, a countdown, pause, ask again, seen on the students' screens; a lesson written as
a TOML file taught in a room; the Results at 1280x720 and on a phone. Screenshots go to tests/screenshots/."""

import shutil
from pathlib import Path

import pytest

from tests.browser.helpers import TIMEOUT_MS, assert_no_exception, press, wait_rendered
from tests.browser.rooms import (
    DESKTOP,
    PHONE,
    TITLES,
    closing,
    lock,
    open_page,
    open_room,
    shot,
    student_path,
    title,
    wait_count,
    wait_text,
)

pytestmark = pytest.mark.browser

EXAMPLE = Path(__file__).resolve().parents[1] / "unit" / "lessons" / "files" / "pe-basics.toml"
QUESTION_STEP = 2   # module6's step 2 asks a question answered without training


def toggle(page, key: str) -> None:
    page.locator(f".st-key-{key} label").first.click()


def gone(page, selector: str) -> None:
    page.wait_for_function(f"() => !document.querySelector({selector!r})", timeout=TIMEOUT_MS)


def test_the_dashboard_drives_the_students_screens(server, chromium):
    contexts = [chromium.new_context(viewport=DESKTOP) for _ in range(3)]
    try:
        teacher, code = open_room(contexts[0], server, step=QUESTION_STEP)
        ann = open_page(contexts[1], server, student_path(code, "Ann"))
        bo = open_page(contexts[2], server, student_path(code, "<i>Bo</i>"))
        wait_text(teacher, ".st-key-room_locked", "Not yet (2)")
        wait_text(teacher, ".st-key-room_locked", "<i>Bo</i>")        # a nickname shown as text, never markup
        lock(ann, 0)
        wait_text(teacher, ".st-key-room_locked", "Locked (1)")
        assert "Ann" in teacher.locator(".st-key-room_locked").inner_text()
        shot(teacher, "room-dashboard-1280x720")
        teacher.set_viewport_size(PHONE)
        wait_rendered(teacher)
        width = teacher.evaluate("() => document.documentElement.scrollWidth")
        assert width <= PHONE["width"] + 1, width                      # the dashboard fits a phone
        teacher.locator(".st-key-room_dashboard").scroll_into_view_if_needed()
        shot(teacher, "room-dashboard-390x844")
        teacher.set_viewport_size(DESKTOP)

        press(teacher, "room_countdown")                               # the countdown: on the students' screens
        wait_text(bo, ".st-key-room_clock", "left to lock your prediction")
        wait_text(teacher, ".st-key-room_teacher_clock", "left")
        press(teacher, "room_countdown_stop")
        gone(bo, ".st-key-room_clock")

        toggle(teacher, "room_pause")                                  # pause: eyes on the teacher
        bo.wait_for_function("() => document.querySelector('[data-testid=stMain] h1')?.innerText === "
                             "'Eyes on the teacher'", timeout=TIMEOUT_MS)
        assert bo.locator(".st-key-lesson_lock").count() == 0
        shot(bo, "room-paused-student")
        toggle(teacher, "room_pause")
        bo.wait_for_function(f"() => document.querySelector('[data-testid=stMain] h1')?.innerText === "
                             f"{TITLES[QUESTION_STEP - 1]!r}", timeout=TIMEOUT_MS)

        press(teacher, "lesson_reveal")                                # reveal, then ask again
        ann.wait_for_selector(".st-key-lesson_result", timeout=TIMEOUT_MS)
        press(teacher, "room_ask_again")
        wait_count(teacher, "0 of 2 predicted")
        gone(ann, ".st-key-lesson_result")
        ann.wait_for_selector(".st-key-lesson_choice input:not([disabled])", timeout=TIMEOUT_MS)
        assert "Locked:" not in ann.locator("[data-testid=stMain]").inner_text()
        lock(ann, 1)                                                   # the class predicts afresh
        wait_count(teacher, "1 of 2 predicted")
        for page in (teacher, ann, bo):
            wait_rendered(page)
            assert_no_exception(page)
            assert not page.errors, page.errors
    finally:
        closing(contexts)


def test_a_student_who_locked_follows_the_teacher_away_and_back_without_a_broken_page(server, chromium):
    """The server reruns a student's step itself (ui/room_push.py): it must not cite messages the browser's cache
    dropped since the student's own last click, a fatal "Cached ForwardMsg MISS" that stopped the page."""
    contexts = [chromium.new_context(viewport=DESKTOP) for _ in range(2)]
    try:
        teacher, code = open_room(contexts[0], server, step=QUESTION_STEP)
        ann = open_page(contexts[1], server, student_path(code, "Ann"))
        console = []
        ann.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
        lock(ann, 0)                                                   # her own click: what her browser holds
        away = range(QUESTION_STEP + 1, QUESTION_STEP + 5)             # more runs than her cache keeps a message
        for key, step in [("lesson_next", s) for s in away] + [("lesson_prev", s) for s in reversed(away[:-1])] + [
                ("lesson_prev", QUESTION_STEP)]:
            press(teacher, key)
            wait_rendered(teacher)
            ann.wait_for_function(f"() => document.querySelector('[data-testid=stMain] h1')?.innerText === "
                                  f"{TITLES[step - 1]!r}", timeout=TIMEOUT_MS)
        assert "Locked:" in ann.locator("[data-testid=stMain]").inner_text()   # back on her question, still locked
        assert not [e for e in console if "Cached ForwardMsg MISS" in e], console
        assert not ann.errors, ann.errors
    finally:
        closing(contexts)


def test_a_lesson_file_is_taught_in_a_room_and_its_results_fit_a_projector_and_a_phone(server, chromium,
                                                                                       server_dir):
    folder = server_dir / "runs" / "lessons"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLE, folder / EXAMPLE.name)                        # a teacher's file, put in the folder
    contexts = [chromium.new_context(viewport=DESKTOP), chromium.new_context(viewport=PHONE)]
    try:
        teacher = open_page(contexts[0], server, "lessons?lesson=pe-basics&step=2&teach=1")
        teacher.wait_for_selector(".st-key-room_code", timeout=TIMEOUT_MS)
        code = teacher.locator(".st-key-room_code").inner_text().split()[-1]
        phone = open_page(contexts[1], server, student_path(code, "Cy"))
        assert title(phone) == "Which dimensions turn fastest?"
        phone.locator(".st-key-lesson_choice [role=radiogroup] label").filter(has_text="the low indices").click()
        press(phone, "lesson_lock")
        wait_count(teacher, "1 of 1 predicted")
        press(teacher, "lesson_reveal")
        wait_text(phone, ".st-key-lesson_result", "the low indices")
        results = open_page(contexts[0], server, f"lessons?results={code}")
        wait_text(results, "[data-testid=stMain]", f"Room {code}: results")
        wait_text(results, "[data-testid=stMain]", "1 of 1 right")
        assert results.locator(".st-key-room_results_csv button").is_visible()
        shot(results, "room-results-1280x720")
        mobile = contexts[1].new_page()
        mobile.goto(f"{server}/lessons?results={code}")
        wait_rendered(mobile)
        assert "No results to show" in mobile.locator("[data-testid=stMain]").inner_text()   # a student's browser
        teacher_phone = chromium.new_context(viewport=PHONE, storage_state=contexts[0].storage_state())
        contexts.append(teacher_phone)
        small = open_page(teacher_phone, server, f"lessons?results={code}")
        wait_text(small, "[data-testid=stMain]", "1 of 1 right")
        width = small.evaluate("() => document.documentElement.scrollWidth")
        assert width <= PHONE["width"] + 1, width                      # nothing wider than the phone
        shot(small, "room-results-390x844")
        for page in (teacher, phone, results, small):
            assert_no_exception(page)
    finally:
        closing(contexts)
        (folder / EXAMPLE.name).unlink(missing_ok=True)
