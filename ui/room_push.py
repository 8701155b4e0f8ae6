"""The room's news pushed to its students' sessions, so that a student at rest costs the server nothing.

Each app server process has one thread (`Followers`) that every PUSH_S reads the versions of the rooms its
students sit in, in one query (`Rooms.versions`), and, for each student whose room moved, reruns the fragment
their step is drawn in (pages/lessons.py `student`), as the browser's own fragment timer would. Before this,
every student's tab polled once a second, and each poll was a Streamlit fragment run of about 4.5 ms of server
CPU: 100 idle students held half a core (bench/README.md, "A follow that costs the server little").

A student's step registers itself every time it is drawn (`watch`): its room, the version it shows, and the
ids of its step's fragment and of the poll fragment inside it (that one says "Reconnecting" while the database
does not answer: it is what the thread reruns when the database goes away and when it answers again). A
session that closed, or whose page no longer has the step, is forgotten. A full rerun of the page draws the
step and registers it again, so a push is not lost to one; RETRY_S only guards against what was not foreseen.

The rerun is asked the way `ui/frame.py` `rerun_fragment` asks it, through Streamlit 1.67's session objects
(streamlit is pinned in requirements.txt; tests/browser's rooms tests would fail on a change).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSessionState
from streamlit.runtime.scriptrunner import RerunData, get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

from explorer.rooms import DatabaseDown, Rooms

log = logging.getLogger(__name__)

PUSH_S = 0.25     # how often a server reads its rooms' versions: a student sees a move within this plus a rerun
RETRY_S = 30.0    # a push not followed by the step's redraw in this long is sent again (unless the session is busy)


@dataclass
class Watch:
    rooms: Rooms      # the database the room is in (tests change it between sessions)
    code: str
    seen: int | None  # the room version the session's step shows
    step: str         # the fragment ids in that session: the step's, and the poll's inside it
    poll: str
    page: dict        # the session's page and query string, as its last run had them (RerunData's fields)
    pushed: float = float("-inf")   # when this version's push was sent (time.monotonic)


class Followers:
    """Whom to rerun, decided apart from how (`push(session, fragment, watch, again) -> bool`: False when the
    session or its fragment is gone; `again`, a push of this version sent before), so that it can be tested
    without a server."""

    def __init__(self, push: Callable[[str, str, Watch, bool], bool]) -> None:
        self._push = push
        self._watches: dict[str, Watch] = {}
        self._down: set[int] = set()   # the databases (by id) that did not answer at the last look
        self._lock = threading.Lock()

    def watch(self, session: str, watch: Watch) -> None:
        with self._lock:
            self._watches[session] = watch

    def forget(self, session: str) -> None:
        with self._lock:
            self._watches.pop(session, None)

    def __len__(self) -> int:
        return len(self._watches)

    def tick(self, now: float) -> int:
        """One look at every watched room; returns how many reruns it asked for."""
        with self._lock:
            watches = dict(self._watches)
        by_db: dict[int, list[tuple[str, Watch]]] = {}
        for session, w in watches.items():
            by_db.setdefault(id(w.rooms), []).append((session, w))
        pushes = []
        for key, group in by_db.items():
            try:
                versions = group[0][1].rooms.versions({w.code for _, w in group})
            except DatabaseDown:   # every poll says "Reconnecting", once; the step stays as it is
                if key not in self._down:
                    self._down.add(key)
                    pushes += [(session, w.poll, w, False) for session, w in group]
                continue
            if key in self._down:   # it answers again: every poll looks, and reruns its step if the room moved
                self._down.discard(key)
                pushes += [(session, w.poll, w, False) for session, w in group]
                continue
            for session, w in group:
                if versions.get(w.code) != w.seen and now - w.pushed >= RETRY_S:
                    pushes.append((session, w.step, w, w.pushed > float("-inf")))
                    w.pushed = now   # the step's redraw replaces this Watch; until then, no second push
        for session, fragment, w, again in pushes:
            if not self._push(session, fragment, w, again):
                self.forget(session)
        return len(pushes)

    def run(self) -> None:
        while True:
            time.sleep(PUSH_S)
            try:
                self.tick(time.monotonic())
            except Exception:   # a bug must not end every student's follow: it is logged, the next look goes on
                log.exception("the room push failed")


def _rerun(session_id: str, fragment: str, watch: Watch, again: bool) -> bool:
    """Ask session `session_id` to rerun `fragment` (on its event loop, as a message from its browser would be
    handled); False when the session closed or no longer has the fragment. Sent `again`, it waits while the
    session runs: its step may be on its way already (300 students on one server took 14 s, bench/README.md)."""
    # AppTest's runtime is a mock without sessions: nothing to push to (and a traceback logged every tick
    # made Python 3.11.7's traceback carets call ast.parse beside the script's own: a SystemError)
    manager = getattr(Runtime.instance(), "_session_mgr", None) if Runtime.exists() else None
    if manager is None:
        return False
    info = manager.get_active_session_info(session_id)
    if info is None or not info.session.has_fragment(fragment):
        return False
    session = info.session
    if again and session._state == AppSessionState.APP_IS_RUNNING:
        return True
    # Queued after a run in progress, as the browser's own fragment timer: a fragment-scoped rerun would stop
    # that run and start again, and a class whose reruns outlast RETRY_S would never finish one (bench/README.md).
    # No widget states: a pending click of the student's keeps its own, never the last run's older ones.
    data = RerunData(**watch.page, fragment_id_queue=[fragment], is_auto_rerun=True)

    def request() -> None:
        runner = session._scriptrunner
        if runner is None or not runner.request_rerun(data):
            session._create_scriptrunner(data)

    session._call_soon_on_event_loop(request)
    return True


_FOLLOWERS: list[Followers] = []
_START = threading.Lock()


def followers() -> Followers:
    """This server's one `Followers`, its thread started on first use."""
    with _START:
        if not _FOLLOWERS:
            _FOLLOWERS.append(Followers(_rerun))
            threading.Thread(target=_FOLLOWERS[0].run, name="room-push", daemon=True).start()
        return _FOLLOWERS[0]


def available() -> bool:
    """Whether this process is a server that can push (not AppTest, whose reruns are the test's own)."""
    return Runtime.exists()


def fragment_id() -> str | None:
    """The id of the fragment running now (None outside one)."""
    return ThreadState.get().fragment_id


def watch(rooms: Rooms, code: str, seen: int | None, step: str | None, poll: str | None) -> bool:
    """Register this session's step for pushes; False (nothing registered) when `available()` is not."""
    ctx = get_script_run_ctx()
    if ctx is None or step is None or poll is None or not available():
        return False
    # No cached_message_hashes: they are what the browser held at its own last request, and it drops a
    # message three runs after it last used it; a reference to one it dropped is a fatal "Cached ForwardMsg
    # MISS" in the browser, which stops the page until it reconnects (bench/README.md, "pushed, not polled").
    page = {"query_string": ctx.query_string, "page_script_hash": ctx.page_script_hash,
            "context_info": ctx.context_info}
    followers().watch(ctx.session_id, Watch(rooms, code, seen, step, poll, page))
    return True


__all__ = ["PUSH_S", "RETRY_S", "Followers", "Watch", "available", "fragment_id", "followers", "watch"]
