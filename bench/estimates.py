"""How close the Train page's time estimate is to the run it estimates.

    python bench/estimates.py [--runs 8] [--threads 1]

For a spread of tasks and model sizes: the estimate (explorer.jobs.budget, a probe of a few steps on this
machine) against the measured time of the whole headless run with the Train page's settings (its
evaluation and snapshot cadence), and their ratio. The goal is every ratio within 1/1.5 .. 1.5.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explorer.config import ModelConfig  # noqa: E402
from explorer.jobs import budget  # noqa: E402
from explorer.model import build_model  # noqa: E402
from explorer.tasks import ARCH_FOR_KIND, make_task  # noqa: E402
from explorer.train_config import TrainConfig  # noqa: E402
from explorer.training import train_steps  # noqa: E402
from ui.train_settings import EVAL_EXAMPLES, cadence  # noqa: E402

# (task preset, d_model, layers, d_ff, batch, steps): classroom sizes up to what the limit lets through
CASES = [("reversal-fast", 32, 1, 64, 64, 300), ("reversal-fast", 64, 2, 256, 64, 300),
         ("reversal-fast", 128, 2, 512, 64, 200), ("reversal-seed", 64, 2, 256, 64, 150),
         ("sort", 64, 1, 128, 32, 400), ("char-lm", 64, 2, 256, 64, 300), ("order", 32, 2, 64, 64, 600),
         ("copy", 16, 1, 32, 16, 800), ("reversal-fast", 256, 3, 1024, 64, 40), ("reversal-fast", 64, 4, 256, 256, 60)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=len(CASES), help="how many of the cases")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    print(f"{'task':14s} {'d':>4s} {'L':>2s} {'d_ff':>5s} {'batch':>5s} {'steps':>5s} "
          f"{'probe s':>7s} {'estimate s':>10s} {'measured s':>10s} {'ratio':>6s}")
    ratios = []
    for preset, d, layers, d_ff, batch, steps in CASES[:args.runs]:
        task = make_task(preset)
        cfg = task.model_config(ModelConfig(arch=ARCH_FOR_KIND[task.kind], d_model=d, n_heads=4, d_ff=d_ff,
                                            n_encoder_layers=layers, n_decoder_layers=layers))
        train_cfg = TrainConfig(steps=steps, batch_size=batch, threads=args.threads, eval_examples=EVAL_EXAMPLES,
                                **cadence(steps))
        start = time.perf_counter()
        b = budget.estimate_budget(cfg, train_cfg, task)
        probe_s = time.perf_counter() - start
        model = build_model(cfg, seed=0)
        start = time.perf_counter()
        for _ in train_steps(model, task, train_cfg):
            pass
        measured = time.perf_counter() - start
        ratios.append(b.run_s / measured)
        print(f"{preset:14s} {d:4d} {layers:2d} {d_ff:5d} {batch:5d} {steps:5d} {probe_s:7.2f} {b.run_s:10.1f} "
              f"{measured:10.1f} {ratios[-1]:6.2f}", flush=True)
    print(f"ratio estimate / measured: {min(ratios):.2f} .. {max(ratios):.2f}")


if __name__ == "__main__":
    main()
