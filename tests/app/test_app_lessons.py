"""The Lessons page under AppTest: every step of every lesson by its link, predict-lock-reveal, a
locked link, and links that name no lesson or step."""

import pytest
from streamlit.testing.v1 import AppTest

from explorer.lessons import LESSONS
from explorer.store import checkpoints
from tests.app.helpers import SHIPPED, assert_ok, open_lesson

STEPS = [(lesson.id, k) for lesson in LESSONS.values() for k in range(len(lesson.steps))]


@pytest.fixture(autouse=True)
def shipped_models(monkeypatch):
    """The lessons show the shipped models (the tier's default is an empty folder)."""
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", SHIPPED)


def texts(at: AppTest) -> str:
    return "\n".join(m.value for m in [*at.markdown, *at.caption, *at.warning, *at.title])


def step_text(at: AppTest) -> str:
    return next(m.value for m in [*at.markdown, *at.caption] if "Step " in m.value and " of " in m.value)


@pytest.mark.parametrize("lesson_id, index", STEPS, ids=[f"{a}-{b + 1}" for a, b in STEPS])
def test_every_step_opens_by_its_link(lesson_id, index):
    lesson = LESSONS[lesson_id]
    at = open_lesson({"lesson": lesson_id, "step": str(index + 1)})
    assert f"Step {index + 1} of {len(lesson.steps)}" in step_text(at)
    assert at.title[0].value == lesson.steps[index].title
    assert at.button(key="lesson_prev").disabled == (index == 0)
    assert at.button(key="lesson_next").disabled == (index == len(lesson.steps) - 1)
    if lesson.steps[index].question is not None:
        assert "Measured" not in [m.label for m in at.metric]   # nothing of the answer before a lock


def _first_computed_question() -> tuple[str, int]:
    return next((lesson.id, k) for lesson in LESSONS.values() for k, s in enumerate(lesson.steps)
                if s.question is not None and s.question.experiment is None and s.question.choices)


def test_the_answer_appears_only_after_the_prediction_is_locked():
    lesson_id, index = _first_computed_question()
    question = LESSONS[lesson_id].steps[index].question
    at = open_lesson({"lesson": lesson_id, "step": str(index + 1)})
    assert at.button(key="lesson_lock").disabled and at.button(key="lesson_reveal").disabled
    assert "Measured" not in [m.label for m in at.metric]
    at.radio(key="lesson_choice").set_value(1).run()
    assert not at.button(key="lesson_lock").disabled and at.button(key="lesson_reveal").disabled
    at.button(key="lesson_lock").click().run()
    at.radio(key="lesson_choice").set_value(0).run()
    at.button(key="lesson_lock").click().run()          # a second lock replaces the first
    assert "Measured" not in [m.label for m in at.metric]
    at.button(key="lesson_reveal").click().run()
    assert_ok(at)
    shown = {m.label: m.value for m in at.metric}
    assert shown["You predicted"] == question.choices[0]
    assert at.radio(key="lesson_choice").disabled and at.button(key="lesson_lock").disabled
    answer = question.reveal(None)
    assert ("matches" in texts(at)) == (0 in answer.correct)


def test_next_and_back_move_the_link_and_keep_a_locked_prediction():
    lesson_id, index = _first_computed_question()
    at = open_lesson({"lesson": lesson_id, "step": str(index + 1)})
    at.radio(key="lesson_choice").set_value(1).run()
    at.button(key="lesson_lock").click().run()
    at.button(key="lesson_next").click().run()
    assert at.query_params["step"] == [str(index + 2)] or at.query_params["step"] == str(index + 2)
    at.button(key="lesson_prev").click().run()
    assert_ok(at)
    assert at.radio(key="lesson_choice").value == 1 and not at.button(key="lesson_reveal").disabled


def _step_with_controls() -> tuple[str, int]:
    return next((lesson.id, k) for lesson in LESSONS.values() for k, s in enumerate(lesson.steps) if s.controls)


def test_a_locked_link_shows_the_teachers_values_and_try_it_opens_them_unlocked():
    lesson_id, index = _step_with_controls()
    step = LESSONS[lesson_id].steps[index]
    control = step.controls[0]
    teacher = next(o for o in control.options if o != control.default)
    at = open_lesson({"lesson": lesson_id, "step": str(index + 1), control.key: str(teacher), "lock": "1"})
    slider = at.select_slider(key=f"lesson_ctl_{control.key}")
    assert slider.value == teacher and slider.disabled
    assert "teacher's settings" in texts(at)
    unlocked = open_lesson({"lesson": lesson_id, "step": str(index + 1), control.key: str(teacher)})
    slider = unlocked.select_slider(key=f"lesson_ctl_{control.key}")
    assert slider.value == teacher and not slider.disabled
    if step.try_it is not None:
        url, params = step.try_it({**step.defaults(), control.key: teacher})
        assert str(teacher) in params.values()


@pytest.mark.parametrize("query, says", [
    ({"lesson": "ch9"}, "There is no lesson `ch9`"),
    ({"lesson": "module6", "step": "99"}, "it has steps 1 to"),
    ({"lesson": "module6", "step": "two"}, "it has steps 1 to"),
])
def test_a_wrong_link_says_what_is_valid_and_opens_something(query, says):
    at = open_lesson(query)
    assert says in texts(at)
    assert at.title  # the lesson list, or a step of the lesson


def test_without_a_lesson_the_page_offers_all_three():
    at = open_lesson({})
    assert [b.key for b in at.button if b.key and b.key.startswith("lesson_open_")] == [
        f"lesson_open_{k}" for k in LESSONS]
    at.button(key="lesson_open_module6").click().run()
    assert "Step 1 of" in step_text(at)


def test_a_reveal_nobody_has_measured_runs_its_experiment_with_progress_and_stop(jobs, monkeypatch, tmp_path):
    from explorer.lessons import base
    from tests.app.training_helpers import poll_until
    from ui import experiment_job

    monkeypatch.setattr(base, "SHIPPED_RESULTS", tmp_path / "nothing-shipped")
    lesson_id, k = next((lesson.id, k) for lesson in LESSONS.values() for k, s in enumerate(lesson.steps, 1)
                        if s.question is not None and s.question.experiment and s.question.choices)
    at = open_lesson({"lesson": lesson_id, "step": str(k)})
    at.radio(key="lesson_choice").set_value(0).run()
    at.button(key="lesson_lock").click().run()
    at.button(key="lesson_reveal").click().run()
    assert_ok(at)
    job = at.session_state[experiment_job.EXP_JOB]
    assert job.name == LESSONS[lesson_id].steps[k - 1].question.experiment
    assert at.get("progress") and "Measured" not in [m.label for m in at.metric]
    at.button(key="lesson_stop").click().run()
    poll_until(at, lambda: job.ended)
    at.run()
    assert_ok(at)
    assert job.status == "stopped"
    if job.result is None:   # stopped before a seed finished: nothing to show, and a way to run it after all
        assert "nothing to show yet" in texts(at) and at.button(key="lesson_rerun")
    else:                    # a partial result is shown, and it decides nothing
        assert "Measured" in [m.label for m in at.metric] and "does not decide" in texts(at)
