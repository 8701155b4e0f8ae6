"""A room's Results for its teacher, open or ended (`lessons?results=CODE`): per question the class's
distribution, the share right where the question has a right answer, each student's answer; this teacher's
past rooms; the same as CSV and as one offline HTML file (explorer/rooms/report.py builds all three).

The link carries only the room's code: the Results are shown to a browser that teaches the room (its owner
cookie, as in ui/room.py); anyone else sees that they are the teacher's. Nicknames and lesson texts are
drawn as text, never markup.
"""

from __future__ import annotations

import time

import streamlit as st

from explorer.figures.architecture import param_breakdown
from explorer.lessons import find_lesson
from explorer.quoting import hover, md, md_text
from explorer.rooms import RoomError
from explorer.rooms import report as room_report
from ui import owner, room, widgets

RESULTS = "results"                                              # URL parameter (a contract)
VIEW, ANONYMISE, CSV, HTML = "room_results", "room_results_anonymise", "room_results_csv", "room_results_html"
PAST, OPEN = "room_past", "room_results_open_"


def _open(code: str) -> None:
    for param in list(st.query_params):
        del st.query_params[param]
    st.query_params[RESULTS] = code


def _back() -> None:
    st.query_params.pop(RESULTS, None)


def _day(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def past_rooms(current: str | None = None) -> None:
    """This browser's rooms still kept, newest first, each with its Results; nothing when it taught none."""
    try:
        kept = room.rooms().teacher_rooms(owner.owner_id())
    except RoomError:   # a database unreachable or misnamed: a room link or *Teach* says so, not this list
        return
    if not kept:
        return
    with st.container(key=PAST):
        st.subheader("Your rooms", anchor=False)
        st.caption(f"Kept {room.rooms().retain_days:g} days after their last use. Only this browser sees them.")
        for r in kept:
            lesson = find_lesson(r.lesson)
            with st.container(horizontal=True, vertical_alignment="center"):
                st.markdown(f"**{r.code}** · {_day(r.created)} · {md_text(lesson.title if lesson else r.lesson)} · "
                            f"{'ended' if r.closed else 'open'} · {r.students} students, {r.locks} answers",
                            width="content")
                st.button("Results", key=OPEN + r.code, icon=":material/table_view:", on_click=_open, args=(r.code,),
                          disabled=r.code == current, type="tertiary")


def show(text: str) -> None:
    """The Results view of the room `text` names, for its teacher."""
    st.button("Lessons", key="room_results_back", icon=":material/arrow_back:", on_click=_back)
    try:
        answers = room.rooms().answers(text, owner.owner_id())
        state = room.rooms().state(text)
    except RoomError as err:
        st.title("Room results", anchor=False)
        st.warning(f"No results to show: {md_text(err)}. A room's results are its teacher's, on the browser that "
                   "teaches it.", icon=":material/lock:")
        past_rooms()
        return
    lesson = find_lesson(state.lesson)
    title = lesson.title if lesson is not None else state.lesson
    st.title(f"Room {state.code}: results", anchor=False)
    st.caption(f"{md_text(title)} · opened {_day(state.created)} · {'ended' if state.closed else 'open'} · kept "
               f"{room.rooms().retain_days:g} days after its last use (EXPLORER_ROOM_DAYS)")
    if room.rooms().retention_problem:
        st.warning(md_text(room.rooms().retention_problem), icon=":material/settings:")
    anonymous = st.toggle("Anonymise names", key=ANONYMISE, help="“student 1, 2, …” instead of nicknames")
    rows, summaries = room_report.build(answers, anonymise=anonymous)
    with st.container(key=VIEW):
        if not summaries:
            st.info("Nobody has locked an answer in this room yet.", icon=":material/hourglass_empty:")
        for s in summaries:
            with st.container(border=True):
                st.markdown(f"**Step {s.step}.** {md_text(s.prompt or '(this question is no longer on the server)')}")
                share = (f"**{s.right} of {s.decided}** right ({s.right / s.decided:.0%})"
                         if s.right is not None and s.decided else "no right answer decided")
                st.markdown(f"{s.locked} of {s.students} locked · {share} · answer: {md_text(s.answer)}")
                if s.locked:
                    widgets.chart(param_breakdown({hover(k): v for k, v in s.counts.items()}, "The class's predictions",
                                                  unit="students"), key=f"room_results_chart_{s.lesson}_{s.step}")
                mine = [{"nickname": r["nickname"], "prediction": r["prediction"] or "—", "correct": r["correct"],
                         "locked at (UTC)": r["locked_at"]} for r in rows
                        if (r["lesson"], r["step"]) == (s.lesson, s.step)]
                st.dataframe(mine, hide_index=True)   # a dataframe shows its cells as text
    name = f"room-{state.code}-results"
    a, b = st.columns(2)
    a.download_button("Download CSV", room_report.to_csv(rows), f"{name}.csv", "text/csv", key=CSV,
                      icon=":material/download:", on_click="ignore", disabled=not rows)
    b.download_button("Download HTML (offline)", room_report.to_html(state.code, title, rows, summaries,
                                                                     room.rooms().retain_days),
                      f"{name}.html", "text/html", key=HTML, icon=":material/download:", on_click="ignore")
    command = f"python -m explorer rooms export {state.code} --out {name}.csv"
    st.caption(f"The same from the command line: {md(command, None)}")
    past_rooms(state.code)
