"""Helpers the system tier's tests share: the CLI run as a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


TINY = ["--d-model", "16", "--n-heads", "2", "--layers", "1", "--d-ff", "32", "--batch-size", "8",
        "--eval-examples", "10"]


def explorer(args, runs, **kw):
    env = {**os.environ, "EXPLORER_RUNS_DIR": str(runs), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "explorer", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120, **kw)
