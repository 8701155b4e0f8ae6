"""A class in one room, in real browsers against one real `streamlit run` server: a teacher and eight
students (one browser context, so one owner cookie and one seat, each), the faults a lesson meets (a
restarted server, a closed tab, two teacher tabs, a reload) and bad links, nicknames and lock floods. No
URL carries authority: a browser given the projected teacher's URL is a student. The module's server has
EXPLORER_PUBLIC_URL set (PUBLIC), so the invite names that address.

The students' lag behind the teacher is measured in the pages themselves (a MutationObserver stamps when
a step's title or the answer first appears, on the browser's clock, the one the teacher's click is read
on) and printed: run with `-s` to see it. Only a generous bound is asserted (the issue asks for 2 s; a
swamped 2-core CI machine gets 20)."""

import re
import statistics
import time

import pytest

from explorer.rooms.invite import qr_svg
from tests.browser.helpers import (
    READY,
    TIMEOUT_MS,
    assert_no_exception,
    press,
    wait_rendered,
)
from tests.browser.rooms import (
    CHOICES,
    DESKTOP,
    FLOOD,
    FOLLOW_S,
    NICKNAMES,
    OPTION,
    PHONE,
    PUBLIC,
    QUESTION,
    RIGHT,
    STAMPS,
    STUDENTS,
    TEACHER_ONLY,
    TITLES,
    Server,
    checked,
    closing,
    lags,
    lock,
    next_step,
    open_page,
    open_room,
    shot,
    student_path,
    title,
    wait_count,
    wait_text,
    word,
)

pytestmark = pytest.mark.browser

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = Server(tmp_path_factory.mktemp("rooms"))
    running.start()
    try:
        yield running
    finally:
        running.stop()


# ------------------------------------------------------------------------------------------ a class
def test_a_teacher_and_eight_students_follow_lock_and_see_the_reveal(server, chromium):
    url = server.url
    contexts = [chromium.new_context(viewport=DESKTOP)]
    try:
        teacher, code = open_room(contexts[0], url)
        assert title(teacher) == TITLES[0]
        who = teacher.locator("[data-testid=stPopover] button:has-text('Who is here')")
        who.click()   # left open while the class arrives: it fills in by itself
        wait_text(teacher, "[data-testid=stPopoverBody]", "Nobody has joined yet.")
        for i in range(STUDENTS):
            contexts.append(chromium.new_context(viewport=PHONE if i == 0 else DESKTOP))
            contexts[-1].add_init_script(STAMPS)
        students = []
        for context, nickname in zip(contexts[1:], NICKNAMES):
            page = context.new_page()
            page.errors = []
            page.on("pageerror", lambda err, page=page: page.errors.append(str(err)))
            page.goto(f"{url}/{student_path(code, nickname)}", wait_until="commit")
            students.append(page)
        for page in students:
            wait_rendered(page)
            assert title(page) == TITLES[0]
        wait_count(teacher, f"{STUDENTS} students in the room")
        wait_text(teacher, "[data-testid=stPopoverBody]", word(NICKNAMES[0]))   # no click of the teacher's since
        teacher.keyboard.press("Escape")

        followed = lags(students, f"h1:{TITLES[1]}", next_step(teacher, 2))
        for page in students:
            assert title(page) == TITLES[1]
            wait_rendered(page)
            assert_no_exception(page)
            # Students cannot move the room, nor reveal it.
            for key in TEACHER_ONLY:
                assert page.locator(f".st-key-{key}").count() == 0, key
        assert max(followed) < FOLLOW_S, followed

        choices = [i % len(CHOICES) for i in range(STUDENTS)]
        for n, (page, choice) in enumerate(zip(students, choices), 1):
            lock(page, choice)
            if n == 1:
                wait_count(teacher, f"1 of {STUDENTS} predicted")
        wait_count(teacher, f"{STUDENTS} of {STUDENTS} predicted")
        shot(students[0], "room-student-phone")

        revealed_at = teacher.evaluate("Date.now()")
        press(teacher, "lesson_reveal")
        revealed = lags(students, "result", revealed_at)
        assert max(revealed) < FOLLOW_S, revealed
        for page, choice in zip(students, choices):
            result = page.locator(".st-key-lesson_result")
            # a wait on "Measured" alone once read the result mid-draw: its verdict there, its metrics not yet
            wait_text(page, ".st-key-lesson_result", "You predicted")
            text = result.inner_text()
            assert "You predicted" in text and CHOICES[choice] in text and RIGHT in text, text
            assert_no_exception(page)
        teacher.locator(".st-key-lesson_result").wait_for(timeout=TIMEOUT_MS)
        wait_rendered(teacher)
        assert "The class predicted" in teacher.locator(".st-key-lesson_result").inner_text()
        shot(teacher, "room-teacher-1280x720")

        # Nicknames: the teacher's alone, as plain text; no student sees another's.
        names = [n for n in NICKNAMES if n is not None]
        for page, own in zip(students, NICKNAMES):
            html = page.content()
            others = [word(n) for n in names if n != own]
            assert not [w for w in others if w in html], (own, [w for w in others if w in html])
        teacher.locator("[data-testid=stPopover] button:has-text('Who is here')").click()
        body = teacher.locator("[data-testid=stPopoverBody]:visible")
        body.wait_for(timeout=TIMEOUT_MS)
        listed = body.inner_text()
        assert all(n in listed for n in names), listed     # the literal markup, not rendered
        assert listed.count("anonymous") == NICKNAMES.count(None)
        assert body.locator("b, i, strong, em, code").count() == 0
        shot(teacher, "room-teacher-who-is-here")
        teacher.keyboard.press("Escape")
        teacher.locator("[data-testid=stPopover] button:has-text('Invite')").click()
        invite = teacher.locator("[data-testid=stPopoverBody]:visible")
        qr = invite.locator("[data-testid=stImage] img")
        qr.wait_for(timeout=TIMEOUT_MS)
        assert qr.evaluate("img => img.complete && img.naturalWidth > 0")   # the QR code drawn
        link = invite.locator("[data-testid=stCode]").text_content().strip()
        assert link == f"{PUBLIC}/lessons?room={code}", link   # EXPLORER_PUBLIC_URL, not the page's 127.0.0.1
        # The QR code's modules are segno's drawing of exactly that link (segno draws a text the same way every
        # time; Streamlit adds an xmlns to the SVG it serves, so the path is compared).
        drawn = qr.evaluate("img => fetch(img.src).then(r => r.text())")
        modules = re.findall(r' d="([^"]+)"', drawn)
        assert modules and modules == re.findall(r' d="([^"]+)"', qr_svg(link)), drawn[:200]
        shot(teacher, "room-teacher-invite")
        errors = {i: page.errors for i, page in enumerate([teacher, *students]) if page.errors}
        assert not errors, errors
    finally:
        closing(contexts)
    print(f"\nroom of {STUDENTS}: students showed the teacher's next step {statistics.median(followed):.2f} s "
          f"(median) / {max(followed):.2f} s (max) after the click, the answer {statistics.median(revealed):.2f} s / "
          f"{max(revealed):.2f} s after Reveal")


# ------------------------------------------------------------------------------------------ faults
def test_a_reopened_tab_keeps_its_prediction_and_the_older_teacher_tab_is_read_only(server, chromium):
    url = server.url
    contexts = [chromium.new_context(viewport=DESKTOP) for _ in range(2)]
    try:
        teacher, code = open_room(contexts[0], url, step=QUESTION)
        student = open_page(contexts[1], url, student_path(code, "Gusword"))
        lock(student, 2)
        student.close()   # (b) the tab closed and opened again: the same browser, so the same seat
        student = open_page(contexts[1], url, student_path(code))
        student.wait_for_selector(".st-key-lesson_choice input:checked", timeout=TIMEOUT_MS)
        assert checked(student) == 2
        assert f"Locked: {CHOICES[2]}" in student.locator("[data-testid=stMain]").inner_text()
        wait_count(teacher, "1 of 1 predicted")

        # (c) the teacher's link in a second tab of the teacher's browser: it teaches, the first turns read-only.
        second = open_page(contexts[0], url, teacher.url.split("/", 3)[3])
        second.wait_for_selector(".st-key-lesson_reveal button:not([disabled])", timeout=TIMEOUT_MS)
        wait_text(teacher, "[data-testid=stMain]", "read-only")   # its heartbeat sees the room taken
        wait_rendered(teacher)
        assert teacher.locator(".st-key-room_end_menu").count() == 0
        assert teacher.locator(".st-key-lesson_reveal button").is_disabled()
        shot(teacher, "room-teacher-read-only")
        press(teacher, "room_take_over")   # and back
        teacher.wait_for_selector(".st-key-room_end_menu", timeout=TIMEOUT_MS)
        teacher.wait_for_selector(".st-key-lesson_reveal button:not([disabled])", timeout=TIMEOUT_MS)
        teacher.wait_for_function("() => !document.querySelector('[data-testid=stMain]').innerText"   # the old run's
                                  ".includes('read-only')", timeout=TIMEOUT_MS)   # warning stays until the rerun ends
        wait_text(second, "[data-testid=stMain]", "read-only")
        wait_rendered(second)
        assert second.locator(".st-key-lesson_reveal button").is_disabled()
        press(teacher, "lesson_reveal")
        wait_text(student, ".st-key-lesson_result", "Measured")
        for page in (teacher, second, student):
            assert_no_exception(page)
    finally:
        closing(contexts)


def test_the_projected_url_gives_no_authority_and_a_reloaded_teacher_tab_teaches_at_once(server, chromium):
    url = server.url
    contexts = [chromium.new_context(viewport=DESKTOP), chromium.new_context(viewport=PHONE)]
    try:
        teacher, code = open_room(contexts[0], url, step=QUESTION)
        projected = teacher.url.split("/", 3)[3]   # the exact address a phone photographs off the projector
        phone = open_page(contexts[1], url, projected)
        phone.wait_for_selector(".st-key-room_nickname", timeout=TIMEOUT_MS)   # a student's page
        for key in TEACHER_ONLY:   # it can neither advance, reveal, end nor take over the room
            assert phone.locator(f".st-key-{key}").count() == 0, key
        phone.locator(".st-key-room_i_teach button").first.click()   # a guessed PIN is refused
        phone.locator(".st-key-room_pin input").fill("123456")
        press(phone, "room_pin_enter")
        wait_text(phone, "[data-testid=stAlert]", "PIN")
        for key in TEACHER_ONLY:
            assert phone.locator(f".st-key-{key}").count() == 0, key
        assert_no_exception(phone)
        wait_count(teacher, "0 of 1 predicted")   # it sits as a student; the teacher still teaches
        assert "read-only" not in teacher.locator("[data-testid=stMain]").inner_text()
        shot(phone, "room-projected-url-on-a-phone")

        teacher.reload()   # the teacher's own tab: its browser's cookie is its seat, at once
        wait_rendered(teacher)
        teacher.wait_for_selector(".st-key-lesson_next button:not([disabled])", timeout=5_000)
        assert "read-only" not in teacher.locator("[data-testid=stMain]").inner_text()
        press(teacher, "lesson_next")
        teacher.wait_for_function(f"() => document.querySelector('[data-testid=stMain] h1')?.innerText === "
                                  f"{TITLES[QUESTION]!r}", timeout=TIMEOUT_MS)
        phone.wait_for_function(f"() => document.querySelector('[data-testid=stMain] h1')?.innerText === "
                                f"{TITLES[QUESTION]!r}", timeout=TIMEOUT_MS)   # the class followed
        for page in (teacher, phone):
            assert_no_exception(page)
    finally:
        closing(contexts)


# ------------------------------------------------------------------------------------------ bad input
def test_bad_codes_keys_nicknames_and_a_lock_flood_are_refused_politely(server, chromium):
    url = server.url
    contexts = [chromium.new_context(viewport=DESKTOP) for _ in range(4)]
    try:
        teacher, code = open_room(contexts[0], url, step=QUESTION)
        wrong = contexts[1].new_page()
        for path in ("lessons?room=ZZZZZZZ", "lessons?room=%3Cscript%3E", "lessons?room=" + "9" * 300):
            wrong.goto(f"{url}/{path}")
            wait_rendered(wrong)
            wrong.wait_for_selector(".st-key-room_alone button", timeout=TIMEOUT_MS)
            assert "There is no room" in wrong.locator("[data-testid=stAlert]").first.inner_text()
            assert_no_exception(wrong)
            assert wrong.locator("[data-testid=stMain] script").count() == 0
        shot(wrong, "room-bad-code")
        press(wrong, "room_alone")   # on by oneself: the lessons to choose from
        wrong.wait_for_selector(".st-key-lesson_open_module6", timeout=TIMEOUT_MS)
        wrong.wait_for_function("() => !location.search.includes('room=')", timeout=TIMEOUT_MS)  # URL follows

        guessed = open_page(contexts[1], url, f"lessons?room={code}&key=guess")   # an old teacher link's key
        guessed.wait_for_selector(".st-key-room_nickname", timeout=TIMEOUT_MS)
        guessed.wait_for_function("() => !location.search.includes('key=')", timeout=TIMEOUT_MS)  # dropped
        for key in (*TEACHER_ONLY, "room_count"):
            assert guessed.locator(f".st-key-{key}").count() == 0, key
        assert_no_exception(guessed)

        for context, name in zip(contexts[2:], ["x" * 10_000, "a%00b%07c%1B%5B31md%E2%80%AE%0A%7Fe"]):
            page = open_page(context, url, f"lessons?room={code}&name={name}")
            page.wait_for_selector(".st-key-room_nickname", timeout=TIMEOUT_MS)
            assert_no_exception(page)
        wait_count(teacher, "0 of 3 predicted")   # the guessed key sits as a student

        flooder, other = contexts[2].pages[0], contexts[3].pages[0]
        flooder.locator(OPTION).nth(1).click()
        flooder.wait_for_selector(".st-key-lesson_lock button:not([disabled])", timeout=TIMEOUT_MS)
        started = time.monotonic()
        flooder.evaluate(FLOOD)
        flood = time.monotonic() - started
        wait_text(flooder, "[data-testid=stAlert]", "too many locks")
        assert_no_exception(flooder)
        shot(flooder, "room-too-many-locks")
        lock(other, 0)   # another student's lock goes through meanwhile
        wait_count(teacher, "2 of 3 predicted")
        assert_no_exception(other)
    finally:
        closing(contexts)
    print(f"\nlock flood: 100 clicks in {flood:.1f} s")


def test_a_restarted_server_keeps_the_room_its_step_and_every_prediction(server, chromium):
    """Last in the module: the pages of the tests before it would reconnect to the new server too."""
    choices, url = [1, 2], server.url
    contexts = [chromium.new_context(viewport=DESKTOP) for _ in range(1 + len(choices))]
    try:
        teacher, code = open_room(contexts[0], url, step=QUESTION)
        students = [open_page(c, url, student_path(code)) for c in contexts[1:]]
        for page, choice in zip(students, choices):
            lock(page, choice)
        wait_count(teacher, f"{len(choices)} of {len(choices)} predicted")
        server.stop()
        for page in [teacher, *students]:   # the server is gone: every page says so
            page.wait_for_selector("[data-testid=stApp]:not([data-test-connection-state=CONNECTED])", timeout=30_000)
        server.start()   # the same port, the same runs folder
        restarted = time.monotonic()
        for page in [teacher, *students]:   # Streamlit's frontend reconnects by itself and reruns
            page.wait_for_selector(READY, timeout=TIMEOUT_MS)
            wait_rendered(page)
        back = time.monotonic() - restarted
        wait_count(teacher, f"{len(choices)} of {len(choices)} predicted")
        assert title(teacher) == TITLES[QUESTION - 1] and code in teacher.locator(".st-key-room_code").inner_text()
        for page, choice in zip(students, choices):
            assert title(page) == TITLES[QUESTION - 1]
            page.wait_for_function("() => document.querySelector('.st-key-lesson_choice input:checked')",
                                   timeout=TIMEOUT_MS)
            assert checked(page) == choice
            assert f"Locked: {CHOICES[choice]}" in page.locator("[data-testid=stMain]").inner_text()
        students[0].reload()   # and a reload after the restart finds it too
        wait_rendered(students[0])
        students[0].wait_for_selector(".st-key-lesson_choice input:checked", timeout=TIMEOUT_MS)
        assert checked(students[0]) == choices[0]
        # The teacher still teaches: Reveal reaches the students.
        teacher.wait_for_selector(".st-key-lesson_reveal button:not([disabled])", timeout=TIMEOUT_MS)
        authority = time.monotonic() - restarted   # the old tab's heartbeat has to go silent for HOLDER_S
        press(teacher, "lesson_reveal")
        for page in students:
            wait_text(page, ".st-key-lesson_result", "Measured")
            assert_no_exception(page)
        shot(teacher, "room-teacher-after-restart")
    finally:
        closing(contexts)
    print(f"\nrestart: the pages reconnected and redrew {back:.1f} s after the new server answered; the "
          f"teacher's tab taught again after {authority:.1f} s")
