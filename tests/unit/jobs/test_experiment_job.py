"""ExperimentJob: an experiment runs in a background thread in the training jobs' slot pool, its result
arrives (and is cached), Stop keeps the seeds that finished, and a busy pool makes it wait its turn.
Every job is stopped and joined in `finally` (a torch thread alive at interpreter exit aborts the process)."""

import time

import pytest

from explorer.experiments import EXPERIMENTS, MAX_WORK, cached
from explorer.jobs import slots
from explorer.jobs.experiment import ExperimentJob, cache_created
from explorer.jobs.slots import pool_counts
from explorer.jobs.training import TrainingJob
from explorer.model import build_model
from explorer.tasks import make_task
from explorer.train_config import TrainConfig


@pytest.fixture
def started(tmp_path):
    """Build and start jobs whose cache lives in tmp_path; all are closed and joined afterwards."""
    made: list = []

    def start(name, params=None, **kwargs):
        job = ExperimentJob(name, params, cache_dir=tmp_path, **kwargs)
        made.append(job)
        job.start()
        return job

    try:
        yield start, made
    finally:
        for job in made:
            job.close(timeout=60)
        assert not any(job.alive for job in made)
        assert pool_counts() == (0, 0)


def wait_until(done, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the job did not get there in time"
        time.sleep(0.05)


def tiny(name, **changes) -> dict:
    exp = EXPERIMENTS[name]
    return {**vars(exp.tiny), **changes}


def test_a_tiny_experiment_runs_in_the_background_and_is_cached(started, tmp_path):
    start, _ = started
    params = tiny("decoding")
    job = start("decoding", params)
    assert job.status in ("queued", "running", "finished")
    assert job.join(60) and job.status == "finished", job.message
    result = job.result
    assert result is not None and not result.partial and not result.cached
    assert {"condition", "metric", "mean", "std", "expected"} <= set(result.table.columns) and result.figures
    p = job.progress()
    assert p.fraction == 1.0 and p.queue_position is None and p.elapsed_s > 0
    # the next visitor gets it from the cache, with the time it was computed
    hit = cached("decoding", params, cache_dir=tmp_path)
    assert hit is not None and hit.cached and len(hit.figures) == len(result.figures)
    assert cache_created("decoding", params, cache_dir=tmp_path) is not None
    assert cache_created("decoding", tiny("decoding", beam_k=3), cache_dir=tmp_path) is None


def test_stop_keeps_the_seeds_that_finished(started):
    start, _ = started
    job = start("pe-order", tiny("pe-order", seeds=3))  # 6 runs: (seed 0, with PE), (seed 0, without PE), ...
    wait_until(lambda: job.progress().fraction > 1 / 6 or job.ended)
    job.stop()
    assert job.join(60)
    assert job.status == "stopped" and "finished" in job.message
    result = job.result
    assert result.partial and "partial" in result.verdict
    assert 1 <= len(result.samples) // 2 < 6  # accuracy and val_loss per finished run
    assert result.figures


def test_stopping_before_anything_finished_says_so(started):
    start, _ = started
    job = start("pe-order", tiny("pe-order"))
    job.stop()
    assert job.join(60)
    assert job.status == "stopped" and job.result is None and "nothing to show" in job.message


def test_bad_parameters_are_refused_before_anything_starts():
    with pytest.raises(ValueError, match="seeds"):
        ExperimentJob("pe-order", {"seeds": 0})
    with pytest.raises(ValueError, match="pe-order"):
        ExperimentJob("no-such-experiment")


def test_an_experiment_takes_a_slot_of_the_training_pool(started, monkeypatch, tmp_path):
    start, _ = started
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))  # the training job saves its run
    monkeypatch.setattr(slots, "MAX_CONCURRENT_JOBS", 1)
    first = start("pe-order", tiny("pe-order", steps=MAX_WORK // 10, seeds=5))  # the most one may take
    assert first.status == "running" and pool_counts() == (1, 0)  # granted at once: the pool was free
    second = start("decoding", tiny("decoding"))
    assert second.status == "queued" and second.progress().queue_position == 1
    task = make_task("reversal-fast")
    training = TrainingJob(build_model(task.model_config(), seed=0), task, TrainConfig(steps=5, eval_every=0))
    try:
        training.start()
        assert training.status == "queued" and training.progress().queue_position == 2  # behind the experiment
        assert pool_counts() == (1, 2)
        first.stop()
        assert first.join(60) and second.join(60)
        assert second.status == "finished"  # got the slot once the first one left it
        assert training.join(60) and training.status == "finished"
    finally:
        training.close(timeout=60)
