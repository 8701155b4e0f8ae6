"""The Lessons page on every step of the notebook lesson: the step renders, and a prediction locked in
and revealed shows the answer without an exception (experiment answers from stored tiny results)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.experiments import EXPERIMENTS, SerialExecutor, run, save_csv
from explorer.experiments.runner import cache_path
from explorer.lessons import LESSONS
from explorer.store import checkpoints

APP = Path(__file__).resolve().parents[2] / "app.py"
SHIPPED = Path(__file__).resolve().parents[2] / "pretrained"
LESSON = LESSONS["lesson46"]


@pytest.fixture(scope="module")
def tiny_results():
    names = sorted({s.question.experiment for s in LESSON.steps if s.question and s.question.experiment})
    return {n: run(n, EXPERIMENTS[n].tiny, executor=SerialExecutor()) for n in names}


@pytest.mark.parametrize("index", range(len(LESSON.steps)), ids=[s.title for s in LESSON.steps])
def test_each_step_renders_and_reveals(index, runs_dir, monkeypatch, tiny_results, jobs):
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", SHIPPED)   # step 1 reads the shipped order model
    step = LESSON.steps[index]
    question = step.question
    if question is not None and question.experiment is not None:   # stored, so the reveal starts no job
        save_csv(tiny_results[question.experiment],
                 cache_path(question.experiment, question.params, runs_dir / "experiments" / "cache"))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.switch_page("pages/lessons.py")
    at.query_params["lesson"], at.query_params["step"] = "lesson46", str(index + 1)
    at.run()
    assert not at.exception
    assert [h.value for h in at.title] == [step.title]
    if question is None:
        return
    at.radio(key="lesson_choice").set_value(0)
    at.run()
    at.button(key="lesson_lock").click()
    at.run()
    at.button(key="lesson_reveal").click()
    at.run()
    assert not at.exception
    assert not jobs   # every answer was stored or computed live
    assert [m.label for m in at.metric] == ["You predicted", "Measured"]
