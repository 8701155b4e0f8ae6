"""Training runs on a Ray cluster against the server's own slots (issue 36): one run each side, same config.

    python bench/ray_training.py [--steps 1500] [--runs 3] [--local-only]

local   a TrainingJob in this process's slot pool (what the Train page does without EXPLORER_RAY_ADDRESS), at
        the slot's CPU priority (EXPLORER_JOB_NICE, default 10: on a busy machine the pages come first)
ray     a RayTrainingJob on a `ray start --head` of 2 CPUs (one 2-core worker node; started here, stopped by
        its pid): the first run pays the connection and the code upload, the second finds them done
node    --runs runs started together on that node: how many train at once, their steps/s in all

Time to the first live point: start() to the job's first record (what the page draws first). Steps/s: over
the run, from its first record to its last. Nothing is asserted: it prints figures for bench/README.md with
the load average beside them (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("EXPLORER_RUNS_DIR", tempfile.mkdtemp(prefix="bench-ray-train-"))

from explorer.jobs.ray_training import RayTrainingJob, let_go  # noqa: E402
from explorer.jobs.slots import BACKGROUND_NICE  # noqa: E402
from explorer.jobs.training import TrainingJob  # noqa: E402
from explorer.model import build_model  # noqa: E402
from explorer.tasks import TASK_PRESETS, make_task  # noqa: E402
from explorer.train_config import TrainConfig  # noqa: E402
from tests.ray_head import ray_head  # noqa: E402

TASK = make_task(TASK_PRESETS["reversal-fast"])
MODEL = TASK.model_config(None, d_model=32, n_heads=4, d_ff=64, n_encoder_layers=1, n_decoder_layers=1)


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _job(kind, steps: int, seed: int, **options):
    cfg = TrainConfig(steps=steps, lr=3e-3, warmup=20, seed=seed, eval_every=max(5, steps // 25),
                      snapshot_every=max(1, steps // 60), threads=1)   # the Train page's cadence
    return kind(build_model(MODEL, seed=seed), TASK, cfg, name=f"bench-{seed}", **options)


def timed(jobs: list) -> list[tuple[float, float, float]]:
    """(seconds to the first record, steps/s, seconds the job waited queued) of each job, started together."""
    start = time.monotonic()
    for job in jobs:
        job.start()
    first: dict[int, float] = {}
    running: dict[int, float] = {}
    while not all(job.ended for job in jobs):
        now = time.monotonic() - start
        for i, job in enumerate(jobs):
            if i not in first and job.history():
                first[i] = now
            if i not in running and job.status == "running" and job.history():
                running[i] = now
        time.sleep(0.02)
    out = []
    for i, job in enumerate(jobs):
        assert job.status == "finished", job.message
        history = job.history()
        out.append((first[i], (history[-1].step - history[0].step) / (history[-1].elapsed - history[0].elapsed),
                    running.get(i, first[i])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--local-only", action="store_true", help="the local run alone")
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores, {load()}; reversal-fast, d_model 32, 1+1 layers, {args.steps} steps, 1 thread")
    (first, rate, _), = timed([_job(TrainingJob, args.steps, 0)])
    print(f"local slot (nice {BACKGROUND_NICE}): first live point {first:.2f} s, {rate:.0f} steps/s  ({load()})")
    if args.local_only:
        return
    with ray_head(Path(tempfile.mkdtemp(prefix="bench-ray-"))) as address:
        try:
            for label in ("ray, connecting:", "ray, connected:"):
                (first, rate, _), = timed([_job(RayTrainingJob, args.steps, 0, owner="bench", ray_address=address)])
                print(f"{label:18} first live point {first:.2f} s, {rate:.0f} steps/s  ({load()})")
            jobs = [_job(RayTrainingJob, args.steps, seed, owner=f"bench-{seed}", ray_address=address)
                    for seed in range(args.runs)]
            results = timed(jobs)
            at_once = sum(1 for _, _, started in results if started < min(r[2] for r in results) + 5.0)
            print(f"node of 2 CPUs, {args.runs} runs started together: {at_once} trained at once; per run "
                  + ", ".join(f"{rate:.0f} steps/s (first point {first:.1f} s)" for first, rate, _ in results)
                  + f"  ({load()})")
        finally:
            let_go()


if __name__ == "__main__":
    main()
