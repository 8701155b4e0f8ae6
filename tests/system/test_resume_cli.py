"""`python -m explorer resume`: a saved run continued from the command line; bad input in one line."""

import subprocess
import sys
from pathlib import Path

import pytest

from explorer.store import runs
from explorer.tasks import make_task
from tests.unit.helpers import TASK, interrupted

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def task():
    return make_task(TASK)


def cli(*args: str, runs_root: Path) -> subprocess.CompletedProcess:
    env = {"EXPLORER_RUNS_DIR": str(runs_root), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "explorer", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_cli_resumes_a_saved_run_and_refuses_bad_input_in_one_line(task):
    name = interrupted(task, 4)
    root = runs.runs_dir()
    done = cli("resume", name, "--more", "3", runs_root=root)
    assert done.returncode == 0, done.stderr
    new = done.stdout.strip().splitlines()[-1]
    assert new.startswith("saved as run ") and name in {r.name for r in runs.list_runs()}
    saved = new.removeprefix("saved as run ").strip("'")
    model, _, _, state, _ = runs.open_for_resume(saved)
    assert state.step == 4 + 3  # three more steps from where it stopped
    for args, words in ((("resume", "no-such-run"), "no run named"), (("resume", name, "--more", "0"), "--more")):
        bad = cli(*args, runs_root=root)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        assert words in bad.stderr and "Traceback" not in bad.stderr
