"""Faults a classroom server meets, without a browser: a process killed (SIGKILL, no cleanup) half way
through a save leaves the old run or checkpoint, never a corrupt one; runs waiting for a training slot
sleep instead of waking each other (they starved the running job of the GIL).

The browser-level faults (a network blip, a tab closed mid-run, a server restarted) are in
test_browser_faults.py.
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from explorer.config import ModelConfig
from explorer.jobs import slots
from explorer.model import build_model
from explorer.store.checkpoints import load_checkpoint
from explorer.store.runs import list_runs, load_run
from explorer.tasks import TaskConfig, make_task

ROOT = Path(__file__).resolve().parents[2]
TASK = TaskConfig("copy", n_symbols=4, min_len=2, max_len=4, n_train=40, n_val=8)

# The child saves a complete "old" run (and a bare checkpoint folder), then starts the save named by
# argv[2]; the file argv[3] is written half, "HALF" is printed, and the child hangs until killed.
CHILD = r"""
import sys, time
from pathlib import Path
from explorer.store import atomic, checkpoints
from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store.runs import save_run
from explorer.tasks import TaskConfig, make_task
from explorer.train_config import TrainConfig

what, victim = sys.argv[2], sys.argv[3]
task = make_task(TaskConfig("copy", n_symbols=4, min_len=2, max_len=4, n_train=40, n_val=8))
cfg = task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32))
train = TrainConfig(steps=1)
save_run("old", build_model(cfg, seed=0), task.cfg, train, [])
checkpoints.save_checkpoint(Path(sys.argv[1]) / "checkpoint", build_model(cfg, seed=0), {"version": "old"})

real = atomic.atomic_write
def dying(target, write):
    if target.name != victim:
        return real(target, write)
    def half(tmp):
        write(tmp)
        data = Path(tmp).read_bytes()
        Path(tmp).write_bytes(data[: len(data) // 2])
        print("HALF", flush=True)
        time.sleep(120)
    return real(target, half)
atomic.atomic_write = checkpoints.atomic_write = dying   # write_text calls atomic's

new = build_model(cfg, seed=5)
if what == "run":
    save_run("new", new, task.cfg, train, [])
else:
    checkpoints.save_checkpoint(Path(sys.argv[1]) / "checkpoint", new, {"version": "new"})
"""


def old_model():
    task = make_task(TASK)
    return build_model(task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                                                     d_ff=32)), seed=0).eval()


def same_function(a, b) -> bool:
    src, tgt = torch.randint(1, 5, (3, 4)), torch.randint(1, 5, (3, 3))
    with torch.no_grad():
        return torch.equal(a(src, tgt), b(src, tgt))


@pytest.mark.parametrize("what, victim", [("run", "model.safetensors"), ("run", "meta.json"),
                                          ("checkpoint", "model.safetensors")])
def test_a_save_killed_half_way_leaves_the_old_one(tmp_path, monkeypatch, what, victim):
    runs_dir = tmp_path / "runs"
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(runs_dir))
    env = {**os.environ, "EXPLORER_RUNS_DIR": str(runs_dir), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), what, victim], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()  # blocks until the victim file is half written
        assert line.strip() == "HALF", child.stderr.read()
        os.kill(child.pid, signal.SIGKILL)  # no except, no finally: what a power cut leaves
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    old = old_model()
    if what == "run":
        # The half-saved run has no meta.json (written last), so it is not listed; the old one loads.
        assert [r.name for r in list_runs()] == ["old"]
        assert (runs_dir / "new").is_dir() and not (runs_dir / "new" / "meta.json").exists()
        model, meta, _ = load_run("old")
        assert same_function(model, old)
    else:
        # Overwritten in place: the half-written weights never replaced the old file.
        model, meta = load_checkpoint(tmp_path / "checkpoint")
        assert meta["version"] == "old" and same_function(model, old)
        assert any(p.name.startswith(".model.safetensors.") for p in (tmp_path / "checkpoint").iterdir())


class _Holder:
    def _granted(self) -> None:
        pass


def test_runs_waiting_for_a_slot_sleep_instead_of_waking_each_other(monkeypatch):
    """Each waiter rechecks on its own 0.25 s timeout, ~4 times a second. The pool used to wake every
    waiter whenever any of them looked, so they woke each other thousands of times a second and took
    the GIL from the run that was training (3-5x slower with six tabs waiting)."""
    monkeypatch.setattr(slots, "MAX_CONCURRENT_JOBS", 1)
    pool = slots._SlotPool()
    wakeups = []

    class Counting(threading.Condition):
        def wait(self, timeout=None):
            wakeups.append(1)
            return super().wait(timeout)

    pool._cond = Counting()
    running, waiting = _Holder(), [_Holder() for _ in range(3)]
    for holder in [running, *waiting]:
        pool.enqueue(holder)
    stop, got = threading.Event(), {}
    threads = [threading.Thread(target=lambda h=h: got.__setitem__(h, pool.wait_turn(h, stop))) for h in waiting]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    woken = len(wakeups)
    pool.release(running)                  # the first in line gets the slot at once
    threads[0].join(5)
    stop.set()
    for holder in waiting[1:]:
        pool.withdraw(holder)              # the others leave the queue
    for thread in threads:
        thread.join(5)
    assert [got.get(h) for h in waiting] == [True, False, False]
    assert woken <= 3 * 4 * 2 + 3, f"{woken} wake-ups of 3 waiters in one second"
