"""The CLI holds every run to the limits the app does (explorer/limits.py): an endless stream is refused after
limit + 1 bytes under a 1.5 GB memory limit, and a model, an experiment or a search over the caps or the budget
exits 2 with one line before anything is trained or written."""

import os
import resource
import subprocess
import sys

import pytest

from explorer.cli import main
from explorer.experiments import base
from tests.system.helpers import REPO, TINY

MEMORY = 1536 * 2**20   # 1.5 GB of address space: reading /dev/urandom whole would die of MemoryError


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


@pytest.mark.parametrize("flag", ["--text", "--data"])
def test_an_endless_stream_exits_2_in_one_line_under_a_memory_limit(tmp_path, flag):
    env = {**os.environ, "EXPLORER_RUNS_DIR": str(tmp_path / "runs"), "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-m", "explorer", "train", flag, "/dev/urandom", "--steps", "5"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=120, preexec_fn=_bounded)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert "/dev/urandom: the file is more than 4 MiB" in out.stderr
    assert not (tmp_path / "runs").exists()


OVER = [
    (["train", "--d-model", "999999", "--n-heads", "1"], "d_model=999,999 is over the limit"),
    (["train", "--layers", "1000"], "n_encoder_layers=1,000 is over the limit"),
    (["train", "--batch-size", "100000"], "batch_size=100,000 is over the limit"),
    (["train", "--d-model", "512", "--layers", "12", "--steps", "100000"], "over the 10 min limit"),
    (["experiment", "residuals", "--set", "layers=1000"], "residuals: layers=1,000 is over the limit"),
    (["experiment", "heads", "--set", "d_model=1024", "--set", "heads=1,2"], "heads: d_model=1,024 is over"),
    (["search", "--trials", "1", "--space", "d_model=16,1024"], "d_model=1,024 is over the limit"),
    (["search", "--trials", "1", "--space", "steps=50000:100000", "--space", "n_layers=12",
      "--space", "d_model=512"], "the largest trial this search can make (steps=100000, n_layers=12, d_model=512)"),
]


@pytest.mark.parametrize("argv, message", OVER, ids=[" ".join(a[:3]) + " " + a[-1] for a, _ in OVER])
def test_over_a_cap_or_the_budget_exits_2_before_any_work(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "runs").exists()   # no run, no study, no cached result


def test_an_experiments_run_over_the_budget_exits_2_before_it_trains(tmp_path, monkeypatch, capsys):
    """An experiment's runs are only built as it goes: each is checked before it trains (its status line first)."""
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    trained = []
    monkeypatch.setattr(base, "train_steps", lambda *a: trained.append(a) or iter(()))
    argv = ["experiment", "residuals", "--set", "d_model=512", "--set", "layers=12", "--set", "steps=1500"]
    assert main([*argv, "--set", "seeds=1", "--fresh"]) == 2
    err = capsys.readouterr().err
    assert "error: 1,500 steps would take at least" in err.splitlines()[-1] and "over the 10 min limit" in err
    assert "Traceback" not in err and not trained


def test_a_resume_over_the_caps_exits_2_and_leaves_the_run_as_it_was(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    assert main(["train", "--steps", "2", "--name", "short", *TINY]) == 0
    before = sorted(p.name for p in (tmp_path / "runs").iterdir())
    capsys.readouterr()
    assert main(["resume", "short", "--more", "100001"]) == 2
    err = capsys.readouterr().err
    assert "run 'short' cannot resume: steps=100,001 is over the limit" in err and err.count("\n") == 1
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == before
