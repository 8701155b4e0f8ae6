"""A saved run continues from disk exactly as if it had never stopped: same weights, same metrics."""

from pathlib import Path

import pytest
import torch

from explorer.jobs.training import TrainingJob
from explorer.model import build_model
from explorer.store import runs
from explorer.store.resume import can_resume
from explorer.tasks import make_task
from explorer.training import train_steps
from tests.unit.helpers import MODEL, TASK, TRAIN, interrupted

ROOT = Path(__file__).resolve().parents[3]


def straight(task):
    model = build_model(task.model_config(MODEL), seed=TRAIN.seed)
    return model, list(train_steps(model, task, TRAIN))


def same(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def numbers(records):
    return [(r.step, r.loss, r.lr, r.grad_norm, r.grad_norms, r.val_loss, r.val_exact) for r in records]


@pytest.mark.parametrize("at", [1, 5, 8])
def test_a_run_resumed_from_disk_continues_bit_for_bit(task, at):
    reference, history = straight(task)
    name = interrupted(task, at)
    assert can_resume(runs.run_folder(name))
    model, task2, cfg, state, _ = runs.open_for_resume(name)
    assert state.step == at and cfg == TRAIN
    rest = list(train_steps(model, task2, cfg, state))
    assert same(model, reference)
    assert numbers(state.history) == numbers(history)  # the saved steps and the new ones
    assert len(rest) == TRAIN.steps - at


@pytest.fixture
def task():
    return make_task(TASK)



def test_a_job_from_disk_resumes_as_a_run_of_its_own_and_keeps_the_source(task):
    reference, _ = straight(task)
    name = interrupted(task, 6)
    job = TrainingJob.from_run(name)
    assert job.status == "stopped" and job.progress().step == 6 and len(job.history()) == 6
    job.resume()
    assert job.join(60) and job.status == "finished", job.message
    assert same(job.model, reference)
    assert job.run_name != name and name in {r.name for r in runs.list_runs()}  # the source stays
    again = TrainingJob.from_run(job.run_name)
    assert again.status == "finished" and again.progress().step == TRAIN.steps
    again.resume(extra_steps=2)
    assert again.join(60) and again.progress().step == TRAIN.steps + 2


def test_a_run_saved_without_its_state_says_it_cannot_resume(task):
    model = build_model(task.model_config(MODEL), seed=0)
    name = runs.save_run("old", model, task.cfg, TRAIN, []).name
    with pytest.raises(ValueError, match="without what resuming needs"):
        TrainingJob.from_run(name)


