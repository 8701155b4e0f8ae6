"""A class in one room: students follow the teacher's lesson step by step (explorer/rooms keeps the
room, its step and every locked prediction in its database, SQLite by default or EXPLORER_DATABASE_URL,
so a server restart loses nothing).

    lessons?lesson=ch2&step=3&teach=1      the teacher opens a room; the URL becomes
    lessons?lesson=ch2&step=3&room=CODE    the same for everyone: a phone given the projected URL is a student
    lessons?room=CODE[&name=NICK]          the invite; the nickname is shown to the teacher only

No URL carries authority. The teacher's seat is the browser that opened the room, known by its owner
cookie (ui/owner.py; the rooms file keeps a hash of its owner id): a reload, or another tab of that
browser, teaches at once (the other tab turns read-only, *Teach from this tab* takes it back). Another
device of the teacher's joins with a PIN, shown on request under *Another device* (never in presenter
view) and typed under *I'm the teacher* on that device. An old link's `key=` is dropped: it is a student's.

A student's seat is a hash of this browser's owner token too, so a closed and reopened tab finds its
prediction again. When the room moves, the server reruns each student's step fragment (pages/lessons.py
`student`; ui/room_push.py), so a student at rest costs nothing; a read-only teacher tab polls the room's
version about once a second (each session at its own pace) and reruns its page when it moved.
"""

from __future__ import annotations

import hashlib
import os
import random
import time
from dataclasses import dataclass

import streamlit as st

from explorer.lessons import Lesson, Question, find_lesson
from explorer.quoting import md, md_text
from explorer.rooms import (
    MAX_NICKNAME,
    PIN_DIGITS,
    DatabaseDown,
    RoomError,
    Rooms,
    RoomState,
    new_id,
    sanitise_nickname,
)
from explorer.store.database import DatabaseUrlError, database_url, rooms_url
from explorer.store.runs import safe_name
from ui import owner, room_push
from ui.frame import live_fragment, rerun_fragment

ROOM, TEACH, NAME = "room", "teach", "name"                 # URL parameters (a contract)
OLD_KEY = "key"              # the teacher key old links carried: dropped from the address bar, ignored
CODE, COUNT, UNREACHABLE = "room_code", "room_count", "room_unreachable"   # element keys (a contract)
DISTRIBUTION, END, TAKE_OVER, ALONE = "room_distribution", "room_end", "room_take_over", "room_alone"
END_MENU = "room_end_menu"   # the popover End room opens: `END` inside it ends the room
CLOCK = "room_clock"         # the countdown's time left on a student's screen
RECONNECTING = "room_reconnecting"   # a poll's note while the database does not answer
DEVICE, PIN_NEW = "room_device", "room_pin_new"             # the teacher's *Another device* popover, its button
PIN, PIN_ENTER, I_TEACH = "room_pin", "room_pin_enter", "room_i_teach"   # typing the PIN on the other device
NICKNAME = "room_nickname"
TAB = "_room_tab"            # this teacher tab's id: one tab holds a room, another is read-only
CLAIMED = "_room_claimed"    # the room this session claimed: its first claim takes the room over
JOINED = "_room_joined"      # the room this session has taken its seat in
SEEN = "_room_seen"          # the room version this student's page shows
MISSES = "_room_misses"      # when this session named a room that does not exist
MAX_MISSES, MISS_WINDOW_S = 10, 60.0
PROBLEM = "_room_problem"    # what went wrong with a room link, said once
SHOWN_PIN = "_room_pin_shown"   # (room, PIN, expiry) the teacher asked for, shown in this session only
MAX_BARS = 10               # a number question's predictions are binned beyond this many values
POLL_S = 1.0                 # a read-only teacher tab's poll, a countdown's clock, a database's retry
POLL_SPREAD = 0.2            # a student's poll is POLL_S less up to this share, fixed per session: staggered
PACE = "_room_poll_s"        # this session's poll interval
POLL_ID = "_room_poll_id"    # the id of the fragment `student_poll` drew in this session
STEP = "room_step"           # the key of the fragment a student's step is drawn in: the poll reruns it alone


@st.cache_resource(show_spinner=False)
def _rooms(url: str) -> Rooms:
    return Rooms(url)   # thread-safe, one per database: the server's connections, not anyone's data


def rooms() -> Rooms:
    """The rooms' database; RoomError (what is wrong, what is valid) for a bad EXPLORER_DATABASE_URL."""
    try:
        configured = database_url()
    except DatabaseUrlError as e:
        raise RoomError(str(e)) from None
    return _rooms(configured or _db_file(os.environ.get("EXPLORER_RUNS_DIR")))


@st.cache_resource(show_spinner=False)
def _db_file(runs: str | None) -> str:   # keyed on $EXPLORER_RUNS_DIR: tests change it
    return rooms_url()   # runs_dir() creates the folder: once per folder, not every poll


@dataclass(frozen=True)
class Seat:
    """This page's place in a room: the room as last read, and whether this tab teaches it."""

    state: RoomState
    teacher: bool            # this browser teaches the room (its owner cookie)
    holds: bool              # ... and this tab holds the room (another teacher tab is read-only)
    teacher_id: str | None   # the owner id the room knows the teacher by
    member: str | None       # a student's seat id

    @property
    def code(self) -> str:
        return self.state.code

    @property
    def teaching(self) -> bool:
        return self.teacher and self.holds

    def lesson(self) -> Lesson:
        return find_lesson(self.state.lesson)


def member_id() -> str:
    return hashlib.sha256(f"explorer-member:{owner.token()}".encode()).hexdigest()[:32]


def tab_id() -> str:
    return st.session_state.setdefault(TAB, new_id())


def _alone(lesson_id: str | None, step: int | None) -> None:
    """Leave the room and go on with its lesson, at its step, by oneself."""
    for param in (ROOM, NAME, TEACH):
        st.query_params.pop(param, None)
    if find_lesson(lesson_id) is not None:
        st.query_params["lesson"], st.query_params["step"] = lesson_id, str((step or 0) + 1)


def _problem(text: str, lesson_id: str | None = None, step: int | None = None) -> None:
    st.warning(text, icon=":material/meeting_room:")
    st.button("Continue alone", key=ALONE, icon=":material/person:", on_click=_alone, args=(lesson_id, step))


def _claim(code: str, teacher: str) -> bool:
    """This tab's claim on the room: its first in this session takes the room over (a reload teaches at
    once); later ones (every rerun) keep a room another tab took from it read-only here."""
    first = st.session_state.get(CLAIMED) != code
    holds = rooms().claim(code, teacher, tab_id(), take_over=first)
    st.session_state[CLAIMED] = code
    return holds


def open_room(lesson: Lesson, index: int) -> None:
    """`teach=1`: a new room on this step, taught by this browser; the URL takes its code (and loses teach=1,
    so a reload does not open a second room)."""
    st.query_params.pop(TEACH, None)
    try:
        code = rooms().create(lesson.id, index, owner.owner_id())
    except RoomError as err:
        st.session_state[PROBLEM] = md_text(err)
        return
    st.query_params[ROOM] = code
    _claim(code, owner.owner_id())


def seat() -> Seat | None:
    """The room the URL names, joined; None (after saying why, with a way to continue alone) when the
    link names no room, a wrong one or one that has ended. A database that does not answer (restarting)
    stops the page at a note that tries again every second, and the page carries on once it answers."""
    try:
        return _seat()
    except DatabaseDown as err:
        _wait_for_database(md_text(err))
        return None


def _wait_for_database(text: str) -> None:
    st.warning(f"{text}: this page tries again by itself every second.", icon=":material/cloud_off:")

    def retry() -> None:
        try:
            rooms().version(st.query_params.get(ROOM, ""))
        except DatabaseDown:
            return
        except RoomError:
            pass   # it answers: a bad code or a closed room is said by the rerun
        st.rerun()

    live_fragment(retry, POLL_S)
    st.stop()


def reconnecting() -> None:
    """What a poll draws while the database does not answer (a restart): it asks again next time."""
    with st.container(key=RECONNECTING, width="content"):
        st.caption(":material/cloud_off: Reconnecting to the room…")


def _seat() -> Seat | None:
    problem = st.session_state.pop(PROBLEM, None)
    if problem:
        st.warning(problem, icon=":material/meeting_room:")
    st.query_params.pop(OLD_KEY, None)   # an old teacher link: its key gives nothing and leaves the address bar
    text = st.query_params.get(ROOM)
    if text is None:
        return None
    try:
        rooms()
    except RoomError as err:   # a bad EXPLORER_DATABASE_URL: said here, the lesson goes on alone
        _problem(md_text(err))
        return None
    misses = [t for t in st.session_state.get(MISSES, []) if time.monotonic() - t < MISS_WINDOW_S]
    if len(misses) >= MAX_MISSES:   # a session guessing codes: 34 bits stay out of its reach
        _problem(f"Too many wrong room codes from this tab: wait {MISS_WINDOW_S:.0f} s, then check the code with "
                 "your teacher.")
        return None
    state = rooms().state(text)
    if state is None:
        st.session_state[MISSES] = [*misses, time.monotonic()]
        _problem(f"There is no room {md(text, 12)}: check the code with your teacher (7 letters and digits). "
                 "You can also go through the lessons on your own.")
        return None
    if state.closed:
        why = "nobody used it for a day" if state.expired else "the teacher ended it"
        _problem(f"Room {state.code} is closed: {why}. Continue on your own from its last step.", state.lesson,
                 state.step)
        return None
    if find_lesson(state.lesson) is None:   # a teacher's lesson file removed while its room is open
        _problem(f"Room {state.code}'s lesson is no longer on this server: ask the teacher, or choose a lesson.")
        return None
    st.session_state[SEEN] = state.version   # what this run draws: the poll reruns when the room moves on
    teacher = owner.owner_id()
    if rooms().is_teacher(state.code, teacher):
        return Seat(state, True, _claim(state.code, teacher), teacher, None)
    member = member_id()
    if st.session_state.get(JOINED) != state.code:   # once a session: a student's reruns write nothing
        try:
            rooms().join(state.code, member, st.query_params.get(NAME, ""))
        except DatabaseDown:
            raise
        except RoomError as err:
            _problem(md_text(err), state.lesson, state.step)
            return None
        st.session_state[JOINED] = state.code
        st.session_state[NICKNAME] = sanitise_nickname(st.query_params.get(NAME, ""))
    return Seat(state, False, False, None, member)


def follow_teacher(seat: Seat, lesson: Lesson, index: int) -> tuple[Lesson, int]:
    """The step this page shows: the teaching tab's URL moves the room; every other tab is where the room is."""
    state = seat.state
    if seat.teaching and (state.lesson, state.step) != (lesson.id, index):
        rooms().move(seat.code, seat.teacher_id, lesson.id, index, tab_id())
    if seat.teaching:
        return lesson, index
    return seat.lesson(), min(state.step, len(seat.lesson().steps) - 1)   # students, a read-only teacher tab


# ----------------------------------------------------------------------------- students
def left(deadline: float | None) -> str:
    """'0:23 left' of a countdown, 'time is up' once it has passed, '' with none."""
    if deadline is None:
        return ""
    seconds = deadline - time.time()
    whole = int(seconds + 0.999)
    return "time is up" if seconds <= 0 else f"{whole // 60}:{whole % 60:02d} left"


def poll_s() -> float:
    """This session's poll interval: 30 students moved together do not poll together ever after."""
    return st.session_state.setdefault(PACE, POLL_S * (1 - POLL_SPREAD * random.random()))


def follow(seat: Seat) -> None:
    """A read-only teacher tab reruns its page when the room moved, found by a poll of `Rooms.version`."""

    def check() -> None:
        try:
            version = rooms().version(seat.code)
        except DatabaseDown:   # restarting: the next poll asks again
            return reconnecting()
        if version != st.session_state.get(SEEN):
            st.rerun()

    live_fragment(check, poll_s())


def student_poll(seat: Seat) -> None:
    """Above a student's step, once a page: what the server reruns (ui/room_push.py) when the database stops
    answering ("Reconnecting") and answers again (then the step, if the room moved). Not in the step: a
    fragment there costs every move its set-up (bench/README.md)."""

    def check() -> None:
        st.session_state[POLL_ID] = room_push.fragment_id()
        try:
            version = rooms().version(seat.code)
        except DatabaseDown:
            return reconnecting()
        if version != st.session_state.get(SEEN):
            rerun_fragment(STEP)

    live_fragment(check, None)


def step_drawn(seat: Seat) -> None:
    """In a student's step, above its title: the step registered, so the server reruns it when the room moves;
    and the countdown's time left, in a fragment of its own that ticks each second until the Lock closes."""
    room_push.watch(rooms(), seat.code, st.session_state.get(SEEN), room_push.fragment_id(),
                    st.session_state.get(POLL_ID))
    deadline, drawn_at = seat.state.deadline, time.time()
    if deadline is not None and deadline > drawn_at:
        def tick() -> None:
            if time.time() > deadline:   # the Lock closes: the step says so
                rerun_fragment(STEP)
            with st.container(key=CLOCK):
                st.markdown(f":material/timer: **{left(deadline)}** to lock your prediction")

        live_fragment(tick, poll_s())
    elif deadline is not None:
        with st.container(key=CLOCK):
            st.markdown(":material/timer: **Time is up**: predictions are closed")


def _rename(seat: Seat) -> None:
    try:
        rooms().join(seat.code, seat.member, st.session_state[NICKNAME])
    except RoomError as err:
        st.session_state[PROBLEM] = md_text(err)


def _enter_pin(seat: Seat) -> None:
    """The teacher's PIN typed on this device: it teaches from now on (and gives up its student's seat)."""
    try:
        rooms().enter_pin(seat.code, owner.owner_id(), st.session_state.get(PIN), seat.member)
    except RoomError as err:
        st.session_state[PROBLEM] = md_text(err)
        return
    for key in (PIN, JOINED, NICKNAME, CLAIMED):
        st.session_state.pop(key, None)


def student_bar(seat: Seat) -> None:
    where, name = st.columns([3, 2], vertical_alignment="bottom")
    with where.container(horizontal=True, vertical_alignment="center"):
        st.caption(f":material/meeting_room: Room {seat.code}: your screen follows the teacher's.")
        with st.popover("I'm the teacher", icon=":material/key:", type="tertiary", key=I_TEACH):
            st.text_input("The PIN your other device shows under *Another device*", key=PIN, max_chars=12,
                          placeholder=f"{PIN_DIGITS} digits", autocomplete="off")
            st.button("Teach from this device", key=PIN_ENTER, icon=":material/school:", on_click=_enter_pin,
                      args=(seat,))
    name.text_input("Your name (only the teacher sees it)", key=NICKNAME, max_chars=MAX_NICKNAME,
                    on_change=_rename, args=(seat,), placeholder="optional")


def predict(seat: Seat, lesson: Lesson, index: int, value) -> str | None:
    """Lock a student's prediction in the room; the reason when it is refused (too fast, revealed)."""
    try:
        rooms().predict(seat.code, seat.member, lesson.id, index, value)
    except RoomError as err:
        return md_text(err)
    return None


def run_name() -> str | None:
    """A student's run in a room is named after them ("Ann-H3JJ7ZZ") for the teacher to find; None outside one."""
    code = st.session_state.get(JOINED)
    return None if code is None else run_name_for(code, st.session_state.get(NICKNAME, ""))


def run_name_for(code: str, nickname: str) -> str:
    try:
        who = safe_name(nickname)[:40]
    except ValueError:   # no nickname, or none of its characters can name a folder
        who = "student"
    return f"{who}-{code}"


def reveal(seat: Seat, lesson: Lesson, index: int) -> None:
    if seat.teaching and not rooms().revealed(seat.code, lesson.id, index):
        rooms().reveal(seat.code, seat.teacher_id, lesson.id, index, tab_id())


def revealed(seat: Seat, lesson: Lesson, index: int) -> bool:
    if not seat.teacher and (lesson.id, index) == (seat.state.lesson, seat.state.step):
        return seat.state.revealed   # a student's step: read with the room at the top of this run
    return rooms().revealed(seat.code, lesson.id, index)


def distribution(seat: Seat, lesson: Lesson, index: int, question: Question) -> dict[str, int] | None:
    """The class's predictions by choice (or number), for the chart; None when nobody predicted."""
    try:
        counts = rooms().distribution(seat.code, lesson.id, index, seat.teacher_id)
    except RoomError:
        return None
    if not counts:
        return None
    if question.choices:
        return {choice: counts.get(i, 0) for i, choice in enumerate(question.choices)}
    if len(counts) <= MAX_BARS:
        return {f"{v:g}": n for v, n in counts.items()}
    values = sorted(counts)   # many different numbers: MAX_BARS equal ranges
    low, width = values[0], (values[-1] - values[0]) / MAX_BARS
    binned: dict[str, int] = {}
    for i in range(MAX_BARS):
        lo, hi = low + i * width, low + (i + 1) * width
        binned[f"{lo:.3g} to {hi:.3g}"] = sum(n for v, n in counts.items()
                                              if lo <= v < hi or (i == MAX_BARS - 1 and v == hi))
    return binned
