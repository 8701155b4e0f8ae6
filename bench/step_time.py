"""Training-step time: explorer's model against torch.nn.Transformer and a textbook implementation.

    python bench/step_time.py [--threads 1] [--steps 60] [--configs small,large]

All models see the same reversal batches (the chapter's setting: integers 1..100, lengths 10-20,
batch 64) and the same fused AdamW. Measurements are interleaved round-robin so that a change in
machine load hits every model alike; the table reports medians and ratios to nn.Transformer.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.reference import TextbookTransformer, TorchTransformer, seq2seq_loss  # noqa: E402
from explorer.config import ModelConfig  # noqa: E402
from explorer.model import build_model  # noqa: E402
from explorer.tasks import make_task  # noqa: E402

CONFIGS = {"small": (64, 4, 2, 256), "large": (128, 4, 3, 512)}


def plain_step(model, opt, batch) -> None:
    opt.zero_grad(set_to_none=True)
    seq2seq_loss(model(batch.src, batch.tgt_in), batch.tgt_out).backward()
    opt.step()


def measure(configs: list[str], steps: int, warmup: int, threads: int) -> list[dict]:
    torch.set_num_threads(threads)
    task = make_task("reversal-seed")
    vocab = len(task.vocab)
    gen = torch.Generator().manual_seed(0)
    batches = [task.sample(64, gen) for _ in range(steps + warmup)]
    rows = []
    for name in configs:
        d, h, n, f = CONFIGS[name]
        cfg = ModelConfig(src_vocab_size=vocab, tgt_vocab_size=vocab, d_model=d, n_heads=h, n_encoder_layers=n,
                          n_decoder_layers=n, d_ff=f, max_len=64)
        torch.manual_seed(0)
        models = {
            "nn.Transformer": TorchTransformer(vocab, d, h, n, f),
            "textbook": TextbookTransformer(vocab, d, h, n, f),
            "explorer": build_model(cfg, seed=0),
        }
        opts = {k: torch.optim.AdamW(m.parameters(), lr=1e-3, fused=True) for k, m in models.items()}
        times = {k: [] for k in models}
        for i, batch in enumerate(batches):
            for key, model in models.items():
                t0 = time.perf_counter()
                plain_step(model, opts[key], batch)
                if i >= warmup:
                    times[key].append(time.perf_counter() - t0)
        ref = statistics.median(times["nn.Transformer"])
        for key, ts in times.items():
            med = statistics.median(ts)
            rows.append(dict(config=name, model=key, ms=1000 * med, speedup=ref / med))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--configs", default="small,large")
    args = ap.parse_args()
    rows = measure(args.configs.split(","), args.steps, args.warmup, args.threads)
    print(f"threads={args.threads} steps={args.steps} torch={torch.__version__}")
    print(f"{'config':8} {'model':16} {'ms/step':>8} {'x nn.Transformer':>17}")
    for r in rows:
        print(f"{r['config']:8} {r['model']:16} {r['ms']:8.1f} {r['speedup']:17.2f}")


if __name__ == "__main__":
    main()
