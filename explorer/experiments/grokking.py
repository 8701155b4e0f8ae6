"""Grokking (Power et al. 2022; Nanda et al. 2023): trained full batch on half of the pairs of a + b mod p, a
small Transformer fits its training pairs within a few hundred steps and generalises to the other half only
much later, with weight decay; without it, not within the same budget. When it generalises, its token
embeddings are a few Fourier frequencies (waves around the circle of residues).

The task and model are the shipped `modular-add` recipe's (explorer/tasks/recipes.py), each seed with its own
split of the pairs and its own initial weights; the conditions differ in the weight decay only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from explorer.config import ModelConfig
from explorer.experiments.base import (
    Claim,
    Context,
    Experiment,
    Result,
    build_result,
    measuring,
    number,
    seed_major,
    whole,
)
from explorer.experiments.charts import bars, curve_bands, stat
from explorer.figures.curves import line_chart
from explorer.interpret.learning import fourier_norms, key_frequencies
from explorer.model import build_model
from explorer.tasks import SPECIALS, TASK_PRESETS, make_task
from explorer.tasks.recipes import recommended

WITH, WITHOUT = "weight decay 1", "no weight decay"
VAL, TRAIN99, VAL99, DELAY, KEYS = ("final validation accuracy", "train 99% step", "validation 99% step",
                                    "delay (steps)", "key frequencies")
DELAYED = 500   # "long after": validation reaches 99% at least this many steps after training accuracy does


@dataclass(frozen=True)
class GrokkingParams:
    """The shipped recipe: p = 59, half the pairs train, 2,000 full-batch steps at lr 3e-3, 3 seeds."""

    p: int = 59
    train_fraction: float = 0.5
    steps: int = 2000
    seeds: int = 3
    lr: float = 3e-3
    weight_decay: float = 1.0
    eval_every: int = 50

    def __post_init__(self) -> None:
        whole("p", self.p, 3, 113)
        for name in ("steps", "seeds", "eval_every"):
            whole(name, getattr(self, name))
        number("train_fraction", self.train_fraction, 0.0, 1.0, low_open=True)
        number("lr", self.lr, 0.0, low_open=True)
        number("weight_decay", self.weight_decay, 0.0, 10.0)
        if not 1 <= round(self.train_fraction * self.p ** 2) < self.p ** 2:
            raise ValueError(f"train_fraction={self.train_fraction} of p²={self.p ** 2} pairs leaves no pair to "
                             "train on or none to validate on; use a fraction between 0 and 1")


def _first(history, field: str, level: float, default: int) -> int:
    """The first step at which `field` reached `level`; `default` (the budget) when it never did."""
    return next((r.step for r in history if getattr(r, field) is not None and getattr(r, field) >= level), default)


def _one(ctx: Context, p: GrokkingParams, seed: int, condition: str) -> tuple[list[dict], list[dict]]:
    n_train = round(p.train_fraction * p.p ** 2)
    task = make_task(TASK_PRESETS["modular-add"].replace(n_symbols=p.p, n_train=n_train, n_val=p.p ** 2 - n_train,
                                                         seed=seed))
    overrides, recipe = recommended("modular-add")
    model = build_model(task.model_config(ModelConfig(max_len=32).replace(**overrides)), seed=seed)
    train = measuring(**{**recipe.to_dict(), "steps": p.steps, "lr": p.lr, "seed": seed, "batch_size": n_train,
                         "eval_every": p.eval_every, "eval_examples": p.p ** 2 - n_train,
                         "weight_decay": p.weight_decay if condition == WITH else 0.0})
    history = ctx.train(model, task, train)
    train99, val99 = _first(history, "token_acc", 0.99, p.steps), _first(history, "val_token_acc", 0.99, p.steps)
    final = next(r.val_token_acc for r in reversed(history) if r.val_token_acc is not None)
    norms = fourier_norms(model.decoder.embed.weight.detach()[len(SPECIALS):], p.p)
    samples = [dict(condition=condition, seed=seed, metric=m, value=float(v)) for m, v in (
        (VAL, final), (TRAIN99, train99), (VAL99, val99), (DELAY, val99 - train99),
        (KEYS, len(key_frequencies(norms))))]
    curves = [dict(condition=condition, seed=seed, step=r.step, metric=m, value=float(v)) for r in history
              for m, v in (("train_acc", r.token_acc), ("val_acc", r.val_token_acc)) if v is not None
              and (m == "val_acc" or r.step % p.eval_every == 0)]
    return samples, curves


def _measure(table) -> tuple[str, list[Claim]]:
    w, o = stat(table, WITH, VAL), stat(table, WITHOUT, VAL)
    d, k = stat(table, WITH, DELAY), stat(table, WITH, KEYS)
    return (f"final validation accuracy: with weight decay {100 * w[0]:.1f}% ± {100 * w[1]:.1f}, without "
            f"{100 * o[0]:.1f}% ± {100 * o[1]:.1f}; with it, 99% comes {d[0]:.0f} ± {d[1]:.0f} steps after training "
            f"accuracy's 99%, and {k[0]:.1f} ± {k[1]:.1f} frequencies carry 80% of the embeddings' norm"), [
        Claim("with weight decay validation accuracy ends above 95%", VAL, WITH, threshold=0.95, unit="%"),
        Claim(f"with weight decay validation reaches 99% over {DELAYED} steps after training accuracy does", DELAY,
              WITH, threshold=DELAYED, unit="steps"),
        Claim("without weight decay validation accuracy stays below 99% within the same budget", VAL, WITHOUT,
              above=False, threshold=0.99, unit="%")]


def run(p: GrokkingParams, ctx: Context) -> Result:
    done = ctx.collect(seed_major(p.seeds, (WITH, WITHOUT)), lambda u: _one(ctx, p, u[0], u[1]),
                       lambda u: f"seed {u[0]}, {u[1]}")
    predictions = {(WITH, VAL): (1.0, "about 100%, long after the training pairs are fitted"),
                   (WITHOUT, VAL): (0.5, "well below: it memorises and stays there")}
    return build_result(NAME, p, done, predictions, _measure, ctx)


def draw(r: Result) -> list:
    series, bands = curve_bands(r.curves, "val_acc")
    return [bars(r.table, VAL, "Validation accuracy at the end, over seeds", "accuracy (%)", 100.0),
            line_chart(series, "Validation accuracy while training (mean ± std over seeds)", "step", "accuracy",
                       bands=bands)]


NAME = "grokking"
EXPERIMENT = Experiment(
    name=NAME, title="Grokking: generalising long after memorising",
    question="Does a Transformer trained on modular addition generalise long after it fits its training pairs, "
             "and only with weight decay?",
    prediction="With weight decay validation accuracy reaches 99% hundreds of steps after training accuracy does; "
               "without weight decay it stays far lower within the same budget.",
    source="Power et al. 2022; Nanda et al. 2023 (issue 38)",
    params=GrokkingParams, tiny=dataclasses.replace(GrokkingParams(), p=11, steps=20, seeds=2, eval_every=10),
    run=run, figures=draw, conditions=2)
