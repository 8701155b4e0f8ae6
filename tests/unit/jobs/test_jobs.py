"""The background training job: finish, stop and resume, divergence, failure, the slot queue, budgets.

Every job is closed and joined in the `make_job` fixture's teardown (a torch thread alive at
interpreter exit aborts the process); gates that hold a worker are opened first.
"""

import math
import os
import sys
import threading
import time

import pandas as pd
import pytest
import torch

from explorer.config import CLASSROOM_PRESETS, REFERENCE_PRESETS, ModelConfig
from explorer.jobs import budget, slots
from explorer.jobs.budget import check_budget, estimate_budget
from explorer.jobs.slots import pool_counts
from explorer.jobs.training import TrainingJob
from explorer.limits import check_run
from explorer.model import build_model
from explorer.store.runs import list_runs, load_run
from explorer.tasks import TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import train_steps

TINY = ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32)
TASK = TaskConfig("reversal", n_symbols=6, min_len=3, max_len=5, n_train=300, n_val=20)


@pytest.fixture(autouse=True)
def runs_root(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    return tmp_path / "runs"


@pytest.fixture(scope="module")
def task():
    return make_task(TASK)


def quick(**kw) -> TrainConfig:
    return TrainConfig(**{**dict(steps=20, batch_size=8, lr=3e-3, warmup=5, eval_every=10, eval_examples=8), **kw})


def tiny_model(task, seed=0, **kw):
    return build_model(task.model_config(TINY, **kw), seed=seed)


@pytest.fixture
def make_job():
    made, gates = [], []

    def make(task, cfg, on_update=None, name=None, seed=0, **model_kw) -> TrainingJob:
        job = TrainingJob(tiny_model(task, seed, **model_kw), task, cfg, name=name, on_update=on_update)
        made.append(job)
        return job

    def gate() -> threading.Event:
        event = threading.Event()
        gates.append(event)
        return event

    make.gate = gate
    try:
        yield make
    finally:
        for event in gates:
            event.set()
        for job in made:
            job.close(timeout=60)
    assert not any(job.alive for job in made)
    assert pool_counts() == (0, 0)


def wait_until(predicate, timeout=60.0):
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.01)


def same_weights(a, b) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))


def test_a_job_trains_to_the_end_saves_the_run_and_can_train_on(task, make_job):
    seen = []
    cfg = quick(snapshot_every=10)
    job = make_job(task, cfg, name="my job", on_update=lambda j: seen.append((j.status, j.state.step)))
    assert job.status == "idle" and job.history_frame().empty and "step" in job.history_frame().columns
    job.start()
    assert job.join(60)
    assert job.status == "finished" and job.message == f"finished 20 steps; saved as run '{job.run_name}'"
    assert [r.loss for r in job.history()] == [r.loss for r in train_steps(tiny_model(task), task, cfg)]
    assert [r.step for r in job.history()] == list(range(1, 21))
    assert seen == [("running", s) for s in range(1, 21)] + [("finished", 20)]
    assert [s.step for s in job.snapshots()] == [10, 20] and job.latest_snapshot().step == 20
    frame = job.history_frame()
    assert list(frame["step"]) == list(range(1, 21)) and {"grad_enc_0", "grad_dec_0"} <= set(frame.columns)
    assert not job.model.training  # left in eval mode, ready for inspection
    [info] = list_runs()
    assert info.name == job.run_name == "my-job" and info.steps == 20
    p = job.progress()
    assert (p.step, p.total, p.eta_s, p.fraction, p.queue_position) == (20, 20, 0.0, 1.0, None)

    with pytest.raises(RuntimeError, match="already started"):
        job.start()
    with pytest.raises(RuntimeError, match="extra_steps"):
        job.resume()
    with pytest.raises(ValueError, match="extra_steps"):
        job.resume(extra_steps=0)
    job.resume(extra_steps=5)
    assert job.join(60)
    assert job.status == "finished" and job.train_cfg.steps == 25 and job.history()[-1].step == 25
    [info] = list_runs()  # the earlier save was replaced, not duplicated
    assert info.name == job.run_name == "my-job-step25" and info.steps == 25


def test_stop_keeps_the_weights_and_resume_repeats_a_straight_run(task, make_job):
    cfg = quick(steps=30)
    straight_model = tiny_model(task, dropout=0.1)
    straight = [r.loss for r in train_steps(straight_model, task, cfg)]
    job = make_job(task, cfg, dropout=0.1, on_update=lambda j: j.stop() if j.state.step == 12 else None)
    rng = torch.random.get_rng_state()
    job.start()
    assert job.join(60)
    assert torch.equal(torch.random.get_rng_state(), rng)  # the job left the global RNG alone
    assert job.status == "stopped" and job.message.startswith("stopped at step 12 of 30; saved as run")
    assert [r.loss for r in job.history()] == straight[:12]
    saved, meta, frame = load_run(job.run_name)
    assert same_weights(saved, job.model) and len(frame) == 12 and meta["status"] == "stopped"
    p = job.progress()
    assert p.step == 12 and p.steps_per_s > 0 and p.eta_s == pytest.approx(18 / p.steps_per_s)
    early = job.history_frame()
    assert list(early["step"]) == list(range(1, 13))
    early.loc[0, "loss"] = -1.0  # the caller's table is its own

    job.resume()
    assert job.join(60)
    assert job.status == "finished"
    assert [r.loss for r in job.history()] == straight
    # The table, extended by the steps after the resume, equals one built from the whole history at once.
    rebuilt = pd.DataFrame([r.to_row(job.state.layer_labels) for r in job.history()])
    pd.testing.assert_frame_equal(job.history_frame(), rebuilt)
    assert same_weights(job.model, straight_model)
    assert [r.name for r in list_runs()] == [job.run_name] and list_runs()[0].steps == 30


def test_divergence_ends_the_job_and_keeps_finite_weights(task, make_job):
    job = make_job(task, quick(steps=200, lr=1e6, warmup=0))
    job.start()
    assert job.join(60)
    last = job.history()[-1]
    assert job.status == "diverged" and last.stopped and job.message.startswith(last.stopped)
    assert "diverged" in job.message and "saved as run" in job.message and len(job.history()) < 200
    assert all(bool(torch.isfinite(p).all()) for p in job.model.parameters())
    assert list_runs()[0].steps == job.state.step == last.step - 1
    with pytest.raises(RuntimeError, match="lower lr"):
        job.resume()


def test_an_exception_in_the_worker_fails_the_job_with_its_message(make_job):
    broken = make_task(TASK)
    real, calls = broken.sample, []
    check_run(tiny_model(broken).cfg, quick(), broken)   # start() probes the budget: before the source breaks

    def sample(batch_size, generator, by_length=False):
        calls.append(batch_size)
        if len(calls) > 3:
            raise RuntimeError("the batch source broke")
        return real(batch_size, generator, by_length)

    broken.sample = sample
    job = make_job(broken, quick())
    job.start()
    assert job.join(60)
    assert job.status == "failed" and job.message == "the batch source broke"
    assert len(job.history()) == 3 and job.run_name is None and list_runs() == []
    with pytest.raises(RuntimeError, match="failed"):
        job.resume()


def test_a_mismatched_model_is_refused_before_any_thread_starts(task):
    model = build_model(ModelConfig(arch="decoder", d_model=16, n_heads=2, n_decoder_layers=1, d_ff=32))
    with pytest.raises(ValueError, match="arch"):
        TrainingJob(model, task, quick())


def test_the_slot_limit_queues_jobs_first_come_first_served(task, make_job, monkeypatch):
    monkeypatch.setattr(slots, "MAX_CONCURRENT_JOBS", 1)
    gate = make_job.gate()
    first = make_job(task, quick(steps=5), on_update=lambda j: gate.wait(60))
    second, third = make_job(task, quick(steps=5)), make_job(task, quick(steps=5))
    for job in (first, second, third):
        job.start()
    assert first.status == "running" and first.progress().queue_position is None
    assert second.status == third.status == "queued"
    assert (second.progress().queue_position, third.progress().queue_position) == (1, 2)
    assert pool_counts() == (1, 2)

    second.stop()  # a queued job leaves the queue at once
    assert second.progress().queue_position is None and third.progress().queue_position == 1
    assert second.join(30) and second.status == "stopped" and "waiting" in second.message
    assert second.run_name is None and second.history() == []
    assert third.status == "queued" and third.history() == []  # still held up by the first

    gate.set()
    assert first.join(60) and third.join(60)
    assert first.status == third.status == "finished" and len(third.history()) == 5


def test_progress_reports_a_rate_and_an_eta_while_running(task, make_job):
    gate, reached = make_job.gate(), threading.Event()

    def hold(job):
        if job.state.step == 10 and not gate.is_set():
            reached.set()
            gate.wait(60)

    job = make_job(task, quick(steps=20, eval_every=0), on_update=hold)
    job.start()
    assert reached.wait(60)
    p = job.progress()
    assert job.status == "running" and len(job.history()) == 10
    assert (p.step, p.total, p.fraction, p.queue_position) == (10, 20, 0.5, None)
    assert p.elapsed_s == job.history()[-1].elapsed > 0
    # the rate is measured on the wall clock, which runs at least as long as the training time
    assert 0 < p.steps_per_s <= 10 / p.elapsed_s * 1.05
    assert p.eta_s == pytest.approx(10 / p.steps_per_s)
    gate.set()
    assert job.join(60) and job.status == "finished"


def test_close_ends_a_long_job_within_seconds(task, make_job, monkeypatch):
    monkeypatch.setattr(budget, "MAX_RUN_SECONDS", math.inf)   # a job of hours, checked like any: let it start
    job = make_job(task, quick(steps=100_000, eval_every=0))
    job.stop()  # before start: nothing happens, and start() still trains
    job.start()
    wait_until(lambda: job.progress().step >= 3)
    assert job.close()  # joins within 5 s
    assert not job.alive and job.status == "stopped" and job.run_name is not None
    assert 3 <= job.state.step < 100_000


def test_check_budget_refuses_what_a_laptop_cannot_train(task):
    gpt2 = REFERENCE_PRESETS["GPT-2 Medium"].config
    with pytest.raises(ValueError, match=r"GiB.*parameters.*reduce d_model"):
        check_budget(gpt2, TrainConfig(), task)
    tiny = task.model_config(TINY)
    with pytest.raises(ValueError, match="activations; reduce batch_size"):
        check_budget(tiny, quick(batch_size=2_000_000), task)
    slow = quick(steps=10**7)
    b = estimate_budget(tiny, slow, task)
    fits = int(budget.MAX_RUN_SECONDS // (b.run_s / slow.steps))
    assert b.measured and b.step_s == budget.probe(tiny, slow, task).step_s  # this machine's own step time
    with pytest.raises(ValueError, match=f"reduce steps to {fits:,} or fewer"):
        check_budget(tiny, slow, task)
    with pytest.raises(ValueError, match="threads"):
        check_budget(tiny, quick(threads=(os.cpu_count() or 1) + 1), task)
    check_budget(tiny, quick(), task)


# budget.probe of each classroom preset on reversal-fast at TrainConfig() on the 2-core Xeon this suite runs on:
# the fastest of 11 probes on 2026-12-01, 1-minute load 1.7-2.5 from other workers (a quiet core is no slower).
CLASSROOM_PROBES = {"tiny": budget.Probe(step_s=0.0076, eval_s=0.037, snapshot_s=0.0015),
                    "small": budget.Probe(step_s=0.022, eval_s=0.128, snapshot_s=0.0024),
                    "medium": budget.Probe(step_s=0.065, eval_s=0.345, snapshot_s=0.0043)}


def test_check_budget_accepts_the_classroom_presets_at_default_settings(monkeypatch):
    """On a machine like this one: the decision is taken on this machine's measured step times
    (CLASSROOM_PROBES, medium's default run about 69 s of the 600 s limit), not on a probe taken now,
    which a loaded machine slows."""
    fast = make_task("reversal-fast")
    probes = {fast.model_config(preset): CLASSROOM_PROBES[name] for name, preset in CLASSROOM_PRESETS.items()}
    monkeypatch.setattr(budget, "probe", lambda cfg, train_cfg, task, **_: probes[cfg])
    for name, preset in CLASSROOM_PRESETS.items():
        cfg = fast.model_config(preset)
        check_budget(cfg, TrainConfig(), fast)
        b = estimate_budget(cfg, TrainConfig(), fast)
        assert b.memory_bytes < budget.MAX_TRAIN_BYTES and math.isfinite(b.run_s) and b.run_s > 0
        assert b.measured and b.step_s == CLASSROOM_PROBES[name].step_s  # timed from the figures above


def test_the_estimate_comes_from_a_cached_probe_of_this_config(task, monkeypatch):
    tiny = task.model_config(TINY)
    calls = []
    real = budget._measure

    def counted(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(budget, "_measure", counted)
    monkeypatch.setattr(budget, "_PROBES", {})
    first = estimate_budget(tiny, quick(steps=100), task)
    again = estimate_budget(tiny, quick(steps=1000, lr=0.01), task)  # steps and lr do not change a step's cost
    assert len(calls) == 1 and first.step_s == again.step_s and first.measured
    evals, snapshots = budget._counts(quick(steps=1000))
    p = budget.probe(tiny, quick(), task)
    assert again.run_s == pytest.approx(1000 * p.step_s + evals * p.eval_s + snapshots * p.snapshot_s)
    estimate_budget(tiny, quick(batch_size=16), task)
    assert len(calls) == 2  # another batch size is another probe
    huge = REFERENCE_PRESETS["GPT-2 Medium"].config
    assert not estimate_budget(huge, TrainConfig(batch_size=1), task).measured  # never probed: far over the limits


def test_a_refusal_taken_on_a_busy_moment_is_probed_again_and_lifted(task, monkeypatch):
    """A probe slowed by a busy machine refuses a run; once that probe is REPROBE_S old the next check probes
    again and keeps the fastest, so the refusal does not outlast the load. An accepted run is not re-probed."""
    tiny, cfg = task.model_config(TINY), quick(steps=5000)
    timings = [budget.Probe(1.0, 1.0, 0.01), budget.Probe(0.01, 0.05, 0.001), budget.Probe(5.0, 5.0, 0.1)]
    calls = []
    monkeypatch.setattr(budget, "_measure", lambda *key: calls.append(key) or timings[len(calls) - 1])
    monkeypatch.setattr(budget, "_PROBES", {})
    with pytest.raises(ValueError, match="over the 10 min limit"):
        check_budget(tiny, cfg, task)   # the busy probe, just taken: not probed again at once
    assert len(calls) == 1
    monkeypatch.setattr(budget, "REPROBE_S", 0.0)   # a minute later
    check_budget(tiny, cfg, task)                    # probed again on a quiet machine: accepted
    assert len(calls) == 2 and budget.estimate_budget(tiny, cfg, task).step_s == 0.01
    check_budget(tiny, cfg, task)                    # accepted runs keep their probe
    assert len(calls) == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own priority is a Linux task's")
def test_a_job_trains_at_background_priority_and_leaves_the_server_threads_as_they_were(task):
    """Two jobs on two cores would otherwise take the CPU from every page's rerun (explorer/jobs/slots.py)."""
    seen: list[int] = []
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    job = TrainingJob(tiny_model(task), task, quick(steps=3),
                      on_update=lambda j: seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
    job.start()
    assert job.join(timeout=60)
    assert seen and min(seen) >= max(slots.BACKGROUND_NICE, before + 1)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
