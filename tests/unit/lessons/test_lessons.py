"""The lessons as data: ids and steps that links rely on, questions that can be answered, views that
build, and reveals that say only what was measured."""

import pytest

from explorer.experiments import EXPERIMENTS, refusal_of
from explorer.figures.diagram import is_drawing
from explorer.figures.layout import TITLE_FIT_PX, fit_title, text_px
from explorer.lessons import LESSONS, Control, Question, Reveal, View, facts

STEPS = [(lesson.id, k) for lesson in LESSONS.values() for k in range(len(lesson.steps))]


def test_the_three_lessons_follow_the_seeds_and_ask_enough_questions():
    assert list(LESSONS) == ["ch2", "lesson46", "module6", "learning"]   # part of every shared link
    questions = [s.question for lesson in LESSONS.values() for s in lesson.steps if s.question is not None]
    assert len(questions) >= 8


@pytest.mark.parametrize("lesson_id, index", STEPS, ids=[f"{a}-{b + 1}" for a, b in STEPS])
def test_every_step_has_text_and_a_view_that_builds(lesson_id, index):
    step = LESSONS[lesson_id].steps[index]
    assert step.title and len(step.text) > 40
    view = step.view(step.defaults()) if step.view is not None else None
    assert view is None or isinstance(view, View)
    assert step.question is not None or (view is not None and (view.figure is not None or view.table is not None))
    if view is not None and view.figure is not None and not is_drawing(view.figure):  # a phone holds its title
        fitted = fit_title(view.figure)
        size = fitted.layout.title.font.size or 16.8
        assert all(text_px(line, size) <= TITLE_FIT_PX for line in (fitted.layout.title.text or "").split("<br>"))
    if step.try_it is not None:
        url, params = step.try_it(step.defaults())
        assert url in {"positional", "architecture", "attention", "outputs", "gradients", "train", "experiments"}
        assert all(isinstance(v, str) for v in params.values())


@pytest.mark.parametrize("lesson_id, index", [s for s in STEPS if LESSONS[s[0]].steps[s[1]].question is not None])
def test_every_question_can_be_answered(lesson_id, index):
    q = LESSONS[lesson_id].steps[index].question
    assert 2 <= len(q.choices) <= 5 or q.number is not None
    if q.experiment is not None:
        assert q.experiment in EXPERIMENTS and refusal_of(q.experiment, q.params) is None
        return
    reveal = q.reveal(None)
    assert isinstance(reveal, Reveal) and reveal.answer
    if q.choices:
        assert reveal.correct and all(0 <= c < len(q.choices) for c in reveal.correct)
    else:
        low, high, _ = q.number
        assert reveal.value is not None and low <= reveal.value <= high


def test_a_question_gives_choices_or_a_number_and_names_a_real_experiment():
    reveal = lambda r: Reveal("x")  # noqa: E731
    with pytest.raises(ValueError, match="2-5"):
        Question("?", reveal, choices=("only one",))
    with pytest.raises(ValueError, match="either"):
        Question("?", reveal)
    with pytest.raises(ValueError, match="no experiment"):
        Question("?", reveal, choices=("a", "b"), experiment="nope")
    with pytest.raises(ValueError, match="MAX_WORK"):
        Question("?", reveal, choices=("a", "b"), experiment="pe-order", params={"steps": 100_000})


def test_a_control_takes_only_its_options_from_a_link():
    c = Control("d_model", "d_model", (16, 32, 64), 64)
    assert c.parse("32") == 32 and c.parse(" 16 ") == 16
    assert c.parse("33") is None and c.parse(None) is None and c.parse("<b>") is None
    with pytest.raises(ValueError, match="not one of"):
        Control("x", "x", (1, 2), 3)


def test_the_low_dimensions_turn_fastest_as_measured_in_the_table():
    """The Haskell module says the opposite; counting sign changes in the table settles it."""
    period, seen = facts.wavelengths(64), facts.measured_wavelengths(64)
    assert period[0] == pytest.approx(2 * 3.14159265, rel=1e-6) and period[-1] > 40_000
    assert abs(seen[0] - period[0]) / period[0] < 0.01 and abs(seen[20] - period[20]) / period[20] < 0.05
    reveal = facts.fastest_dimensions(64)
    assert [facts.FASTEST_CHOICES[c] for c in reveal.correct] == [facts.LOW_FAST] and reveal.view.check is not None


def test_number_predictions_count_within_ten_percent():
    q = Question("?", lambda r: Reveal("x"), number=(0.0, 100.0, 1.0))
    assert q.close_enough(10.5, 10.0) and not q.close_enough(12.0, 10.0)


def test_every_measured_question_ships_its_answer():
    """A class's first reveal on a fresh server is instant: `python -m explorer lessons --build` stored
    every experiment a question needs, at the question's budget, under the current code version."""
    from explorer.experiments import cached
    from explorer.lessons import SHIPPED_RESULTS

    missing = [(lesson.id, k, s.question.experiment) for lesson in LESSONS.values()
               for k, s in enumerate(lesson.steps, 1) if s.question is not None and s.question.experiment
               and cached(s.question.experiment, s.question.params, SHIPPED_RESULTS) is None]
    assert not missing, f"not shipped (run `python -m explorer lessons --build`): {missing}"
