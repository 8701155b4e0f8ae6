"""Predict, then reveal: a step's question, the prediction locked in, and the measured answer beside it.

Nothing of the answer is computed or drawn before the prediction is locked (the step's own view is the
question's material only, see explorer.lessons.base.Step). Each visitor sees the choices in their own
stable order; the projector (a teacher's tab, presenter view) the canonical one; a prediction is always
the choice's canonical index, so a room counts by choice. The last step sums up (`summary`).

A reveal that needs an experiment nobody has run yet runs it as this session's experiment job (progress
and Stop, like the Experiments page), at the budget the lesson asks for so the verdict can be decided.
"""

from __future__ import annotations

import time

import streamlit as st

from explorer.experiments import EXPERIMENTS, Result, cache_key
from explorer.experiments.runner import resolve_params
from explorer.figures.architecture import param_breakdown
from explorer.lessons import Lesson, Question, Reveal, View, find_lesson, in_students_words, lesson_version
from explorer.lessons.score import class_right, tally
from explorer.rooms import RoomError
from ui import experiment_job, owner, presenter, room, widgets
from ui.frame import live_fragment

CHOICE, LOCK, REVEAL, RESULT = "lesson_choice", "lesson_lock", "lesson_reveal", "lesson_result"  # a contract
STOP, RERUN, SUMMARY = "lesson_stop", "lesson_rerun", "lesson_summary"
REFUSED = "_lesson_refused"           # why the room refused the last lock, said once
PREDICTIONS = "_lesson_predictions"   # (lesson id, step index) -> the locked prediction
REVEALED = "_lesson_revealed"         # (lesson id, step index) -> Reveal, once revealed
PROJECTOR_FIGURE_PX = 440             # a step's figure on a 1280x720 projector, under the title, unscrolled
# A choice's words wrap in the answer's metrics instead of being cut to "the low dimens…".
WRAP_CSS = f"<style>.st-key-{RESULT} [data-testid=stMetricValue] * {{ white-space: normal; }}</style>"
RESULTS = "_lesson_results"           # experiment cache key -> Result, read once per session


def _here(lesson: Lesson, index: int) -> tuple[str, int]:
    return lesson.id, index


def prediction(lesson: Lesson, index: int):
    return st.session_state.setdefault(PREDICTIONS, {}).get(_here(lesson, index))


def revealed(lesson: Lesson, index: int) -> Reveal | None:
    return st.session_state.setdefault(REVEALED, {}).get(_here(lesson, index))


def _on_lock(here: tuple[str, int], seat: room.Seat | None) -> None:
    value = st.session_state.get(CHOICE)
    if value is None:
        return
    if seat is not None:   # a student in a room: the room keeps it (and may refuse: too fast, revealed)
        refused = room.predict(seat, find_lesson(here[0]), here[1], value)
        if refused:
            st.session_state[REFUSED] = refused
            return
    st.session_state.setdefault(PREDICTIONS, {})[here] = value   # a second lock replaces the first


def _on_reveal(here: tuple[str, int], question: Question) -> None:
    st.session_state.setdefault(REVEALED, {})[here] = None   # asked for; the answer is filled in below
    if question.experiment is not None and _result(question) is None:
        job = experiment_job.current_job()
        if not experiment_job.same(job, question.experiment, _params(question)) or job.status == "stopped":
            experiment_job.on_run(question.experiment, _params(question), refresh=False)


def _params(question: Question):
    return resolve_params(EXPERIMENTS[question.experiment], question.params)


def _result(question: Question) -> Result | None:
    """The experiment's result: this session's finished job, else the live cache or the shipped one."""
    job = experiment_job.current_job()
    if experiment_job.same(job, question.experiment, _params(question)) and job.ended and job.result is not None:
        return job.result
    memo, key = st.session_state.setdefault(RESULTS, {}), cache_key(question.experiment, question.params)
    if memo.get(key) is None:
        memo[key] = question.stored()
    return memo[key]


@st.cache_resource(max_entries=64, show_spinner=False)
def plain_reveal(lesson_id: str, index: int, version: str = "") -> Reveal:
    """A reveal computed without an experiment: the same for every student and never changed, so a room's
    reveal computes it once and shares it unpickled, as pages/lessons.py `step_view` (bench/README.md,
    "A class in one room under load"). `version` changes when a lesson file is replaced."""
    return find_lesson(lesson_id).steps[index].question.reveal(None)


def arrive(lesson: Lesson, index: int, seat: room.Seat | None = None) -> None:
    """On arriving at a step: its choice widget starts from this step's locked prediction, if any (a
    student's from the room: a reopened tab or a restarted server finds it there)."""
    st.session_state.pop(CHOICE, None)
    if seat is not None and seat.member is not None:
        kept = room.rooms().prediction(seat.code, seat.member, lesson.id, index)
        if kept is not None:
            st.session_state.setdefault(PREDICTIONS, {})[_here(lesson, index)] = kept
    locked = prediction(lesson, index)
    if locked is not None:
        st.session_state[CHOICE] = locked


def ask(lesson: Lesson, index: int, question: Question, seat: room.Seat | None = None) -> None:
    """The question, the prediction widget and the Lock / Reveal buttons. In a room the students lock and
    the teacher (who predicts nothing) reveals, for every screen at once."""
    here, done = _here(lesson, index), is_revealed(lesson, index, seat)
    teacher, student = seat is not None and seat.teacher, seat is not None and not seat.teacher
    if student:   # the room's lock is the one that counts: the teacher may have asked again
        _sync(lesson, index, seat)
    time_up = student and seat.state.deadline is not None and time.time() > seat.state.deadline
    with st.container(border=True):
        st.markdown(f":material/help: **{question.prompt}**")
        label = "The choices" if teacher else "Your prediction"
        if question.choices:   # the value is the choice's canonical index, whatever order it is shown in
            st.radio(label, choice_order(lesson, index, question, seat), format_func=question.choices.__getitem__,
                     index=None, key=CHOICE, disabled=done or teacher)
        else:
            low, high, step = question.number
            st.number_input(f"{label}{f' ({question.unit})' if question.unit else ''}", low, high,
                            value=None, step=step, key=CHOICE, disabled=done or teacher, placeholder="a number")
        locked = prediction(lesson, index)
        if not teacher:
            st.button("Lock in my prediction", key=LOCK, icon=":material/lock:", on_click=_on_lock,
                      args=(here, seat), disabled=done or time_up or st.session_state.get(CHOICE) is None,
                      width="stretch")
        if not student:
            st.button("Reveal", key=REVEAL, icon=":material/visibility:", type="primary", on_click=_on_reveal,
                      args=(here, question), disabled=done or (locked is None and not teacher) or
                      (teacher and not seat.holds), width="stretch")
        refused = st.session_state.pop(REFUSED, None)
        if refused:
            st.warning(refused, icon=":material/timer:")
        if time_up and not done:
            st.caption(":material/timer: Time is up: the teacher's countdown closed predictions on this step.")
        elif locked is not None and not done:
            then = "The teacher reveals the answer." if student else "Or Reveal."
            st.caption(f":material/lock: Locked: **{shown(question, locked)}**. Lock again to change it. {then}")
        elif locked is None and not teacher:
            st.caption("Pick an answer and lock it in: the measurement appears only after that.")


def _sync(lesson: Lesson, index: int, seat: room.Seat) -> None:
    """A student's locked prediction as the room keeps it: gone (with its choice) once the teacher asks again."""
    here, kept = _here(lesson, index), room.rooms().prediction(seat.code, seat.member, lesson.id, index)
    mine = st.session_state.setdefault(PREDICTIONS, {})
    if kept is None and here in mine:
        del mine[here]
        st.session_state.pop(CHOICE, None)
    elif kept is not None:
        mine[here] = kept


def asked_again(lesson: Lesson, index: int) -> None:
    """This tab asked the step's question again: its own reveal (and any prediction) is forgotten."""
    st.session_state.setdefault(REVEALED, {}).pop(_here(lesson, index), None)
    st.session_state.setdefault(PREDICTIONS, {}).pop(_here(lesson, index), None)


def choice_order(lesson: Lesson, index: int, question: Question, seat: room.Seat | None) -> tuple[int, ...]:
    """The canonical order on the projector (a teacher's tab, presenter view); every other visitor sees
    their own stable shuffle, so where the right choice sits tells nobody anything."""
    if (seat is not None and seat.teacher) or presenter.on():
        return tuple(range(len(question.choices)))
    return question.order(owner.owner_id(), f"{lesson.id}/{index}")


def is_revealed(lesson: Lesson, index: int, seat: room.Seat | None) -> bool:
    """Asked for by this tab, or, in a room, by the teacher for everyone."""
    if seat is not None and room.revealed(seat, lesson, index):
        return True
    return (seat is None or seat.teacher) and here_asked(lesson, index)


def class_predictions(lesson: Lesson, index: int, question: Question, seat: room.Seat | None) -> None:
    """The class's predictions as a live chart, for the teacher with Show predictions on, until the reveal
    (pages/lessons.py draws it beside the question, where a projector shows it on the first screen)."""
    if seat is not None and seat.teacher and seat.state.show_distribution and not is_revealed(lesson, index, seat):
        live_fragment(lambda: _class_chart(seat, lesson, index, question), room.POLL_S)


def _class_chart(seat: room.Seat, lesson: Lesson, index: int, question: Question) -> None:
    counts = room.distribution(seat, lesson, index, question)
    if counts is None:
        st.caption("No predictions yet.")
        return
    widgets.chart(param_breakdown(counts, "The class's predictions", unit="students"),
                  key=f"room_dist_{lesson.id}_{index}")


def here_asked(lesson: Lesson, index: int) -> bool:
    return _here(lesson, index) in st.session_state.setdefault(REVEALED, {})


def shown(question: Question, value) -> str:
    if question.choices:
        return question.choices[int(value)]
    return f"{value:g}{f' {question.unit}' if question.unit else ''}"


def measured_text(question: Question, reveal: Reveal) -> str:
    if question.choices:
        if len(reveal.correct) == 1:
            return question.choices[reveal.correct[0]]
        return "not decided" if not reveal.correct else "see below"
    return "—" if reveal.value is None else shown(question, reveal.value)


def judged(question: Question, value, reveal: Reveal) -> str:
    """What the reveal says of this prediction: from `Question.right`, the decision its sentence states."""
    right = question.right(value, reveal)
    if question.choices:
        if right is None:
            return (":material/help: The measurement rules out other choices, not this one; it does not decide "
                    "between the rest." if reveal.ruled_out else
                    ":material/help: The evidence does not decide between the choices.")
        if right:
            return ":material/check_circle: Your prediction matches."
        return (":material/cancel: The measurement rules this out." if int(value) in reveal.ruled_out else
                ":material/cancel: Not what was measured." if reveal.label == "Measured" else
                ":material/cancel: Not the answer.")
    if right is None:
        return ":material/help: Nothing measured to compare with."
    what = "the measurement" if reveal.label == "Measured" else "the answer"
    share = f"{100 * question.tolerance:g}%"
    return (f":material/check_circle: Within {share} of {what}." if right else
            f":material/cancel: More than {share} away from {what}.")


def result(lesson: Lesson, index: int, question: Question, seat: room.Seat | None = None) -> bool:
    """The answer beside the prediction (and, in a room, beside the class's predictions), in the container
    keyed `lesson_result`; False (and nothing drawn) before the reveal. An experiment still running shows
    its progress and a Stop button. A teacher's reveal reaches the room once the answer is on screen."""
    if not is_revealed(lesson, index, seat):
        return False
    if seat is not None and seat.state.reveal_hidden:   # the teacher took it off every screen for now
        st.info("The teacher has hidden the answer for now: eyes on the teacher.", icon=":material/visibility_off:")
        return False
    here = _here(lesson, index)
    answer = revealed(lesson, index)
    if answer is None:
        outcome = _result(question) if question.experiment else None
        if question.experiment and outcome is None:
            if seat is not None and not seat.teacher:   # students never start the measurement themselves
                st.info("The teacher's measurement is on its way: the answer appears here when it is done.",
                        icon=":material/hourglass_top:")
            else:
                _running(question)
            return True
        answer = (question.reveal(outcome) if question.experiment else
                  plain_reveal(lesson.id, index, lesson_version(lesson.id)))
        st.session_state.setdefault(REVEALED, {})[here] = answer
    if seat is not None and seat.teacher:
        room.reveal(seat, lesson, index)
    counts = room.distribution(seat, lesson, index, question) if seat is not None else None
    with st.container(key=RESULT, border=True):
        st.html(WRAP_CSS)
        mine, measured = st.columns(2)
        if seat is not None and seat.teacher:
            mine.metric("The class predicted", f"{sum((counts or {}).values())} locked")
        else:
            locked = prediction(lesson, index)
            mine.metric("You predicted", "nothing locked" if locked is None else shown(question, locked))
            if locked is not None:
                st.markdown(judged(question, locked, answer))
        measured.metric(answer.label, measured_text(question, answer))
        if counts:
            widgets.chart(param_breakdown(counts, "The class's predictions", unit="students"),
                          key=f"room_result_{lesson.id}_{index}")
        draw(answer.view, f"lesson_reveal_fig_{lesson.id}_{index}", answer.answer)
        if answer.verdict:
            with st.expander("The verdict, with its 95% intervals over seeds"):
                st.markdown(in_students_words(answer.verdict))
    return True


def draw(view: View, key: str, text: str = "") -> None:
    """A step's view or a reveal's: the figure first (a projector shows it without scrolling), its
    caption, then `text`, a table, a note and a seed check."""
    if view.figure is not None:
        widgets.chart(view.figure, key=key, fit=PROJECTOR_FIGURE_PX, shared=True)   # cached, never edited
    if view.caption:
        st.caption(view.caption)
    if text:
        st.markdown(text)
    if view.table is not None:
        st.dataframe(view.table, hide_index=True)
    if view.note:
        st.markdown(view.note)
    if view.check is not None:
        with st.container(border=True):
            st.markdown(f":material/fact_check: **The text says:** {view.check.claim}\n\n"
                        f"**Measured:** {view.check.measured}\n\n**Which is right:** {view.check.right}")


def _running(question: Question) -> None:
    job = experiment_job.current_job()
    if not experiment_job.same(job, question.experiment, _params(question)):
        message = experiment_job.take_error() or "Another experiment of this session is running: stop it first."
        st.warning(message, icon=":material/hourglass_top:")
        return

    def body(job) -> None:
        with st.container(key=RESULT, border=True):
            p = job.progress()
            if p.queue_position:
                st.markdown(f":material/hourglass_top: Waiting for a free slot: {p.queue_position} in the queue")
            elif job.status == "failed":
                st.error(f"The experiment failed: {job.message}")
            elif job.status == "stopped":
                st.info("Stopped before a single seed finished, so there is nothing to show yet.")
                st.button("Measure it after all", key=RERUN, icon=":material/play_arrow:",
                          on_click=experiment_job.on_run, args=(question.experiment, _params(question), False))
            else:
                st.progress(p.fraction, text=f"Measuring: {EXPERIMENTS[job.name].title} · {p.text} · "
                                             f"{p.fraction:.0%}")
                st.button("Stop", key=STOP, icon=":material/stop:", on_click=experiment_job.on_stop)

    experiment_job.poll(job, body)


def _known_answer(lesson: Lesson, index: int, question: Question) -> Reveal | None:
    """The reveal of a step already revealed: this tab's, else computed from what is stored (no job)."""
    answer = revealed(lesson, index)
    if answer is None and question.experiment is None:
        answer = plain_reveal(lesson.id, index, lesson_version(lesson.id))
    elif answer is None:
        outcome = _result(question)
        answer = None if outcome is None else question.reveal(outcome)
    return answer


def summary(lesson: Lesson, seat: room.Seat | None = None) -> None:
    """The last step's look back: "you answered N of M right" (M: the revealed questions whose answer
    decided them), and in a room the class's share right on every revealed question. One line per
    question, so it wraps in the text column."""
    student, teacher = seat is not None and not seat.teacher, seat is not None and seat.teacher
    mine, lines = [], []
    for index, step in enumerate(lesson.steps):
        q = step.question
        shown_here = (room.revealed(seat, lesson, index) if seat is not None else here_asked(lesson, index))
        answer = _known_answer(lesson, index, q) if q is not None and shown_here else None
        if answer is None:
            continue
        line = f"- **Step {index + 1}.** {q.prompt}"
        if not teacher:
            locked = (room.rooms().prediction(seat.code, seat.member, lesson.id, index) if student and seat.member
                      else prediction(lesson, index))
            verdict = None if locked is None else q.right(locked, answer)
            line += (" You predicted nothing." if locked is None else f" You: *{shown(q, locked)}*, "
                     + {True: "right.", False: "not right.", None: "not decided."}[verdict])
            if locked is not None:
                mine.append((q, locked, answer))
        if seat is not None:
            try:
                right, decided = class_right(q, answer, room.rooms().distribution(seat.code, lesson.id, index))
            except RoomError:
                right, decided = 0, 0
            line += f" Class: {right} of {decided} right." if decided else " Class: nothing decided."
        lines.append(line)
    with st.container(border=True, key=SUMMARY):
        st.markdown(":material/summarize: **How the predictions went**")
        if not lines:
            st.caption("No question of this lesson has been revealed here yet.")
            return
        if not teacher:
            right, decided = tally(mine)
            st.markdown(f"You answered **{right} of {decided}** right (the revealed questions you predicted "
                        "whose measurement decided them).")
        st.markdown("\n".join(lines))
