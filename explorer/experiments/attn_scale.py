"""Why divide by sqrt(d_k): attention with and without the scale.

The seeds' attention divides the scores by sqrt(d_k) (chapter §2.6, "scaled dot-product MHA"; the notebook's
`Q @ K.T / np.sqrt(d_head)`). The reason (Vaswani et al., 2017, §3.2.1): q·k of two vectors with unit-variance
entries has variance d_k, so unscaled scores grow with the head width and the softmax saturates (one weight
near 1, the rest near 0, small gradients).
(a) At initialisation, for each head width in `d_heads` (`n_heads` heads, d_model = n_heads x d_head): the
mean entropy of every attention row (encoder, decoder and cross-attention, all layers) and the gradient norm
reaching the query and key projections, on one batch of reversal. `ModelConfig.attn_scale` changes no
weight, so both conditions of a seed share their weights and batch (paired).
(b) Trained: the reversal model at `d_model` / `n_heads` (d_head 64 by default) with each setting.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import torch

from explorer.config import ModelConfig
from explorer.experiments._seq2seq import Seq2SeqBase, seq2seq_task, train_seq2seq
from explorer.experiments.base import (
    Claim,
    Context,
    Experiment,
    Result,
    build_result,
    final_metrics,
    history_curves,
    seed_major,
)
from explorer.experiments.charts import bars, curve_bands, num, pct, stat
from explorer.figures.curves import line_chart
from explorer.inspect import attention_entropy, capture
from explorer.losses import loss_and_stats
from explorer.model import MultiHeadAttention, build_model
from explorer.task_kinds import KINDS

SCALES = {"÷√d_k": "sqrt_d_k", "unscaled": "none"}   # condition -> ModelConfig.attn_scale
SCALED, UNSCALED = SCALES
LOSS, EXACT = "val loss", "val exact"
ENTROPY, GRAD = "init_entropy", "init_qk_grad"           # curve metrics; their "step" is d_head


def entropy_at(d: int) -> str:
    return f"attention entropy at init, d_head {d} (nats)"


def grad_at(d: int) -> str:
    return f"q/k gradient norm at init, d_head {d}"


@dataclass(frozen=True)
class AttnScaleParams(Seq2SeqBase):
    takes_own_data: ClassVar[bool] = True   # task="pairs": a teacher's TSV
    d_model: int = 64
    n_heads: int = 1                    # (b) trains d_head = d_model / n_heads = 64
    d_heads: tuple[int, ...] = (4, 16, 64, 256)   # (a) head widths at initialisation

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.d_heads or any(not isinstance(d, int) or isinstance(d, bool) or not 1 <= d <= 1024
                                   for d in self.d_heads):
            raise ValueError(f"d_heads={self.d_heads!r} must list head widths, whole numbers in 1..1024")


def init_measures(p: AttnScaleParams, seed: int, d_head: int, scale: str) -> tuple[float, float]:
    """(mean attention entropy in nats, gradient norm of every query and key projection) on one batch."""
    task = seq2seq_task(p, seed)
    d_model = d_head * p.n_heads
    base = task.model_config(ModelConfig(d_model=d_model, n_heads=p.n_heads, n_encoder_layers=p.n_layers,
                                         n_decoder_layers=p.n_layers, d_ff=2 * d_model, attn_scale=scale))
    model = build_model(base, seed=seed).train()
    batch = task.sample(p.batch_size, torch.Generator().manual_seed(seed))
    kind = KINDS[task.kind]
    with capture(model) as cache:
        logits = kind.logits(model, batch)
    loss, _ = loss_and_stats(logits, kind.target(batch), 0.0, kind.ignore_index)
    loss.backward()
    rows = [attention_entropy(pattern).mean() for layers in cache.attention.values() for pattern in layers]
    qk = [m.in_proj_weight.grad[: 2 * m.in_proj_weight.size(1)] for m in model.modules()
          if isinstance(m, MultiHeadAttention)]                          # the q and k rows of each projection
    return float(torch.stack(rows).mean()), math.sqrt(sum(float(g.square().sum()) for g in qk))


def _init_unit(p: AttnScaleParams, seed: int, cond: str):
    samples, curves = [], []
    for d in p.d_heads:
        ent, grad = init_measures(p, seed, d, SCALES[cond])
        samples += [dict(condition=cond, seed=seed, metric=entropy_at(d), value=ent),
                    dict(condition=cond, seed=seed, metric=grad_at(d), value=grad)]
        curves += [dict(condition=cond, seed=seed, step=d, metric=ENTROPY, value=ent),
                   dict(condition=cond, seed=seed, step=d, metric=GRAD, value=grad)]
    return samples, curves


def _train_unit(ctx: Context, p: AttnScaleParams, seed: int, cond: str):
    task = seq2seq_task(p, seed)
    model, history = train_seq2seq(ctx, p, task, seed, attn_scale=SCALES[cond])
    final = final_metrics(model, task, history, p.eval_examples)
    samples = [dict(condition=cond, seed=seed, metric=LOSS, value=final["val_loss"]),
               dict(condition=cond, seed=seed, metric=EXACT, value=final["val_exact"])]
    return samples, history_curves(history, cond, seed, ("loss", "val_exact"))


def _measure(p: AttnScaleParams):
    widest, d_train = max(p.d_heads), p.d_model // p.n_heads

    def measure(table) -> tuple[str, list[Claim]]:
        ent = "; ".join(f"d_head {d}: {num(*stat(table, SCALED, entropy_at(d))[:2])} scaled, "
                        f"{num(*stat(table, UNSCALED, entropy_at(d))[:2])} unscaled" for d in p.d_heads)
        grad = "; ".join(f"d_head {d}: {num(*stat(table, SCALED, grad_at(d))[:2])} vs "
                         f"{num(*stat(table, UNSCALED, grad_at(d))[:2])}" for d in p.d_heads)
        trained = ", ".join(f"{c} val loss {num(*stat(table, c, LOSS)[:2])}, exact {pct(*stat(table, c, EXACT)[:2])}"
                            for c in SCALES)
        text = (f"(a) at initialisation, mean attention entropy (nats) {ent}. Gradient norm reaching q and k, "
                f"scaled vs unscaled: {grad}. (b) trained at d_head {d_train} for {p.steps} steps: {trained}")
        return text, [
            Claim(f"(a) at d_head {widest} the unscaled softmax saturates: its attention entropy at initialisation "
                  "is lower than with the scale (same weights and batch per seed)", entropy_at(widest), UNSCALED,
                  SCALED, above=False, paired=True, unit="nats"),
            Claim(f"(a) at d_head {widest} a saturated softmax passes less gradient to the query and key "
                  "projections than the scaled one", grad_at(widest), UNSCALED, SCALED, above=False, paired=True),
            Claim(f"(b) at d_head {d_train}, training with the scale ends at a lower validation loss than without",
                  LOSS, UNSCALED, SCALED, unit="nats")]
    return measure


def run(p: AttnScaleParams, ctx: Context) -> Result:
    def work(unit):
        (part, seed), cond = unit
        return _init_unit(p, seed, cond) if part == "init" else _train_unit(ctx, p, seed, cond)

    units = [(("init", s), c) for s, c in seed_major(p.seeds, tuple(SCALES))]   # a second or two each
    units += [(("train", s), c) for s, c in seed_major(p.seeds, tuple(SCALES))]
    done = ctx.collect(units, work, lambda u: f"{u[0][0]} seed {u[0][1]}, {u[1]}")
    widest = max(p.d_heads)
    predictions = {(UNSCALED, entropy_at(widest)): (None, "low: the softmax saturates on a few keys"),
                   (SCALED, entropy_at(widest)): (None, "about as high as at any width"),
                   (SCALED, LOSS): (None, "lower: trains better")}
    return build_result(NAME, p, done, predictions, _measure(p), ctx)


def draw(r: Result) -> list:
    out = []
    for metric, title, y in ((ENTROPY, "Attention entropy at initialisation by head width", "entropy (nats)"),
                             (GRAD, "Gradient norm reaching q and k at initialisation", "gradient norm")):
        series, bands = curve_bands(r.curves, metric)
        out.append(line_chart(series, title, "d_head", y, bands=bands, log_y=metric == GRAD,
                              layout=dict(xaxis=dict(type="log", tickvals=sorted(r.params["d_heads"])),
                                          yaxis=dict(dtick=1) if metric == GRAD else {})))
    out.append(bars(r.table, LOSS, "Validation loss after training", "loss (nats)"))
    out.append(bars(r.table, EXACT, "Validation exact match after training", "exact match (%)", 100.0))
    series, bands = curve_bands(r.curves, "val_exact")
    out.append(line_chart(series, "Validation exact match while training", "step", "exact match", bands=bands))
    return out


def _work(p: AttnScaleParams) -> int:
    return len(SCALES) * p.seeds * p.steps   # the initialisation measures train nothing


NAME = "attn-scale"
EXPERIMENT = Experiment(
    name=NAME, title="Why attention divides by √d_k",
    question="Without dividing q·k by √d_k, does the softmax saturate as heads get wider, and does the model "
             "train worse?",
    prediction="q·k has variance d_k, so unscaled scores grow with the head width: the softmax saturates (low "
               "entropy, little gradient) and training suffers; dividing by √d_k keeps the variance at 1.",
    source="chapter §2.6 (scaled dot-product MHA) and the notebook's attention; Vaswani et al. (2017) §3.2.1",
    params=AttnScaleParams,
    tiny=dataclasses.replace(AttnScaleParams(), d_model=16, n_layers=1, steps=20, seeds=1, eval_every=10,
                             eval_examples=20, batch_size=16, d_heads=(4, 32)),
    run=run, figures=draw, work=_work)

__all__ = ["AttnScaleParams", "init_measures", "EXPERIMENT"]
