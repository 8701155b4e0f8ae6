"""Training-step time of explorer's model by positional encoding and attention scale, one thread.

    python bench/pe_step_time.py [--steps 40] [--warmup 5] [--preset reversal-fast] [--d-model 32] [--heads 4]

Every variant trains the same batches (plain step: forward, cross-entropy, backward, fused AdamW, as
bench/step_time.py), interleaved round-robin with alternating order so machine load hits each alike; the
table gives medians of wall time and of the thread's CPU time, and the ratio to sinusoidal.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.step_time import plain  # noqa: E402
from explorer.config import POS_ENCODINGS, ModelConfig  # noqa: E402
from explorer.model import build_model  # noqa: E402
from explorer.tasks import make_task  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--preset", default="reversal-fast")
    ap.add_argument("--d-model", type=int, default=32)
    ap.add_argument("--heads", type=int, default=4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    task = make_task(args.preset)
    n = args.steps + args.warmup
    batches = [task.sample(64, torch.Generator().manual_seed(i)) for i in range(n)]
    base = task.model_config(ModelConfig(d_model=args.d_model, n_heads=args.heads, d_ff=2 * args.d_model,
                                         max_len=64))
    variants = {pe: base.replace(pos_encoding=pe) for pe in POS_ENCODINGS}
    variants["sinusoidal, attn_scale=none"] = base.replace(attn_scale="none")
    steppers = {k: plain(build_model(cfg, seed=0), iter(batches)) for k, cfg in variants.items()}
    wall = {k: [] for k in steppers}
    cpu = {k: [] for k in steppers}
    order = list(steppers.items())
    for i in range(n):
        for key, step in order if i % 2 else order[::-1]:
            t0, c0 = time.perf_counter(), time.thread_time()
            step(i)
            if i >= args.warmup:
                wall[key].append(time.perf_counter() - t0)
                cpu[key].append(time.thread_time() - c0)
    ref = statistics.median(cpu["sinusoidal"])
    print(f"{args.preset}, d_model {args.d_model}, {args.heads} heads, batch 64, {args.steps} steps, 1 thread")
    print(f"{'variant':32} {'wall ms':>8} {'cpu ms':>8} {'cpu / sinusoidal':>17}")
    for key in steppers:
        c = statistics.median(cpu[key])
        print(f"{key:32} {1000 * statistics.median(wall[key]):8.1f} {1000 * c:8.1f} {c / ref:17.2f}")


if __name__ == "__main__":
    main()
