"""Lessons: the seed texts as a path through the material, one idea per screen, predict then reveal."""

import streamlit as st

from explorer.lessons import all_lessons, find_lesson
from ui import frame, lesson_nav, lesson_question, menu, presenter, room, room_dashboard, room_results

frame.require_app()  # a deep link on a fresh server: rerun through app.py


@st.cache_resource(max_entries=128, show_spinner=False)
def step_view(lesson_id: str, index: int, values: tuple):
    """A step's live view: a pure function of the lesson, the step and its control values, the same for
    everyone and never changed (figures are drawn, never edited), so shared as it is: unpickling a
    figure from st.cache_data cost a room's students more than the rest of a rerun (bench/README.md,
    "A class in one room under load")."""
    view = find_lesson(lesson_id).steps[index].view
    return view(dict(values)) if view is not None else None


def choose() -> None:
    st.title("Lessons")
    st.markdown("Three paths through the seed texts, one idea per screen. On a question, lock in a prediction "
                "first: the measurement appears only after that.")
    lesson_nav.say_problem()
    lessons = all_lessons()
    for column, lesson in zip(st.columns(len(lessons)), lessons.values()):
        with column.container(border=True):
            st.subheader(lesson.title)
            st.caption(f"{lesson.source} · {len(lesson.steps)} steps · "
                       f"{sum(s.question is not None for s in lesson.steps)} questions")
            st.markdown(lesson.summary)
            st.button("Start", key=f"lesson_open_{lesson.id}", icon=":material/school:", type="primary",
                      on_click=lesson_nav.open_lesson, args=(lesson.id,))
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
    if student:
        room.student_bar(seat)
        room.follow(seat)
    elif seat is not None:
        room.teacher_bar(seat, lesson, index)
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
            view = None if shown else step_view(lesson.id, index, tuple(sorted(values.items())))
        except (OSError, ValueError) as err:   # a shipped model missing or damaged on this server
            st.warning(f"This step's view could not be built: {err}", icon=":material/error:")
            view = None
        if view is not None:
            lesson_question.draw(view, f"lesson_fig_{lesson.id}_{index}")


def paused(seat: room.Seat) -> None:
    """A student's screen while the teacher pauses the room: nothing but where to look."""
    room.student_bar(seat)
    room.follow(seat)
    st.title("Eyes on the teacher", anchor=False)
    st.markdown(":material/visibility: The teacher has paused the lesson. Your screen comes back by itself.")


def main() -> None:
    if st.query_params.get(room_results.RESULTS) is not None:
        room_results.show(st.query_params[room_results.RESULTS])
        return
    lesson, index = lesson_nav.where()
    if lesson is not None and st.query_params.get(room.TEACH) == "1":
        room.open_room(lesson, index)
    seat = room.seat()
    if seat is not None:
        lesson, index = room.follow_teacher(seat, lesson or seat.lesson(), index if lesson else seat.state.step)
    if lesson is None:
        choose()
    else:
        show_step(lesson, index, seat)


main()
