"""One 4-trial study through every executor: in this process, in 2 spawned worker processes, and as Ray
tasks on a real local cluster (`ray start --head` on a loopback port, a process this module starts and
stops by its pid), driven by the CLI's --ray. The same seeds give the same trials: params, values and
states, whichever worker ran them. Each local worker runs single-threaded, as Ray's do.

Process starts are what cost here, not the 6-step trials: the 2 local workers are the server's shared
pool (`server_processes(2)`), spawned once in the session and reused by the app tier's search; the Ray
head is started once for the module.

The random sampler, so the proposals do not depend on which trial finished first (TPE, once past its
random start, learns from the finished trials, which parallel workers change). val_loss, which differs
between any two trials this early.
"""

import io
import json
import os
import sys
import types
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from explorer import cli
from explorer.search import ProcessExecutor, SearchSpec, SerialExecutor, run_search, server_processes
from explorer.search.worker import ONE_THREAD, threads
from tests.ray_head import ray_head as head

pytestmark = pytest.mark.xdist_group("heavy")   # one Ray head at a time (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--trials", "4", "--space", "lr=1e-3:1e-2:log", "--space", "d_model=16,32", "--steps", "6", "--sampler",
        "random", "--seed", "3", "--metric", "val_loss"]
SPEC = SearchSpec(task="reversal-fast", space=("lr=1e-3:1e-2:log", "d_model=16,32"), trials=4, steps=6,
                  metric="val_loss", sampler="random", seed=3, storage="memory")   # what ARGS ask for


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    """One real Ray head for the module (tests/ray_head.py)."""
    pytest.importorskip("ray", reason="ray is in requirements-dev.txt")
    with head(tmp_path_factory.mktemp("ray")) as address:
        yield address


def _results(outcome) -> list[tuple]:
    return [(t["number"], t["params"], t["value"], t["state"]) for t in outcome["trials"]]


@pytest.fixture(scope="module")
def in_process():
    # set up before the per-test runs folder exists: it keeps no runs, only the trials' numbers
    return run_search(SPEC.replace(keep_runs=False), SerialExecutor())


@pytest.fixture(scope="module")
def two_workers():
    """The server's 2 worker processes (spawned on first use, kept for the session: closing this executor
    leaves them running)."""
    return ProcessExecutor(2, pool=server_processes(2))


def test_two_local_processes_give_the_same_trials(in_process, two_workers, monkeypatch):
    # a spawned worker re-runs the parent's __main__ by path: here pytest's, which must not run again
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    outcome = run_search(SPEC, two_workers)
    assert _results(outcome) == _results(in_process)
    workers = {t["worker"] for t in outcome["trials"]}
    assert len(workers) == 2 and outcome["driver"] not in workers   # two processes, neither the driver


def test_a_local_worker_runs_single_threaded(two_workers):
    reports = [f.result() for f in [two_workers.submit(threads, None) for _ in range(4)]]
    for report in reports:   # OpenMP, MKL and BLAS told before torch loaded; torch's own two pools
        assert {k: report[k] for k in ONE_THREAD} == ONE_THREAD and (report["torch"], report["interop"]) == (1, 1)
    assert os.getpid() not in {r["pid"] for r in reports}


def test_ray_tasks_on_a_cluster_give_the_same_trials(in_process, ray_head, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):   # the CLI in this process: --ray connects, runs, disconnects
        code = cli.main(["search", *ARGS, "--ray", ray_head, "--json", "--storage", f"sqlite:///{tmp_path / 's.db'}"])
    assert code == 0, err.getvalue()
    data = json.loads(out.getvalue())
    assert [(t["number"], t["params"], t["value"], t["state"]) for t in data["trials"]] == _results(in_process)
    workers = {t["worker"] for t in data["trials"]}
    assert data["driver"] not in workers and all(w.rpartition(":")[2].isdigit() for w in workers)
    assert "4/4 trials" in err.getvalue() and data["best"]["value"] == min(t["value"] for t in data["trials"])
