"""What slows a training run that shares the machine: steps/s of one run alone, next to a second run in
another thread of the same process (the GIL), and next to a busy loop in another process (the other core).

    python bench/contention.py [--preset reversal-fast] [--steps 400] [--repeats 2]

The Train page trains in a thread of the Streamlit server while the browser draws on the other core; this
separates the two costs. Nothing is asserted: it prints figures for bench/README.md. Run it on an otherwise
idle machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from explorer.model import build_model  # noqa: E402
from explorer.tasks import make_task  # noqa: E402
from explorer.train_config import TrainConfig  # noqa: E402
from explorer.training import train_steps  # noqa: E402


def rates(task, cfg: TrainConfig, n_threads: int) -> list[float]:
    """Steps/s of each of n_threads runs started together in threads of this process."""
    out = [0.0] * n_threads

    def run(i: int) -> None:
        model = build_model(task.model_config(), seed=i)
        t0 = time.perf_counter()
        for _ in train_steps(model, task, cfg):
            pass
        out[i] = cfg.steps / (time.perf_counter() - t0)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="reversal-fast")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    task = make_task(args.preset)
    cfg = TrainConfig(steps=args.steps, eval_every=100, snapshot_every=50, threads=1)
    rates(task, cfg, 1)  # warm-up: imports, first allocations
    rows = []
    for _ in range(args.repeats):
        rows.append(("alone", rates(task, cfg, 1)))
        rows.append(("two runs, two threads of one process", rates(task, cfg, 2)))
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # one core busy elsewhere
        try:
            rows.append(("alone, a busy loop in another process", rates(task, cfg, 1)))
        finally:
            hog.kill()
            hog.wait()
    print(f"preset={args.preset} steps={args.steps} threads=1 cores={os.cpu_count()} load={os.getloadavg()[0]:.2f}")
    for name, rs in rows:
        print(f"{name:40s} " + ", ".join(f"{r:.1f}" for r in rs) + " steps/s")


if __name__ == "__main__":
    main()
