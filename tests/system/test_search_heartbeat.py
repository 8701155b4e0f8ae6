"""A search driver killed mid-trial (SIGKILL) on another host leaves its trial RUNNING, its heartbeat (Optuna's,
in the study's SQLite file) stopped; a resume on this machine fails that trial once the heartbeat is older
than the grace period, whatever host ran it, and runs its place: the study ends with the trials it asked
for complete.

The killed driver is the real CLI in a process of its own; only its trial never ends (it sleeps), so it is
surely killed mid-trial, and its host is told to be another one, so the same-machine check (a dead pid)
cannot be what finds it.
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import optuna

from explorer.search import SearchSpec, run_search
from explorer.search import study as study_module
from explorer.search.study import counts, open_study

ROOT = Path(__file__).resolve().parents[2]
DRIVER = """
import socket, sys, time
socket.gethostname = lambda: "another-host"   # the host its trials record: not this one
import explorer.search.driver as driver
driver.run_trial = lambda spec: time.sleep(3600)   # a trial that outlives its driver
from explorer import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_killed_drivers_trial_goes_stale_and_a_resume_completes_the_study(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'study.db'}"
    args = ["search", "--trials", "2", "--space", "lr=1e-3:1e-2:log", "--steps", "6", "--sampler", "random",
            "--metric", "val_loss", "--workers", "1", "--storage", url]
    spec = SearchSpec(task="reversal-fast", space=("lr=1e-3:1e-2:log",), trials=2, steps=6, sampler="random",
                      metric="val_loss", storage=url)   # what args ask for
    # The study's file made here first: a poll below that opened it while the driver was still creating it
    # raced Optuna's schema migration ("UNIQUE constraint failed: alembic_version"), and the driver died.
    open_study(spec)
    killed = subprocess.Popen([sys.executable, "-c", DRIVER, *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 180
        while True:  # until its trial runs, heartbeat recorded (the driver beats before naming itself)
            assert killed.poll() is None and time.monotonic() < deadline, killed.stderr.read().decode()[-2000:]
            running = open_study(spec).get_trials(states=(optuna.trial.TrialState.RUNNING,))
            if running and running[0].user_attrs.get("driver") == f"another-host:{killed.pid}":
                break
            time.sleep(0.5)
    finally:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(30)
        killed.stderr.close()
    assert counts(open_study(spec)) == (0, 1)   # left RUNNING by the dead driver
    monkeypatch.setattr(study_module, "GRACE_S", 1)   # stale after a second, not a minute
    stop = threading.Event()
    timer = threading.Timer(150, stop.set)   # a resume that waited for the dead trial for ever fails, not hangs
    timer.start()
    try:
        out = run_search(spec, stop=stop)
    finally:
        timer.cancel()
    assert not out["stopped"] and [t["state"] for t in out["trials"]] == ["INTERRUPTED", "COMPLETE", "COMPLETE"]
    assert open_study(spec).trials[0].state == optuna.trial.TrialState.FAIL   # failed by the heartbeat
    assert counts(open_study(spec)) == (2, 0) and not out["failure"]
