"""Lessons: the seed texts as a path through the material, one idea per screen, predict then reveal."""

import streamlit as st

from explorer.lessons import LESSONS, all_lessons, find_lesson, lesson_version
from explorer.lessons.files import MAX_BYTES
from explorer.lessons.folder import delete_lesson, file_problems, owns, save_lesson
from explorer.quoting import md_text
from ui import (
    frame,
    lesson_nav,
    lesson_question,
    menu,
    owner,
    presenter,
    room,
    room_dashboard,
    room_results,
    room_teacher,
)

frame.require_app()  # a deep link on a fresh server: rerun through app.py


UPLOAD, UPLOADED = "lesson_upload", "_lesson_uploaded"   # the uploader; (file id, message) of the last upload
CARDS_PER_ROW = 3


@st.cache_resource(max_entries=128, show_spinner=False)
def step_view(lesson_id: str, version: str, index: int, values: tuple):
    """A step's live view: a pure function of the lesson (`version` changes when its file is replaced), the
    step and its control values, the same for everyone and never changed (figures are drawn, never
    edited), so shared as it is: unpickling a figure from st.cache_data cost a room's students more than
    the rest of a rerun (bench/README.md, "A class in one room under load")."""
    view = find_lesson(lesson_id).steps[index].view
    return view(dict(values)) if view is not None else None


def card(lesson) -> None:
    """A lesson's card; a file lesson's text is the teacher's markdown, already made inert (md_prose)."""
    with st.container(border=True):
        st.subheader(lesson.title, anchor=False)
        source = lesson.source if lesson.id in LESSONS else f"{lesson.source} · `{lesson.id}`"
        st.caption(f"{source} · {len(lesson.steps)} steps · "
                   f"{sum(s.question is not None for s in lesson.steps)} questions")
        st.markdown(lesson.summary)
        st.button("Start", key=f"lesson_open_{lesson.id}", icon=":material/school:", type="primary",
                  on_click=lesson_nav.open_lesson, args=(lesson.id,))


def _delete(lesson_id: str) -> None:
    seen = st.session_state.get(UPLOADED, (None,))[0]   # the file still in the uploader is not saved again
    try:
        delete_lesson(lesson_id, owner.owner_id())
        st.session_state[UPLOADED] = (seen, ("ok", f"Deleted the lesson `{lesson_id}`."))
    except ValueError as err:
        st.session_state[UPLOADED] = (seen, ("error", md_text(str(err))))


def upload() -> None:
    """A teacher's own lesson: a TOML file, checked before it is kept; a refused one keeps the previous
    version of its id, and says its one line (FILE:LINE: what is wrong)."""
    with st.expander("Your own lesson: upload a lesson file", icon=":material/upload_file:"):
        st.markdown("A lesson is a TOML file of steps, each with its text, a named view and perhaps a question. "
                    "`python -m explorer lessons export ch2 --out ch2.toml` writes a shipped lesson to start "
                    "from; the README's *Your own lessons* says more.")
        got = st.file_uploader("Lesson file (.toml)", type=["toml"], key=UPLOAD)
        if got is not None and st.session_state.get(UPLOADED, (None,))[0] != got.file_id:
            try:
                lesson = save_lesson(got.getvalue()[:MAX_BYTES + 1], owner.owner_id(), got.name)
                said = ("ok", f"Saved **{lesson.title}** as `{lesson.id}`: {len(lesson.steps)} steps. Its link: "
                              f"`lessons?lesson={lesson.id}`")
            except ValueError as err:
                said = ("error", md_text(str(err)))
            st.session_state[UPLOADED] = (got.file_id, said)
        kind, text = st.session_state.get(UPLOADED, (None, (None, None)))[1]
        if kind == "ok":
            st.success(text, icon=":material/check_circle:")
        elif kind == "error":
            st.error(text, icon=":material/error:")
        for lesson in [x for x in all_lessons().values() if x.id not in LESSONS and owns(x.id, owner.owner_id())]:
            with st.container(horizontal=True, vertical_alignment="center"):
                st.markdown(f"Your lesson `{lesson.id}`: {md_text(lesson.title)}", width="content")
                with st.popover("Delete", icon=":material/delete:", key=f"lesson_delete_menu_{lesson.id}"):
                    st.markdown("Delete this lesson file? Its links stop working; rooms keep their answers.")
                    st.button("Delete it", key=f"lesson_delete_{lesson.id}", type="primary", on_click=_delete,
                              args=(lesson.id,))
        problems = file_problems()
        if problems:
            st.caption("Lesson files that could not be read, skipped:")
            for line in problems.values():
                st.caption(md_text(line))


def choose() -> None:
    st.title("Lessons")
    st.markdown("Paths through the seed texts, one idea per screen, and the lessons teachers wrote as files. "
                "On a question, lock in a prediction first: the answer appears only after that.")
    lesson_nav.say_problem()
    lessons = list(all_lessons().values())
    for row in range(0, len(lessons), CARDS_PER_ROW):
        for column, lesson in zip(st.columns(CARDS_PER_ROW), lessons[row:row + CARDS_PER_ROW]):
            with column:
                card(lesson)
    upload()
    room_results.past_rooms()


def try_it(step, values: dict) -> None:
    url, params = step.try_it(values)
    page = next(p for p in menu.PAGES if p.url == url)
    st.page_link(page.file, label="Try it yourself", icon=":material/open_in_new:", query_params=params,
                 help=f"The same view on the {page.title} page, where nothing is fixed")


def _teach() -> None:
    st.query_params[room.TEACH] = "1"


def show_step(lesson, index: int, seat: room.Seat | None = None) -> None:
    """A step on one screen: a bar (where, Back / step / Next, the tools), the room's bar, the title, then the
    text and question beside the view. In presenter view a question comes first, so at 1280x720 it, its
    Lock and Reveal and the class's predictions sit on the first screen (tests/browser)."""
    step = lesson.steps[index]
    if lesson_nav.arrived(lesson, index):
        lesson_question.arrive(lesson, index, seat)
    student = seat is not None and not seat.teacher
    if student and seat.state.paused:
        paused(seat)
        return
    if seat is not None and room_dashboard.take_asked_again() == (seat.code, lesson.id, index):
        lesson_question.asked_again(lesson, index)
    with st.container(horizontal=True, vertical_alignment="center", key="lesson_bar"):
        st.caption(f"{lesson.title} · {lesson.source}", width="content")
        lesson_nav.nav_buttons(lesson, index, moves=seat is None or seat.teaching)
        if presenter.on():   # the corner's menu, here in the bar, where it covers nothing
            presenter.display_menu()
            if seat is not None and seat.teacher:   # closed: the projector shows it only if opened
                room_dashboard.dashboard(seat, lesson, index)
        else:
            presenter.toggles()
        if seat is None:
            st.button("Open a room", key="room_open", icon=":material/meeting_room:", on_click=_teach,
                      help="Teach this lesson to a class: students follow your steps on their own screens")
    lesson_nav.say_problem()
    if student:   # its bar (room, name, "I'm the teacher") is drawn once, outside the step: `student`
        room.step_drawn(seat)
    elif seat is not None:
        room_teacher.teacher_bar(seat, lesson, index)
        if not presenter.on():
            room_dashboard.dashboard(seat, lesson, index)
        if not seat.teaching:   # a read-only teacher tab shows where the room is, and follows it
            room.follow(seat)
    st.title(step.title, anchor=False)
    text, live = st.columns([2, 3], gap="large")
    first = step.question is not None and presenter.on()
    with text:
        if first:
            lesson_question.ask(lesson, index, step.question, seat)
        st.markdown(step.text)
        if step.question is not None and not first:   # before the controls: the question stays in view
            lesson_question.ask(lesson, index, step.question, seat)
        values = lesson_nav.control_values(step)
        if step.try_it is not None:
            try_it(step, values)
        if index == len(lesson.steps) - 1:
            lesson_question.summary(lesson, seat)
    with live:
        if step.question is not None:
            lesson_question.class_predictions(lesson, index, step.question, seat)
        shown = step.question is not None and lesson_question.result(lesson, index, step.question, seat)
        try:
            view = None if shown else step_view(lesson.id, lesson_version(lesson.id), index,
                                                 tuple(sorted(values.items())))
        except (OSError, ValueError) as err:   # a shipped model missing or damaged on this server
            st.warning(f"This step's view could not be built: {err}", icon=":material/error:")
            view = None
        if view is not None:
            lesson_question.draw(view, f"lesson_fig_{lesson.id}_{index}")


def paused(seat: room.Seat) -> None:
    """A student's screen while the teacher pauses the room: nothing but where to look (and the bar above)."""
    room.step_drawn(seat)
    st.title("Eyes on the teacher", anchor=False)
    st.markdown(":material/visibility: The teacher has paused the lesson. Your screen comes back by itself.")


def student(seat: room.Seat) -> None:
    """A student's screen: the room's bar, then the step in a fragment that the server reruns alone when the
    room moves (ui/room_push.py), so a move costs the server the step, not the page around it (the menu, the
    sidebar, the bar; bench/README.md, "A follow that costs the server little")."""
    room.student_bar(seat)
    room.student_poll(seat)

    def step() -> None:
        seat = room.seat()   # read again: a pushed rerun of this fragment is the room's news
        if seat is None or seat.teacher:   # the room ended, or this device teaches now: the whole page changes
            st.rerun()
        presenter.redraw_toggles()
        lesson, index = room.follow_teacher(seat, seat.lesson(), seat.state.step)
        show_step(lesson, index, seat)

    with st.container():   # alone in its container, as ui/frame.py `live_fragment` explains
        st.fragment(key=room.STEP)(step)()


def main() -> None:
    if st.query_params.get(room_results.RESULTS) is not None:
        room_results.show(st.query_params[room_results.RESULTS])
        return
    lesson, index = lesson_nav.where()
    if lesson is not None and st.query_params.get(room.TEACH) == "1":
        room.open_room(lesson, index)
    seat = room.seat()
    if seat is not None and not seat.teacher:
        student(seat)
        return
    if seat is not None:
        lesson, index = room.follow_teacher(seat, lesson or seat.lesson(), index if lesson else seat.state.step)
    if lesson is None:
        choose()
    else:
        show_step(lesson, index, seat)


main()
