"""Training-step time: explorer against torch.nn.Transformer and a textbook implementation.

    python bench/step_time.py [--threads 1] [--steps 60] [--configs small,large] [--snapshot-every 10] [--batch 64]

Every variant sees the same reversal batches (the chapter's setting: integers 1..100, lengths 10-20,
batch 64) in one process, and steps are interleaved round-robin so that a change in machine load hits
every variant alike; the table reports medians and ratios to nn.Transformer (fused AdamW) on the same
batches: wall time, and on one thread the CPU time of the thread (what an idle machine takes, near enough,
when other processes share the cores).

Variants
  nn.Transformer, textbook, explorer model: a plain step (forward, cross-entropy, backward, fused AdamW)
  explorer trainer: a step of `explorer.training.train_steps`, the loop the app runs: loss with accuracy
      and entropy, per-block gradient norms, clipping at 1.0, the divergence guards
  ... no grad norms: the same without per-block norms (the total norm for clipping stays)
  ... snapshot every K: with an attention capture every K-th step, as the Train page records
  ... by-length: the trainer on batches of one length each (`TrainConfig(batching="by-length")`),
      against nn.Transformer on those same batches and on the uniform ones
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.reference import TextbookTransformer, TorchTransformer, seq2seq_loss  # noqa: E402
from explorer import inspect  # noqa: E402
from explorer.config import ModelConfig  # noqa: E402
from explorer.model import build_model  # noqa: E402
from explorer.tasks import make_task  # noqa: E402
from explorer.train_config import TrainConfig  # noqa: E402
from explorer.training import train_steps  # noqa: E402

CONFIGS = {"small": (64, 4, 2, 256), "large": (128, 4, 3, 512)}
BATCH = 64


class Replay:
    """The task, but `sample` hands out pre-drawn batches in order (the trainer sees the same data)."""

    def __init__(self, task, batches) -> None:
        self._task, self._batches = task, iter(batches)

    def __getattr__(self, name):
        return getattr(self._task, name)

    def sample(self, batch_size, generator, by_length=False):
        return next(self._batches)


@contextlib.contextmanager
def no_block_norms():
    """The trainer without per-block gradient norms: no block is found, so none is computed."""
    real = inspect.grad_groups
    inspect.grad_groups = lambda model, per="layer": []
    try:
        yield
    finally:
        inspect.grad_groups = real


def plain(model, batches, fused=True):
    """A plain step: forward, cross-entropy, backward, AdamW (fused, as explorer's trainer uses; fused=False
    is PyTorch's default AdamW, what a tutorial writes)."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=fused or None)

    def step(_i):
        opt.zero_grad(set_to_none=True)
        batch = next(batches)
        seq2seq_loss(model(batch.src, batch.tgt_in), batch.tgt_out).backward()
        opt.step()
    return step


def trainer(model, task, batches, snapshot_every=0, block_norms=True):
    cfg = TrainConfig(steps=10**6, lr=1e-3, warmup=10, eval_every=0, snapshot_every=snapshot_every,
                      threads=torch.get_num_threads(), spike_nats=0)
    with contextlib.nullcontext() if block_norms else no_block_norms():
        records = train_steps(model, Replay(task, batches[:1] + batches), cfg)
        next(records)  # builds the optimiser and the norm groups inside the context (an extra first batch)

    def step(_i):
        rec = next(records)
        assert rec.stopped is None and len(rec.grad_norms) == (len(inspect.blocks(model)) if block_norms else 0)
    return step


def variants(name: str, task, uniform: list, bucketed: list, snapshot_every: int) -> dict:
    d, h, n, f = CONFIGS[name]
    vocab = len(task.vocab)
    cfg = task.model_config(ModelConfig(d_model=d, n_heads=h, n_encoder_layers=n, n_decoder_layers=n, d_ff=f,
                                        max_len=64))

    def ours():
        return build_model(cfg, seed=0)
    torch.manual_seed(0)
    return {
        "nn.Transformer": plain(TorchTransformer(vocab, d, h, n, f), iter(uniform)),
        "nn.Transformer default AdamW": plain(TorchTransformer(vocab, d, h, n, f), iter(uniform), fused=False),
        "textbook": plain(TextbookTransformer(vocab, d, h, n, f), iter(uniform)),
        "explorer model": plain(ours(), iter(uniform)),
        "explorer trainer": trainer(ours(), task, uniform),
        "  ... no grad norms": trainer(ours(), task, uniform, block_norms=False),
        f"  ... snapshot every {snapshot_every}": trainer(ours(), task, uniform, snapshot_every=snapshot_every),
        "  ... snapshot every step": trainer(ours(), task, uniform, snapshot_every=1),
        "nn.Transformer by-length": plain(TorchTransformer(vocab, d, h, n, f), iter(bucketed)),
        "explorer trainer by-length": trainer(ours(), task, bucketed),
    }


def measure(configs: list[str], steps: int, warmup: int, threads: int, snapshot_every: int,
            batch: int = BATCH) -> list[dict]:
    """Medians of wall time and, on one thread, of the thread's CPU time: on a shared machine the CPU time
    leaves out the time other processes held the core, so it is close to what an idle machine takes."""
    torch.set_num_threads(threads)
    task = make_task("reversal-seed")
    n = steps + warmup + 2
    uniform = [task.sample(batch, torch.Generator().manual_seed(i)) for i in range(n)]
    bucketed = [task.sample(batch, torch.Generator().manual_seed(i), by_length=True) for i in range(n)]
    rows = []
    for name in configs:
        steppers = variants(name, task, uniform, bucketed, snapshot_every)
        times = {k: [] for k in steppers}
        cpu = {k: [] for k in steppers}
        order = list(steppers.items())
        for i in range(steps + warmup):
            for key, step in order if i % 2 else order[::-1]:   # alternate who goes first
                t0, c0 = time.perf_counter(), time.thread_time()
                step(i)
                if i >= warmup:
                    times[key].append(time.perf_counter() - t0)
                    cpu[key].append(time.thread_time() - c0)
        ref, ref_cpu = statistics.median(times["nn.Transformer"]), statistics.median(cpu["nn.Transformer"])
        for key in steppers:
            med, med_cpu = statistics.median(times[key]), statistics.median(cpu[key])
            rows.append(dict(config=name, variant=key, ms=1000 * med, speedup=ref / med,
                             cpu_ms=1000 * med_cpu if threads == 1 else math.nan,
                             cpu_speedup=ref_cpu / med_cpu if threads == 1 else math.nan))
    return rows


def padding_share(task, batches) -> float:
    real = sum(int((b.src != 0).sum() + (b.tgt_in != 0).sum()) for b in batches)
    return 1 - real / sum(b.src.numel() + b.tgt_in.numel() for b in batches)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--configs", default="small,large")
    ap.add_argument("--snapshot-every", type=int, default=10)
    ap.add_argument("--batch", type=int, default=BATCH, help="e.g. 2: a step that is all fixed cost (Python, dispatch)")
    args = ap.parse_args()
    task = make_task("reversal-seed")
    sample = [task.sample(args.batch, torch.Generator().manual_seed(i)) for i in range(50)]
    by_len = [task.sample(args.batch, torch.Generator().manual_seed(i), by_length=True) for i in range(50)]
    rows = measure(args.configs.split(","), args.steps, args.warmup, args.threads, args.snapshot_every, args.batch)
    load = os.getloadavg()
    print(f"threads={args.threads} steps={args.steps} batch={args.batch} torch={torch.__version__} "
          f"cores={os.cpu_count()} load={load[0]:.1f},{load[1]:.1f},{load[2]:.1f}  padding share of tokens: uniform "
          f"{padding_share(task, sample):.0%}, by-length {padding_share(task, by_len):.0%}")
    print(f"{'config':8} {'variant':30} {'wall ms':>8} {'x nn.T':>7} {'cpu ms':>8} {'x nn.T':>7}")
    for r in rows:
        print(f"{r['config']:8} {r['variant']:30} {r['ms']:8.1f} {r['speedup']:7.2f} {r['cpu_ms']:8.1f} "
              f"{r['cpu_speedup']:7.2f}")


if __name__ == "__main__":
    main()
