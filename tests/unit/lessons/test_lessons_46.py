"""The notebook lesson (lesson46): every step's view builds, every live reveal answers, every experiment
reveal reads a tiny result without marking a choice it cannot decide (the page: tests/app/test_app_lessons_46.py)."""

from __future__ import annotations

import pytest

from explorer.experiments import EXPERIMENTS, SerialExecutor, run
from explorer.lessons import LESSONS, lesson46_reveals, lesson46_views
from explorer.lessons.base import Reveal, View

LESSON = LESSONS["lesson46"]
STEPS = list(enumerate(LESSON.steps))


def test_the_lesson_follows_the_notebook_with_questions():
    assert LESSON.id == "lesson46"
    assert len(LESSON.steps) == 7
    assert sum(s.question is not None for s in LESSON.steps) >= 4
    assert {s.question.experiment for s in LESSON.steps if s.question} >= {"pe-order", "heads", "length",
                                                                         "pre-post-ln"}


@pytest.mark.parametrize("index, step", STEPS, ids=[s.title for s in LESSON.steps])
def test_every_view_builds_with_its_defaults(index, step):
    view = step.view(step.defaults())
    assert isinstance(view, View) and view.figure is not None and view.caption
    if step.try_it is not None:
        url, params = step.try_it(step.defaults())
        assert url and all(isinstance(v, str) for v in params.values())


@pytest.mark.parametrize("control", [c for s in LESSON.steps for c in s.controls], ids=lambda c: c.key)
def test_every_control_option_builds(control):
    step = next(s for s in LESSON.steps if control in s.controls)
    for option in control.options:
        assert step.view({**step.defaults(), control.key: option}).figure is not None


LIVE = [(i, s) for i, s in STEPS if s.question is not None and s.question.experiment is None]


@pytest.mark.parametrize("index, step", LIVE, ids=[s.title for _, s in LIVE])
def test_every_live_reveal_is_computed_and_decided(index, step):
    reveal = step.question.reveal(None)
    assert isinstance(reveal, Reveal) and reveal.answer
    assert reveal.correct or reveal.value is not None
    assert all(0 <= c < len(step.question.choices) for c in reveal.correct)


def test_our_attention_equals_pytorchs_to_float_rounding():
    reveal = lesson46_views.mha_difference()
    picked = [lesson46_views.MHA_CHOICES[c] for c in reveal.correct]
    assert picked in (["exactly 0"], ["float rounding, about 1e-7"])   # exactly equal, or equal to float rounding


def test_shuffling_the_input_shuffles_the_output_alike():
    correct = lesson46_views.permutation().correct
    assert [lesson46_views.SHUFFLE_CHOICES[c] for c in correct] == [lesson46_views.SHUFFLED]


EXPERIMENTAL = [(i, s) for i, s in STEPS if s.question is not None and s.question.experiment is not None]


@pytest.fixture(scope="module")
def tiny_results():
    names = {s.question.experiment for _, s in EXPERIMENTAL}
    return {n: run(n, EXPERIMENTS[n].tiny, executor=SerialExecutor()) for n in sorted(names)}


@pytest.mark.parametrize("index, step", EXPERIMENTAL, ids=[s.title for _, s in EXPERIMENTAL])
def test_an_experiment_reveal_reads_the_tiny_result_and_marks_nothing_undecided(index, step, tiny_results):
    result = tiny_results[step.question.experiment]
    reveal = step.question.reveal(result)
    assert reveal.answer and reveal.verdict == result.verdict
    assert reveal.view.figure is not None
    assert reveal.value is None   # a choice question: the page reads `value` as a number question's answer
    if result.outcome == "inconclusive":
        assert reveal.correct == ()


def test_the_shipped_heads_result_marks_about_the_same_by_its_margin():
    """At the defaults both sit at 99.9%: no meaningful difference within 2 points, which decides the reveal."""
    question = next(s.question for _, s in EXPERIMENTAL if s.question.experiment == "heads")
    result = question.stored()
    assert result is not None and result.outcome == "equivalent" and result.holds is None
    same = lesson46_reveals.HEADS_CHOICES.index("about the same (within 2 points)")
    assert question.reveal(result).correct == (same,)
    assert "±2.0 points" in result.verdict


def test_the_stability_budget_fits_the_work_cap():
    from explorer.experiments import MAX_WORK, work_units

    question = LESSON.steps[-1].question
    assert work_units(question.experiment, question.params) <= MAX_WORK


def test_an_open_question_is_never_marked(tiny_results):
    reveal = lesson46_reveals.length_accuracy(tiny_results["length"])
    assert reveal.correct == ()
    assert all(f'"{lesson46_reveals.LENGTH_CHOICES[i]}"' in reveal.answer for i in reveal.ruled_out)
