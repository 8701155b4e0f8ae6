"""Head width at a fixed d_model: the chapter's rule of thumb "d_k = d_model / n_heads should be at least 32
for numerically stable softmax" (chapter §2.8, design rules of thumb).

Reversal models of the same d_model (so the same parameter count) are trained alike with `heads` heads each,
d_head = d_model / heads from wide to narrow. "Numerically stable" is read two ways: does any run diverge (a
non-finite loss stops it), and do narrow heads end with a higher validation loss than 32-wide ones.

The claim carries a margin, MARGIN nats: a difference of validation loss under it does not matter, and two
one-sided tests (explorer.analysis.evidence) decide "no meaningful difference" when the 90% interval of
d_head 4 minus d_head 32 lies within it.

Measured at the default budget (3 seeds x 400 steps; bench/README.md, "Equivalence in verdicts"): no run
diverged, every width from 64 down to 4 reaches 99.8-100% exact match, and d_head 4 minus d_head 32 is 0.00017
nats (90% CI [-0.00005, 0.0004]): no meaningful difference within ±0.01 nats (TOST p = 8e-8), so the rule of
thumb is not visible at this size. On the chapter's harder reversal (`--set task=reversal-seed --set
steps=600`) no run diverged either, and d_head 4 ends with a lower validation loss than d_head 32 (95% CI
[-0.0111, -0.0039] nats): decided against the rule.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

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

RULE = 32                                  # the chapter's smallest stable d_k
# a validation loss 0.01 nats higher is a token 1% less likely (e^0.01): under that, no width trains worse
MARGIN = 0.01
LOSS, EXACT, DIVERGED = "val loss", "val exact", "diverged"


@dataclass(frozen=True)
class DHeadParams(Seq2SeqBase):
    takes_own_data: ClassVar[bool] = True   # task="pairs": a teacher's TSV
    d_model: int = 64
    heads: tuple[int, ...] = (1, 2, 4, 8, 16)   # d_head 64, 32, 16, 8, 4

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.heads) < 2 or any(not isinstance(h, int) or isinstance(h, bool) or h < 1 or self.d_model % h
                                      for h in self.heads):
            raise ValueError(f"heads={self.heads!r} must list at least two head counts that divide "
                             f"d_model={self.d_model}")


def label(p: DHeadParams, heads: int) -> str:
    return f"d_head {p.d_model // heads}"


def _unit(ctx: Context, p: DHeadParams, seed: int, heads: int):
    cond, task = label(p, heads), seq2seq_task(p, seed)
    model, history = train_seq2seq(ctx, p, task, seed, n_heads=heads)
    final = final_metrics(model, task, history, p.eval_examples)
    diverged = float(bool(history) and history[-1].stopped is not None)
    samples = [dict(condition=cond, seed=seed, metric=m, value=v) for m, v in (
        (LOSS, final["val_loss"]), (EXACT, final["val_exact"]), (DIVERGED, diverged))]
    return samples, history_curves(history, cond, seed, ("loss", "val_exact"))


def _measure(p: DHeadParams):
    widths = [p.d_model // h for h in p.heads]
    narrow = [d for d in widths if d < RULE]

    def measure(table) -> tuple[str, list[Claim]]:
        rows = ", ".join(f"d_head {d} ({p.d_model // d} heads): exact {pct(*stat(table, f'd_head {d}', EXACT)[:2])}, "
                         f"loss {num(*stat(table, f'd_head {d}', LOSS)[:2])}" for d in widths)
        runs = table[table["metric"] == DIVERGED]
        diverged = int(round(float((runs["mean"] * runs["n"]).sum())))
        text = (f"At d_model {p.d_model}, after {p.steps} steps: {rows}. Runs that diverged (a non-finite loss): "
                f"{diverged} of {int(runs['n'].sum())}")
        claims = []
        if RULE in widths and narrow:
            d = min(narrow)
            # the loss, not exact match: on reversal-fast every width may reach 100%, and a tie decides nothing
            claims.append(Claim(f"heads narrower than {RULE} train worse: d_head {d} ends with a higher validation "
                                f"loss than d_head {RULE}", LOSS, f"d_head {d}", f"d_head {RULE}", unit="nats",
                                margin=MARGIN))
        return text, claims
    return measure


def run(p: DHeadParams, ctx: Context) -> Result:
    done = ctx.collect(seed_major(p.seeds, p.heads), lambda u: _unit(ctx, p, *u),
                       lambda u: f"seed {u[0]}, {label(p, u[1])}")
    predictions = {(label(p, h), LOSS): (None, "stable" if p.d_model // h >= RULE else "below the rule of thumb")
                   for h in p.heads}
    return build_result(NAME, p, done, predictions, _measure(p), ctx)


def draw(r: Result) -> list:
    series, bands = curve_bands(r.curves, "val_exact")
    loss, loss_bands = curve_bands(r.curves, "loss")
    return [bars(r.table, EXACT, f"Validation exact match by head width (d_model {r.params['d_model']})",
                 "exact match (%)", 100.0),
            bars(r.table, LOSS, "Validation loss by head width", "loss (nats)"),
            line_chart(series, "Validation exact match while training", "step", "exact match", bands=bands),
            line_chart(loss, "Training loss", "step", "loss", bands=loss_bands, log_y=True)]


NAME = "d-head"
EXPERIMENT = Experiment(
    name=NAME, title="Head width: is d_k ≥ 32 needed?",
    question="At a fixed d_model, do heads narrower than 32 dimensions make the softmax unstable or the model "
             "worse?",
    prediction="d_k = d_model / n_heads should be at least 32 for a numerically stable softmax: narrower heads "
               "train worse.",
    source="chapter §2.8, design rules of thumb",
    params=DHeadParams,
    tiny=dataclasses.replace(DHeadParams(), d_model=32, heads=(1, 4), n_layers=1, steps=20, seeds=1, eval_every=10,
                             eval_examples=20, batch_size=16),
    run=run, figures=draw, version=2)   # 2: the claim has a margin (equivalence)

__all__ = ["DHeadParams", "EXPERIMENT"]
