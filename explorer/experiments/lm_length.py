"""Train short, test long: positional encodings in a character language model (Press, Smith & Lewis,
2022, the ALiBi paper's own setting; the chapter's "sinusoidal PE generalises to unseen lengths").

Decoder-only char-lm models (Pre-LN) are trained alike on windows of `context` characters with each
encoding, then read windows of twice that length from the held-out text. The loss on the positions the
model saw in training (0..context-1) is set against the loss on the positions past them
(context..2*context-1), teacher forced: the gap is what the longer context costs. A model that extrapolates
keeps the gap near 0 (or below: more context can only help a model that can use it).
The learned table is sized for the longer windows but never trained past `context`.

Measured at the default budget (3 seeds; bench/README.md, "ALiBi and the seeds' remaining claims"): the gap is
0.009 nats for ALiBi and 0.015 for RoPE, 0.135 for learned PE and 0.45 for sinusoidal PE (none: 0.096).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from explorer.config import POS_ENCODINGS, ModelConfig
from explorer.experiments.base import (
    Claim,
    Context,
    Experiment,
    Result,
    build_result,
    history_curves,
    measuring,
    number,
    seed_major,
    whole,
)
from explorer.experiments.charts import bars, curve_bands, num, stat
from explorer.figures.curves import line_chart
from explorer.model import build_model
from explorer.tasks import PAD, TASK_PRESETS, Task, make_task

INSIDE, PAST, GAP = "loss, trained positions", "loss, positions past training", "extrapolation gap (nats)"
MARGIN = 0.1   # nats: a gap below this counts as extrapolating


@dataclass(frozen=True)
class LMLengthParams:
    """A small char-lm language model (the char-lm recipe's lr), the same for every encoding."""

    encodings: tuple[str, ...] = POS_ENCODINGS
    context: int = 16              # characters a training window holds; tested on twice as many
    layers: int = 2
    d_model: int = 32
    n_heads: int = 4
    batch_size: int = 32
    steps: int = 400
    lr: float = 3e-3
    warmup: int = 30
    eval_every: int = 50
    eval_examples: int = 256
    seeds: int = 3

    def __post_init__(self) -> None:
        if not self.encodings or any(e not in POS_ENCODINGS for e in self.encodings):
            raise ValueError(f"encodings={self.encodings!r} must list some of {', '.join(POS_ENCODINGS)}")
        for name in ("layers", "d_model", "n_heads", "batch_size", "steps", "eval_examples", "seeds"):
            whole(name, getattr(self, name))
        whole("context", self.context, 2, 128)
        whole("warmup", self.warmup, 0)
        whole("eval_every", self.eval_every, 0)
        number("lr", self.lr, 0.0, low_open=True)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if "rope" in self.encodings and (self.d_model // self.n_heads) % 2:
            raise ValueError(f"RoPE needs an even head dimension; d_model={self.d_model} / n_heads={self.n_heads} "
                             "is odd")


def _task(p: LMLengthParams, seed: int, length: int) -> Task:
    return make_task(TASK_PRESETS["char-lm"].replace(seed=seed, min_len=length, max_len=length,
                                                     n_val=p.eval_examples))


def position_losses(model, task: Task) -> torch.Tensor:
    """Teacher-forced cross-entropy at each position, averaged over the validation windows: (T,)."""
    model.eval()
    v = task.val
    with torch.inference_mode():
        logits = model(v.tgt_in)                                        # (N, T, vocab)
        loss = F.cross_entropy(logits.transpose(1, 2), v.tgt_out, ignore_index=PAD, reduction="none")
    return loss.mean(0)


def _unit(ctx: Context, p: LMLengthParams, seed: int, pe: str):
    task, longer = _task(p, seed, p.context), _task(p, seed, 2 * p.context)
    cfg = task.model_config(ModelConfig(arch="decoder", d_model=p.d_model, n_heads=p.n_heads,
                                        n_decoder_layers=p.layers, d_ff=2 * p.d_model, norm="pre",
                                        pos_encoding=pe, max_len=2 * p.context))
    model = build_model(cfg, seed=seed)
    train = measuring(steps=p.steps, batch_size=p.batch_size, lr=p.lr, warmup=min(p.warmup, p.steps - 1),
                      seed=seed, eval_every=p.eval_every, eval_examples=p.eval_examples)
    history = ctx.train(model, task, train)
    per_position = position_losses(model, longer)                        # (2 * context,)
    inside, past = float(per_position[: p.context].mean()), float(per_position[p.context:].mean())
    samples = [dict(condition=pe, seed=seed, metric=m, value=v) for m, v in (
        (INSIDE, inside), (PAST, past), (GAP, past - inside))]
    curves = history_curves(history, pe, seed, ("val_loss",))
    curves += [dict(condition=pe, seed=seed, step=i, metric="position_loss", value=float(v))
               for i, v in enumerate(per_position)]
    return samples, curves


def _measure(p: LMLengthParams):
    n = p.context
    says = {"alibi": "ALiBi trains short and tests long (Press et al., 2022)",
            "sinusoidal": "sinusoidal PE generalises to unseen lengths (the chapter)",
            "rope": "RoPE extends to longer contexts on principle (the chapter)"}

    def measure(table) -> tuple[str, list[Claim]]:
        have = [e for e in p.encodings if stat(table, e, GAP)[2]]
        rows = "; ".join(f"{e}: {num(*stat(table, e, INSIDE)[:2])} at positions 0-{n - 1}, "
                         f"{num(*stat(table, e, PAST)[:2])} at {n}-{2 * n - 1}" for e in have)
        text = f"Trained on {n}-character windows for {p.steps} steps, loss (nats) on {2 * n}-character ones: {rows}"
        claims = [Claim(f"{says[e]}: on positions {n}-{2 * n - 1} its loss is at most {MARGIN} nats above the "
                        "trained positions'", GAP, e, above=False, threshold=MARGIN, unit="nats")
                  for e in says if e in p.encodings]
        if "learned" in p.encodings:
            claims.append(Claim(f"learned PE cannot: on positions {n}-{2 * n - 1} its loss is more than {MARGIN} "
                                "nats above the trained positions'", GAP, "learned", threshold=MARGIN, unit="nats"))
        return text, claims
    return measure


def run(p: LMLengthParams, ctx: Context) -> Result:
    done = ctx.collect(seed_major(p.seeds, p.encodings), lambda u: _unit(ctx, p, *u),
                       lambda u: f"seed {u[0]}, {u[1]}")
    words = {"learned": (None, "large: positions past training are untrained"),
             "none": (None, "no positions: only the causal mask tells them apart")}
    predictions = {(e, GAP): words.get(e, (0.0, "near 0: extrapolates")) for e in p.encodings}
    return build_result(NAME, p, done, predictions, _measure(p), ctx)


def draw(r: Result) -> list:
    n = r.params["context"]
    series, bands = curve_bands(r.curves, "position_loss")
    return [bars(r.table, GAP, f"Loss past the trained length ({n}-{2 * n - 1}) minus loss within it",
                 "nats"),
            line_chart(series, f"Loss at each position of {2 * n}-character windows (trained on {n})", "position",
                       "loss (nats)", bands=bands),
            bars(r.table, PAST, f"Loss on positions {n}-{2 * n - 1}, never trained", "loss (nats)")]


NAME = "lm-length"
EXPERIMENT = Experiment(
    name=NAME, title="Train short, test long: positions in a language model",
    question="Trained on short windows, which positional encodings keep predicting well on positions past "
             "the longest they saw?",
    prediction="ALiBi trains short and tests long; sinusoidal PE generalises to unseen lengths and RoPE extends "
               "on principle; learned PE cannot go past its trained positions.",
    source="Press, Smith & Lewis (2022); chapter §2.2 and its summary",
    params=LMLengthParams,
    tiny=LMLengthParams(layers=1, d_model=16, context=8, batch_size=16, steps=8, warmup=2, eval_every=4,
                        eval_examples=32, seeds=1),
    run=run, figures=draw)

__all__ = ["LMLengthParams", "position_losses", "EXPERIMENT"]
