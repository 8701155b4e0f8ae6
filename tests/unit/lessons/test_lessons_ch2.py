"""The chapter lesson: every view builds, every live answer is computed, experiment answers read a tiny
result without claiming anything, and the seed checks' numbers come from computation."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.experiments import EXPERIMENTS, SerialExecutor, refusal_of, run
from explorer.lessons import LESSONS, Reveal, View
from explorer.lessons import ch2_views as live

LESSON = LESSONS["ch2"]
STEPS = list(enumerate(LESSON.steps))
LIVE = [(i, s) for i, s in STEPS if s.question is not None and s.question.experiment is None]
FROM_EXPERIMENT = [(i, s) for i, s in STEPS if s.question is not None and s.question.experiment is not None]


def test_the_lesson_follows_the_chapter_with_enough_questions():
    assert LESSON.id == "ch2"
    assert len(LESSON.steps) == 13
    assert sum(s.question is not None for s in LESSON.steps) >= 7


@pytest.mark.parametrize("index, step", STEPS, ids=[s.title for _, s in STEPS])
def test_every_view_builds_at_its_defaults(index, step):
    if step.view is None:
        return
    view = step.view(step.defaults())
    assert isinstance(view, View)
    assert view.figure is not None or view.table is not None
    for control in step.controls:   # and at every other value of its controls
        for option in control.options:
            assert isinstance(step.view({**step.defaults(), control.key: option}), View)


@pytest.mark.parametrize("index, step", LIVE, ids=[s.title for _, s in LIVE])
def test_every_live_answer_is_measured(index, step):
    reveal = step.question.reveal(None)
    assert isinstance(reveal, Reveal)
    assert reveal.correct or reveal.value is not None or "no choice is marked right" in reveal.answer  # inconclusive
    if step.question.choices:
        assert all(0 <= c < len(step.question.choices) for c in reveal.correct)


@pytest.mark.parametrize("index, step", FROM_EXPERIMENT, ids=[s.title for _, s in FROM_EXPERIMENT])
def test_experiment_questions_fit_the_budget_and_claim_nothing_from_a_tiny_run(index, step):
    q = step.question
    assert refusal_of(q.experiment, q.params) is None
    result = run(q.experiment, EXPERIMENTS[q.experiment].tiny, executor=SerialExecutor())
    assert result.holds is None            # one seed decides nothing
    reveal = q.reveal(result)
    assert reveal.correct == ()
    assert reveal.verdict == result.verdict
    assert q.reveal(None).correct == ()


def test_permutation_and_causality_checks():
    _, gap, size = live.permutation_check("none")
    assert gap < 1e-4 * size
    assert live.permutation_check("sinusoidal")[1] > 0.01 * size
    delta, pattern, _ = live.causal_check(3)
    assert delta[:3].max() < 1e-6 and (delta[3:] > 1e-4).all()
    assert np.allclose(np.triu(pattern, 1), 0)


def test_offsets_and_rope_depend_on_distance_only():
    gap, span = live.offset_spread(64)
    assert gap < 1e-9 * span
    assert live.rope_diagonal_spread(live.rope_scores(16)) < 1e-9
    assert live.learned_table_params(512, 512) == 512 * 512


def test_the_chapters_parameter_rule_gives_18_9m_for_base():
    assert live.chapter_rule(6, 512, 2048) == 18_874_368
    assert round(live.chapter_rule(6, 512, 2048) / 1e6, 1) == 18.9
    parts = live.base_parts()
    assert 60e6 < sum(parts.values()) < 66e6           # what the 65M counts: both stacks and the embeddings
    reveal = dict(LIVE)[7].question.reveal(None)
    assert reveal.value == 18.9


def test_ffn_is_two_thirds_of_a_block():
    reveal = dict(LIVE)[4].question.reveal(None)
    assert 66 < reveal.value < 67


def test_label_smoothing_rows():
    k, gold, eps = 8, 3, 0.1
    formula, code = live.formula_row(k, gold, eps), live.code_row(k, gold, eps)
    assert formula[gold] == pytest.approx(1 - eps + eps / k) and formula[0] == pytest.approx(eps / k)
    assert code[gold] == pytest.approx(1 - eps) and code[0] == 0 and code[1] == pytest.approx(eps / (k - 2))
    assert formula.sum() == pytest.approx(1) and code.sum() == pytest.approx(1)
    measured = live.library_row(k, gold, eps)
    assert np.allclose(measured, code, atol=1e-9)      # explorer/losses.py trains against the code's row
