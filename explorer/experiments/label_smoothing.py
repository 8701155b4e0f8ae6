"""Label smoothing on reversal: eps 0 vs 0.1 (chapter exercise 2.3).

The default (Full) budget is the exercise's own setting, `reversal-seed`: integers 1-100, lengths 10-20,
600 steps (173 s of CPU on one core in bench/README.md, session 12); Quick (tiny) stays on `reversal-fast`.

Training and validation token accuracy (teacher forced) are recorded along training; at the end the
entropy of the output softmax is measured on 10 held-out examples (teacher forced, real target
positions including EOS). A model that fitted the smoothed target exactly would have the entropy of
that target, H = -(1-eps) ln(1-eps) - eps ln(eps / (K-2)) over a vocabulary of K tokens (padding gets
no mass); that is the number shown as expected.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import torch

from explorer.experiments._seq2seq import Seq2SeqBase, seq2seq_task, train_seq2seq, val_rows
from explorer.experiments.base import Claim, Context, Experiment, Result, build_result, final_metrics, seed_major
from explorer.experiments.charts import bars, curve_bands, num, pct, stat
from explorer.figures.curves import line_chart
from explorer.inspect import entropy
from explorer.tasks import PAD

ENTROPY, TRAIN_ACC, VAL_ACC, VAL_EXACT = "entropy (nats)", "train accuracy", "validation accuracy", "validation exact"


@dataclass(frozen=True)
class SmoothingParams(Seq2SeqBase):
    takes_own_data: ClassVar[bool] = True   # task="pairs": a teacher's TSV
    task: str = "reversal-seed"   # exercise 2.3: integers in [1, 100], lengths 10-20
    steps: int = 600              # enough for ~98% token accuracy there (the ch2 lesson's shipped answer)
    epsilons: tuple[float, ...] = (0.0, 0.1)
    held_out: int = 10

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.epsilons) < 2 or any(not isinstance(e, (int, float)) or not 0 <= e < 1 for e in self.epsilons):
            raise ValueError(f"epsilons={self.epsilons!r} must list at least two values in [0, 1)")
        if not isinstance(self.held_out, int) or not 1 <= self.held_out <= 500:
            raise ValueError(f"held_out={self.held_out!r} must be a whole number in 1..500")


def _label(eps: float) -> str:
    return f"eps={eps:g}"


def target_entropy(eps: float, vocab: int) -> float:
    """Entropy (nats) of the smoothed target: 1 - eps on the gold token, eps spread over K - 2 others."""
    if eps == 0:
        return 0.0
    return -(1 - eps) * math.log(1 - eps) - eps * math.log(eps / (vocab - 2))


def held_out_entropy(model, task, n: int) -> float:
    """Mean output entropy over real target positions, averaged per example, on n held-out examples."""
    b = val_rows(task, n)
    model.eval()
    with torch.inference_mode():
        ent = entropy(model(b.src, b.tgt_in))                                 # (n, T)
    real = (b.tgt_out != PAD).float()
    return float(((ent * real).sum(1) / real.sum(1)).mean())


def _unit(ctx: Context, p: SmoothingParams, seed: int, eps: float):
    cond, task = _label(eps), seq2seq_task(p, seed)
    model, history = train_seq2seq(ctx, p, task, seed, label_smoothing=eps)
    curves, window = [], []
    for rec in history:
        window.append(rec.token_acc)
        if rec.val_token_acc is not None:  # training accuracy: mean over the steps since the last evaluation
            at = dict(condition=cond, seed=seed, step=rec.step)
            curves += [dict(at, metric="train_acc", value=sum(window) / len(window)),
                       dict(at, metric="val_acc", value=rec.val_token_acc)]
            window = []
    final = final_metrics(model, task, history, p.eval_examples)   # also after a divergence
    train_acc = sum(window) / len(window) if window else curves[-2]["value"]
    samples = [dict(condition=cond, seed=seed, metric=m, value=v) for m, v in (
        (TRAIN_ACC, train_acc), (VAL_ACC, final["val_token_acc"]), (VAL_EXACT, final["val_exact"]),
        (ENTROPY, held_out_entropy(model, task, p.held_out)))]
    return samples, curves


def _measure(p: SmoothingParams):
    def measure(table) -> tuple[str, list[Claim]]:
        lo, hi = _label(min(p.epsilons)), _label(max(p.epsilons))
        (e0, s0, _), (e1, s1, _) = stat(table, lo, ENTROPY), stat(table, hi, ENTROPY)
        (a0, t0, _), (a1, t1, _) = stat(table, lo, VAL_ACC), stat(table, hi, VAL_ACC)
        return (f"output entropy on {p.held_out} held-out examples: {lo} {num(e0, s0)} nats, {hi} {num(e1, s1)} "
                f"nats; validation accuracy {pct(a0, t0)} vs {pct(a1, t1)}",
                [Claim(f"with {hi} the output is more diffuse, its entropy higher than with {lo}", ENTROPY, hi, lo,
                       unit="nats")])
    return measure


def run(p: SmoothingParams, ctx: Context) -> Result:
    done = ctx.collect(seed_major(p.seeds, p.epsilons), lambda u: _unit(ctx, p, *u),
                       lambda u: f"seed {u[0]}, {_label(u[1])}")
    vocab = len(seq2seq_task(p, 0).vocab)
    predictions = {(_label(e), ENTROPY): (target_entropy(e, vocab), "near 0: confident" if e == 0 else
                                          f"higher: about {target_entropy(e, vocab):.2f}, the smoothed target's")
                   for e in p.epsilons}
    return build_result(NAME, p, done, predictions, _measure(p), ctx)


def draw(r: Result) -> list:
    series, bands = {}, {}
    for metric, what in (("train_acc", "train"), ("val_acc", "validation")):
        s, b = curve_bands(r.curves, metric)
        series.update({f"{c} {what}": v for c, v in s.items()})
        bands.update({f"{c} {what}": v for c, v in b.items()})
    return [line_chart(series, "Token accuracy, train and validation (mean ± std over seeds)", "step",
                       "token accuracy", bands=bands),
            bars(r.table, ENTROPY, "Output entropy on held-out examples (diamond: the smoothed target's)",
                 "entropy (nats)"),
            bars(r.table, VAL_EXACT, "Validation exact match (greedy decoding)", "exact match (%)", 100.0)]


NAME = "label-smoothing"
EXPERIMENT = Experiment(
    name=NAME, title="Label smoothing makes outputs more diffuse",
    question="Does training with label smoothing (eps 0.1) instead of hard targets make the output "
             "distribution less confident, and what does it do to accuracy?",
    prediction="With eps 0.1 the output softmax is more diffuse (higher entropy) than with eps 0; label "
               "smoothing regularises rather than hurts accuracy.",
    source="chapter §2.7.3 and exercise 2.3",
    params=SmoothingParams, tiny=dataclasses.replace(SmoothingParams(), task="reversal-fast", steps=20, seeds=1,
                                                     eval_every=10, eval_examples=20, d_model=16, n_layers=1),
    run=run, figures=draw)
