"""A course on several servers, in real browsers: two `streamlit run` servers, each with its own runs folder,
that share one PostgreSQL (EXPLORER_DATABASE_URL, the session's server of tests/postgres.py), and Debian's
nginx in front of them with deploy/nginx.conf. A teacher on one server and students on the other follow,
lock, are counted and see the reveal, and a restart of the database mid-lesson loses no lock; through nginx
every tab stays on the server its route cookie names; one server killed mid-lesson (SIGKILL, by its pid)
moves its tabs, the teacher's among them, to the other, where they keep their seat, their step and their
lock (who: the owner cookie; what: the database)."""

import time

import pytest

from tests.browser import rooms
from tests.browser.cluster import ROUTE, AppServer, Nginx
from tests.browser.helpers import READY, TIMEOUT_MS, assert_no_exception, press, wait_rendered

pytestmark = pytest.mark.browser


def shared_env(root, database: str) -> list[dict[str, str]]:
    """Each server's environment: a runs folder of its own, one database for both."""
    return [{"EXPLORER_RUNS_DIR": str(root / f"runs{i}"), "EXPLORER_DATABASE_URL": database} for i in range(2)]


@pytest.fixture(scope="module")
def servers(tmp_path_factory, postgres):
    root = tmp_path_factory.mktemp("servers")
    apps = [AppServer(root / f"app{i}", env) for i, env in enumerate(shared_env(root, postgres.fresh_database()))]
    for i in range(len(apps)):
        (root / f"app{i}").mkdir()
    try:
        for app in apps:
            app.start()
        proxy = Nginx(root / "nginx", [app.port for app in apps]).start()
        try:
            yield apps, proxy
        finally:
            proxy.stop()
    finally:
        for app in apps:
            app.stop()


def served_by(page) -> str:
    """The app server nginx sends this tab's requests to (the last one tried, if one was down)."""
    header = page.evaluate("() => fetch('/_stcore/health', {cache: 'no-store'})"
                           ".then(r => r.headers.get('X-Explorer-Upstream'))")
    return header.split(",")[-1].strip()


def wait_reconnected(proxy, route: str, since: int, address: str, seconds: float = 60) -> None:
    """Until the tab of `route` asked for the host's config again (what the frontend does before it opens a new
    WebSocket), answered by the server at `address`: an access log line after the first `since`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(row.get("route") == route and "host-config" in row["request"] and row["upstream"].endswith(address)
               for row in proxy.access_log()[since:]):
            return
        time.sleep(0.2)
    pytest.fail(f"the tab of {route} did not reconnect to {address} within {seconds:.0f} s")


def on_step(page, k: int) -> None:
    page.wait_for_function(f"() => document.querySelector('[data-testid=stMain] h1')?.innerText === "
                           f"{rooms.TITLES[k - 1]!r}", timeout=TIMEOUT_MS)


def context_with_route(chromium, url: str, route: str | None):
    context = chromium.new_context(viewport=rooms.DESKTOP)
    if route is not None:
        context.add_cookies([{"name": ROUTE, "value": route, "url": url}])
    return context


def test_a_teacher_on_one_server_and_students_on_the_other(servers, chromium, postgres):
    (one, other), _ = servers
    contexts = [chromium.new_context(viewport=rooms.DESKTOP) for _ in range(3)]
    try:
        teacher, code = rooms.open_room(contexts[0], one.url)
        students = [rooms.open_page(c, other.url, rooms.student_path(code)) for c in contexts[1:]]
        rooms.wait_count(teacher, "2 students in the room")
        rooms.next_step(teacher, rooms.QUESTION)
        for page in students:
            on_step(page, rooms.QUESTION)
        rooms.lock(students[0], 0)
        rooms.wait_count(teacher, "1 of 2 predicted")
        postgres.down()   # mid-lesson: the polls say so, then recover by themselves; the lock is still there
        for page in (teacher, *students):
            page.wait_for_selector(".st-key-room_reconnecting", timeout=TIMEOUT_MS)
        postgres.up()
        for page in (teacher, *students):
            page.wait_for_selector(".st-key-room_reconnecting", state="detached", timeout=TIMEOUT_MS)
        rooms.wait_count(teacher, "1 of 2 predicted")
        rooms.lock(students[1], 1)
        rooms.wait_count(teacher, "2 of 2 predicted")
        for page in students:
            assert_no_exception(page)
        press(teacher, "lesson_reveal")
        for page in students:
            rooms.wait_text(page, ".st-key-lesson_result", "You predicted")
            assert_no_exception(page)
    finally:
        rooms.closing(contexts)


def test_through_nginx_tabs_stick_and_a_killed_server_s_tabs_continue_on_the_other(servers, chromium):
    """Last in the module: it kills a server."""
    apps, proxy = servers
    doomed, survivor = apps
    # Route cookies chosen so that the teacher and two students start on the server that dies, one on the other.
    routes = proxy.routes_to(doomed.address, 3)
    routes.insert(2, proxy.routes_to(survivor.address, 1)[0])
    contexts = [context_with_route(chromium, proxy.url, r) for r in routes]
    try:
        teacher, code = rooms.open_room(contexts[0], proxy.url)
        students = [rooms.open_page(c, proxy.url, rooms.student_path(code, f"s{i}"))
                    for i, c in enumerate(contexts[1:])]
        where = [served_by(page) for page in [teacher, *students]]
        assert where == [doomed.address, doomed.address, survivor.address, doomed.address], where
        rooms.wait_count(teacher, "3 students in the room")
        rooms.next_step(teacher, rooms.QUESTION)
        choices = [0, 1, 2]
        for page, choice in zip(students, choices):
            on_step(page, rooms.QUESTION)
            rooms.lock(page, choice)
        rooms.wait_count(teacher, "3 of 3 predicted")
        # Sticky: every request of a route so far went to one server (a WebSocket is logged when it closes).
        before = proxy.access_log()
        for route, address in zip(routes, where):
            assert {row["upstream"] for row in before if row.get("route") == route} == {address}, route

        doomed.kill()
        for route, address in zip(routes, where):   # Streamlit's frontend reconnects by itself, through nginx
            if address == doomed.address:
                wait_reconnected(proxy, route, len(before), survivor.address)
        for page in [teacher, *students]:
            page.wait_for_selector(READY, timeout=TIMEOUT_MS)
            wait_rendered(page)
            assert served_by(page) == survivor.address
        for route, address in zip(routes, where):   # the killed server's WebSockets were the moved tabs' own
            streams = {row["upstream"] for row in proxy.access_log()[len(before):]
                       if row.get("route") == route and "_stcore/stream" in row["request"]}
            assert (doomed.address in streams) == (address == doomed.address), (route, streams)
        # Seat and step and lock: the same room, the same question, each student's own choice, nobody counted twice.
        rooms.wait_count(teacher, "3 of 3 predicted")
        assert code in teacher.locator(".st-key-room_code").inner_text()
        for page, choice in zip(students, choices):
            assert rooms.title(page) == rooms.TITLES[rooms.QUESTION - 1]
            page.wait_for_function("() => document.querySelector('.st-key-lesson_choice input:checked')",
                                   timeout=TIMEOUT_MS)
            assert rooms.checked(page) == choice
            assert f"Locked: {rooms.CHOICES[choice]}" in page.locator("[data-testid=stMain]").inner_text()
        # The teacher still teaches from the moved tab: the reveal reaches everyone, and Next moves them on.
        teacher.wait_for_selector(".st-key-lesson_reveal button:not([disabled])", timeout=TIMEOUT_MS)
        press(teacher, "lesson_reveal")
        for page, choice in zip(students, choices):
            rooms.wait_text(page, ".st-key-lesson_result", "You predicted")
            assert rooms.CHOICES[choice] in page.locator(".st-key-lesson_result").inner_text()
            assert_no_exception(page)
        rooms.shot(students[0], "servers-student-after-failover")
        rooms.next_step(teacher, rooms.QUESTION + 1)
        for page in students:
            on_step(page, rooms.QUESTION + 1)
    finally:
        rooms.closing(contexts)
