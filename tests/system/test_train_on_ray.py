"""Training runs on a real local Ray cluster (one `ray start --head` for the module, tests/ray_head.py):
`train --ray --json` names a worker that is not the driver and trains what a local run trains; a worker killed
mid-run leaves its run saved, interrupted and resumable bit for bit; an address that does not answer is one
line and exit status 2. The Train page's runs on the cluster: tests/browser/test_browser_ray.py."""

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pandas as pd
import pytest
import torch

from explorer import cli
from explorer.experiments import EXPERIMENTS, SerialExecutor, run
from explorer.jobs.experiment import ExperimentJob
from explorer.jobs.ray_training import RayTrainingJob, let_go
from explorer.model import build_model
from explorer.store.checkpoints import read_meta
from explorer.store.runs import open_for_resume, run_folder
from explorer.tasks import TASK_PRESETS, make_task
from explorer.train_config import TrainConfig
from explorer.training import train_steps
from tests.ray_head import free_port, ray_head

pytestmark = pytest.mark.xdist_group("heavy")   # one Ray head at a time (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--d-model", "16", "--n-heads", "2", "--d-ff", "32", "--layers", "1", "--warmup", "5"]


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    pytest.importorskip("ray", reason="ray is in requirements-dev.txt")
    with ray_head(tmp_path_factory.mktemp("ray")) as address:
        try:
            yield address
        finally:
            let_go()   # this process's connection, before its cluster goes


def _train(*args: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["train", *TINY, "--steps", "40", "--json", *args])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def test_train_on_ray_names_a_worker_that_is_not_the_driver(head):
    on_ray = _train("--ray", head, "--name", "on-ray")
    here = _train("--name", "here")
    assert on_ray["driver"] != on_ray["worker"] and here["driver"] == here["worker"]
    host, _, pid = on_ray["worker"].rpartition(":")
    assert host and pid.isdigit() and int(pid) != os.getpid()
    assert on_ray["status"] == "finished" and on_ray["steps"] == 40 and on_ray["run"] == "on-ray"
    meta = read_meta(run_folder("on-ray"))
    assert meta["worker"] == on_ray["worker"] and meta["driver"] == on_ray["driver"]
    assert on_ray["final"]["loss"] == here["final"]["loss"]   # the same steps, wherever they ran
    assert open_for_resume("on-ray")[3].step == 40


def test_a_bad_address_is_one_line_and_exit_2():
    address = f"127.0.0.1:{free_port()}"   # nothing listens there
    done = subprocess.run([sys.executable, "-m", "explorer", "train", "--steps", "5", "--ray", address], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and address in lines[0] and "within 10 s" in lines[0], done.stderr


def _config():
    task = make_task(TASK_PRESETS["reversal-fast"])
    return task, task.model_config(None, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)


def test_a_killed_worker_leaves_an_interrupted_run_that_resumes_bit_for_bit(head):
    task, cfg = _config()
    train_cfg = TrainConfig(steps=5000, lr=5e-3, warmup=10, seed=3)
    job = RayTrainingJob(build_model(cfg, seed=3), task, train_cfg, name="killed", owner="o-kill", ray_address=head)
    job.start()
    deadline = time.monotonic() + 240
    # past the first checkpoint (CHECKPOINT_S of training), then the worker is killed as an OOM killer would
    while not (job.history() and job.history()[-1].elapsed > 3.0):
        assert not job.ended and time.monotonic() < deadline, job.message
        time.sleep(0.2)
    worker = job.worker
    os.kill(int(worker.rpartition(":")[2]), signal.SIGKILL)
    assert job.join(60)
    assert job.status == "stopped" and "interrupted" in job.message and job.interrupted, job.message
    meta = read_meta(run_folder(job.run_name))
    assert meta["interrupted"] is True and meta["worker"] == worker and meta["owner"] == "o-kill"
    model, _, resumed_cfg, state, _ = open_for_resume(job.run_name)
    kept = state.step
    assert 0 < kept < train_cfg.steps and resumed_cfg.steps == train_cfg.steps

    more = 15   # resumed here, the run goes on exactly as one that never stopped
    for rec in train_steps(model, task, resumed_cfg, state):
        if rec.step == kept + more:
            break
    straight = build_model(cfg, seed=3)
    for rec in train_steps(straight, task, resumed_cfg):
        if rec.step == kept + more:
            break
    for (name, a), b in zip(model.state_dict().items(), straight.state_dict().values(), strict=True):
        assert torch.equal(a, b), name


def test_an_experiments_runs_go_to_the_cluster_and_measure_the_same(head, monkeypatch, tmp_path):
    tiny = EXPERIMENTS["pre-post-ln"].tiny   # its tiny budget: a Ray task for each of its runs
    here = run("pre-post-ln", tiny, executor=SerialExecutor())
    monkeypatch.setenv("EXPLORER_RAY_ADDRESS", head)
    texts = []
    job = ExperimentJob("pre-post-ln", tiny, refresh=True, cache_dir=tmp_path)
    monkeypatch.setattr(job, "_report", lambda fraction, text: texts.append(text))
    assert not job.pooled   # the cluster's CPUs are its queue, not this server's slots
    job.start()
    assert job.join(300) and job.status == "finished", job.message
    assert any(re.fullmatch(r"(\d+)/\1 runs done on the Ray cluster", text) for text in texts), texts[-3:]
    pd.testing.assert_frame_equal(job.result.samples, here.samples)


def test_a_run_followed_after_a_restart_has_its_curve_so_far_at_once(head):
    """What a restarted server's page draws first: the steps already trained, not an empty chart."""
    task, cfg = _config()
    train_cfg = TrainConfig(steps=5000, lr=5e-3, warmup=10, seed=4)
    job = RayTrainingJob(build_model(cfg, seed=4), task, train_cfg, name="followed", owner="o-follow",
                         ray_address=head)
    job.start()
    deadline = time.monotonic() + 240
    while len(job.history()) < 20:
        assert not job.ended and time.monotonic() < deadline, job.message
        time.sleep(0.2)
    again = RayTrainingJob.attach(head, "o-follow")   # as the restarted server's `follow` does
    try:
        seen = again.history()
        assert len(seen) >= 20 and again.status == "running"
        assert [r.loss for r in seen[:20]] == [r.loss for r in job.history()[:20]]
    finally:
        again.stop()
        job.stop()
        assert again.join(60) and job.join(60)
