"""The teacher's bar of a room (ui/room.py keeps the room itself): the code, the invitation, the
distribution toggle, another device's PIN and End room, and the live count that is the teaching tab's
heartbeat. A read-only tab (another of the teacher's tabs teaches) says so and offers to take over."""

from __future__ import annotations

import time

import streamlit as st

from explorer.lessons import Lesson
from explorer.quoting import md_text
from explorer.rooms import PIN_DIGITS, PIN_TTL_S, DatabaseDown, RoomError
from ui import presenter
from ui.frame import live_fragment
from ui.room import (
    CODE,
    COUNT,
    DEVICE,
    DISTRIBUTION,
    END,
    END_MENU,
    PIN_NEW,
    POLL_S,
    PROBLEM,
    SHOWN_PIN,
    TAKE_OVER,
    UNREACHABLE,
    Seat,
    reconnecting,
    rooms,
    tab_id,
)
from ui.room_invite import invite_menu


def _end(seat: Seat) -> None:
    try:
        rooms().end(seat.code, seat.teacher_id, tab_id())
    except RoomError as err:
        st.session_state[PROBLEM] = md_text(err)


def _take_over(seat: Seat) -> None:
    rooms().claim(seat.code, seat.teacher_id, tab_id(), take_over=True)


def unchanged(key: str, drawn: bool) -> bool:
    """A toggle's callback that would not change the room: Streamlit fires one for a toggle that reappears
    (a tab that was read-only teaches again), and acting on it would only say "another tab teaches"."""
    return bool(st.session_state[key]) == drawn


def _show_distribution(seat: Seat) -> None:
    if unchanged(DISTRIBUTION, seat.state.show_distribution):
        return
    try:
        rooms().show_distribution(seat.code, seat.teacher_id, bool(st.session_state[DISTRIBUTION]), tab_id())
    except RoomError as err:
        st.session_state[PROBLEM] = md_text(err)


def _new_pin(seat: Seat) -> None:
    try:
        pin = rooms().new_pin(seat.code, seat.teacher_id)
    except RoomError as err:
        st.session_state[PROBLEM] = md_text(err)
        return
    st.session_state[SHOWN_PIN] = (seat.code, pin, time.time() + PIN_TTL_S)


def _another_device(seat: Seat) -> None:
    """A PIN for the teacher's other device, on request: never drawn in presenter view (it is projected)."""
    with st.popover("Another device", icon=":material/devices:", key=DEVICE,
                    help="Teach this room from a phone or tablet too: a PIN to type there"):
        st.markdown(f"On your other device, open the students' link, then *I'm the teacher*, and type the PIN "
                    f"shown here. It works once, for {PIN_TTL_S / 60:.0f} minutes.")
        shown = st.session_state.get(SHOWN_PIN)
        if shown is not None and shown[0] == seat.code and time.time() < shown[2]:
            pin, half = shown[1], PIN_DIGITS // 2
            st.subheader(f"{pin[:half]} {pin[half:]}", anchor=False)
        else:
            shown = None   # none yet, another room's, or expired
        st.button("New PIN" if shown else "Show a PIN", key=PIN_NEW, icon=":material/pin:", on_click=_new_pin,
                  args=(seat,))


def _end_menu(seat: Seat) -> None:
    """End room asks first: its popover says what ending does, the button inside ends it."""
    with st.popover("End room", icon=":material/logout:", key=END_MENU):
        st.markdown(f"End room {seat.code} for everyone? Students go on alone from this step; nobody can join again.")
        st.button("End the room for everyone", key=END, icon=":material/logout:", type="primary", on_click=_end,
                  args=(seat,))


def teacher_bar(seat: Seat, lesson: Lesson, index: int) -> None:
    """The room's code, its invitation (link and QR code), the distribution toggle and, at the far end from
    it, another device's PIN and End room; the live count below."""
    with st.container(horizontal=True, vertical_alignment="center"):
        with st.container(key=CODE, width="content"):
            st.markdown(f":material/meeting_room: Room **{seat.code}**")
        card = invite_menu(seat.code)
        if seat.holds:
            st.session_state[DISTRIBUTION] = seat.state.show_distribution
            st.toggle("Show predictions", key=DISTRIBUTION, on_change=_show_distribution, args=(seat,),
                      help="The class's predictions for this step as a chart, before the reveal")
            st.space("stretch")   # a mis-click beside Show predictions never ends the class
            if not presenter.on():
                _another_device(seat)
            _end_menu(seat)
        else:
            st.warning("Another tab is teaching this room: this one is read-only.", icon=":material/visibility:")
            st.button("Teach from this tab", key=TAKE_OVER, on_click=_take_over, args=(seat,))
    live_fragment(lambda: _count(seat, lesson, index, card.reachable), POLL_S)


def _count(seat: Seat, lesson: Lesson, index: int, reachable: bool = True) -> None:
    """'23 of 27 predicted' and who is here, read again every second; the teacher tab's heartbeat too. A tab that gained
    the room (its holder went silent: closed) or lost it (another tab of the teacher's opened, reloaded or
    took over), or whose room ended, is drawn again at once: its buttons follow its authority."""
    try:
        holds = rooms().claim(seat.code, seat.teacher_id, tab_id())
    except DatabaseDown:   # restarting: the next beat asks again, the page stays as it is
        return reconnecting()
    except RoomError:   # ended from another tab, or expired
        holds = None
    if holds != seat.holds:
        st.rerun()
    try:
        predicted, joined = rooms().count(seat.code, lesson.id, index)
    except DatabaseDown:
        return reconnecting()
    with st.container(horizontal=True, vertical_alignment="center"):
        with st.container(key=COUNT, width="content"):
            asked = lesson.steps[index].question is not None
            st.caption(f":material/groups: {predicted} of {joined} predicted" if asked else
                       f":material/groups: {joined} student{'s' if joined != 1 else ''} in the room")
        with st.popover("Who is here", icon=":material/groups:"):   # an open popover stays open as this reruns
            try:
                names = rooms().names(seat.code, seat.teacher_id)
            except DatabaseDown:
                names = []
            st.text("\n".join(names) if names else "Nobody has joined yet.")   # plain text: never markup
        if not reachable:   # one line, beside the count: the whole note would push Reveal off a projector
            with st.container(key=UNREACHABLE, width="content"):
                st.markdown(":material/wifi_off: **Phones cannot open this room's link yet**: see *Invite*.")


__all__ = ["teacher_bar", "unchanged"]
