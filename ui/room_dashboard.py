"""The teacher's dashboard during class (explorer/rooms/conduct.py keeps its state in the room): who has
locked and who has not, a countdown on the question, pause ("eyes on the teacher"), ask again, hide the
reveal, and the room's Results in a new tab.

It is the teacher's screen only: in presenter view (the projector) it waits closed behind *Dashboard* in
the room's bar, and its names are anonymised there unless the teacher turns that off. Nicknames are
drawn as plain text, never markup.
"""

from __future__ import annotations

import streamlit as st

from explorer.lessons import Lesson
from explorer.quoting import md_text
from explorer.rooms import COUNTDOWNS_S, RoomError
from ui import lesson_question, presenter, room, room_teacher
from ui.frame import live_fragment

PANEL, MENU = "room_dashboard", "room_dashboard_menu"        # element keys (a contract for the tests)
PAUSE, ANONYMISE, HIDE = "room_pause", "room_anonymise", "room_hide_reveal"
COUNTDOWN_S, COUNTDOWN, COUNTDOWN_STOP = "room_countdown_s", "room_countdown", "room_countdown_stop"
ASK_AGAIN, LOCKED, CLOCK = "room_ask_again", "room_locked", "room_teacher_clock"
RESULTS_LINK = "room_results_link"
ASKED_AGAIN = "_room_asked_again"   # (room, lesson, step) this tab asked again: its own reveal is dropped


def _do(action, *args) -> None:
    """One control's call on the room; a refusal (another tab teaches, the room ended) is said once."""
    try:
        action(*args)
    except RoomError as err:
        st.session_state[room.PROBLEM] = md_text(err)


def _pause(seat: room.Seat) -> None:
    if room_teacher.unchanged(PAUSE, seat.state.paused):
        return
    _do(room.rooms().pause, seat.code, seat.teacher_id, bool(st.session_state[PAUSE]), room.tab_id())


def _hide(seat: room.Seat, lesson: Lesson, index: int) -> None:
    if room_teacher.unchanged(HIDE, seat.state.reveal_hidden):
        return
    _do(room.rooms().hide_reveal, seat.code, seat.teacher_id, lesson.id, index, bool(st.session_state[HIDE]),
        room.tab_id())


def _countdown(seat: room.Seat) -> None:
    _do(room.rooms().start_countdown, seat.code, seat.teacher_id, int(st.session_state[COUNTDOWN_S]), room.tab_id())


def _stop_countdown(seat: room.Seat) -> None:
    _do(room.rooms().stop_countdown, seat.code, seat.teacher_id, room.tab_id())


def _ask_again(seat: room.Seat, lesson: Lesson, index: int) -> None:
    _do(room.rooms().ask_again, seat.code, seat.teacher_id, lesson.id, index, room.tab_id())
    st.session_state[ASKED_AGAIN] = (seat.code, lesson.id, index)


def take_asked_again() -> tuple[str, str, int] | None:
    """The step this tab just asked again, once: ui/lesson_question.py forgets its reveal there."""
    return st.session_state.pop(ASKED_AGAIN, None)


def _anonymise_key() -> str:
    """The toggle's key in this view: presenter view starts anonymised, the teacher's own screen does not."""
    return ANONYMISE + "_present" if presenter.on() else ANONYMISE


def _who(seat: room.Seat, lesson: Lesson, index: int) -> None:
    """Who has locked and who has not, read again every second, with the countdown's time left."""
    try:
        locks = room.rooms().locks(seat.code, seat.teacher_id, lesson.id, index)
        state = room.rooms().state(seat.code)
    except RoomError:
        return
    anonymous = st.session_state.get(_anonymise_key(), presenter.on())
    names = [(f"student {n}" if anonymous else name, locked) for n, (name, locked) in enumerate(locks, 1)]
    done = [name for name, locked in names if locked]
    waiting = [name for name, locked in names if not locked]
    with st.container(key=LOCKED):
        if state is not None and state.deadline is not None:
            with st.container(key=CLOCK):
                st.markdown(f":material/timer: **{room.left(state.deadline)}**")
        a, b = st.columns(2)
        a.markdown(f":material/lock: **Locked ({len(done)})**")
        a.text("\n".join(done) or "nobody yet")          # plain text: a nickname is never markup
        b.markdown(f":material/hourglass_empty: **Not yet ({len(waiting)})**")
        b.text("\n".join(waiting) or "everyone has locked")


def _controls(seat: room.Seat, lesson: Lesson, index: int) -> None:
    """Two rows of controls (the toggles; the question's buttons), then who has locked."""
    state, question, fixed = seat.state, lesson.steps[index].question, not seat.holds
    if fixed:   # a read-only tab draws no control at all: a callback of a widget it drew could fire there
        st.caption("Another tab teaches: the dashboard's controls are there.")
        live_fragment(lambda: _who(seat, lesson, index), room.POLL_S)
        return
    with st.container(horizontal=True, vertical_alignment="center"):
        st.session_state[PAUSE] = state.paused
        st.toggle("Pause: eyes on the teacher", key=PAUSE, on_change=_pause, args=(seat,), disabled=fixed,
                  help="Students' screens show only “Eyes on the teacher” until you resume")
        st.toggle("Anonymise names", value=presenter.on(), key=_anonymise_key(),
                  help="“student 1, 2, …” instead of nicknames, e.g. when projecting")
        if question is not None and (state.revealed or lesson_question.here_asked(lesson, index)):
            st.session_state[HIDE] = state.reveal_hidden   # this run's Reveal counts too
            st.toggle("Hide the reveal", key=HIDE, on_change=_hide, args=(seat, lesson, index), disabled=fixed,
                      help="Take the answer off every screen for now; predictions stay closed")
    with st.container(horizontal=True, vertical_alignment="bottom"):
        if question is not None and state.deadline is None and not state.revealed:
            st.selectbox("Countdown", COUNTDOWNS_S, index=2, key=COUNTDOWN_S, format_func=lambda s: f"{s} s",
                         disabled=fixed, width=110)
            st.button("Start countdown", key=COUNTDOWN, icon=":material/timer:", on_click=_countdown, args=(seat,),
                      disabled=fixed, help="Locks close when it runs out; the reveal stays yours")
        elif question is not None and state.deadline is not None:
            st.button("Stop the countdown", key=COUNTDOWN_STOP, icon=":material/timer_off:", on_click=_stop_countdown,
                      args=(seat,), disabled=fixed)
        if question is not None:
            st.button("Ask again", key=ASK_AGAIN, icon=":material/replay:", on_click=_ask_again,
                      args=(seat, lesson, index), disabled=fixed,
                      help="Clear this question's locks and its reveal for everyone: the class predicts afresh")
        st.link_button("Results", f"lessons?results={seat.code}", icon=":material/table_view:", key=RESULTS_LINK,
                       help="This room's answers so far, in a new tab: per question and per student, CSV and HTML")
    if question is None:
        st.caption("No question on this step: the students follow it.")
    live_fragment(lambda: _who(seat, lesson, index), room.POLL_S)


def dashboard(seat: room.Seat, lesson: Lesson, index: int) -> None:
    """The dashboard: an open panel on the teacher's own screen, a closed popover in presenter view."""
    if presenter.on():
        with st.popover("Dashboard", icon=":material/dashboard:", key=MENU,
                        help="Who has locked, countdown, pause, ask again: on the projector only if you open it"):
            _controls(seat, lesson, index)
    else:
        with st.expander("Class dashboard", icon=":material/dashboard:", expanded=True, key=PANEL):
            _controls(seat, lesson, index)
