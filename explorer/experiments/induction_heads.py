"""Induction heads (Olsson et al. 2022): two layers form a head that finds the current token earlier on and
attends to the token after it, one layer cannot; the repeated half's loss falls in one bend when it forms.

The task is the shipped `induction` preset (a random half of 6-12 distinct tokens, then the same half again)
with each seed's own data and weights; the model is its recipe's (explorer/tasks/recipes.py) with 2 or 1 layers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

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
from explorer.interpret.learning import induction_scores, phase_change_step
from explorer.model import build_model
from explorer.tasks import TASK_PRESETS, make_task
from explorer.tasks.recipes import recommended

TWO, ONE = "2 layers", "1 layer"
SCORE, REPEAT, PHASE = "induction score", "repeat accuracy", "phase change step"
FORMED = 0.4   # the bar for "a head with induction score >= 0.4"


@dataclass(frozen=True)
class InductionParams:
    """The shipped recipe's budget: 800 steps of batch 64 at lr 3e-3, 3 seeds, halves of 6-12 tokens of 40."""

    steps: int = 800
    seeds: int = 3
    lr: float = 3e-3
    n_train: int = 20_000
    eval_every: int = 20

    def __post_init__(self) -> None:
        for name in ("steps", "seeds", "n_train", "eval_every"):
            whole(name, getattr(self, name))
        number("lr", self.lr, 0.0, low_open=True)


def _one(ctx: Context, p: InductionParams, seed: int, condition: str) -> tuple[list[dict], list[dict]]:
    task = make_task(TASK_PRESETS["induction"].replace(seed=seed, n_train=p.n_train))
    overrides, recipe = recommended("induction")
    overrides["n_decoder_layers"] = 2 if condition == TWO else 1
    cfg = task.model_config(ModelConfig(max_len=32).replace(**overrides))
    model = build_model(cfg, seed=seed)
    train = measuring(**{**recipe.to_dict(), "steps": p.steps, "lr": p.lr, "seed": seed, "eval_every": p.eval_every,
                         "warmup": min(recipe.warmup, p.steps // 4)})
    history = ctx.train(model, task, train)
    rows = pd.DataFrame([{"step": r.step, **dict(r.parts)} for r in history])
    scores = induction_scores(model, task)
    last = rows.dropna().iloc[-1]
    samples = [dict(condition=condition, seed=seed, metric=SCORE, value=float(scores["induction"].max())),
               dict(condition=condition, seed=seed, metric=REPEAT, value=float(last["repeat_acc"]))]
    if condition == TWO and rows["repeat_loss"].notna().sum() >= 2:
        samples.append(dict(condition=condition, seed=seed, metric=PHASE, value=float(phase_change_step(rows))))
    curves = [dict(condition=condition, seed=seed, step=int(r.step), metric="repeat_loss", value=float(r.repeat_loss))
              for r in rows.dropna().itertuples()]
    return samples, curves


def _measure(table) -> tuple[str, list[Claim]]:
    two, one = stat(table, TWO, SCORE), stat(table, ONE, SCORE)
    phase = stat(table, TWO, PHASE)
    return (f"best head's induction score: 2 layers {two[0]:.2f} ± {two[1]:.2f}, 1 layer {one[0]:.2f} ± {one[1]:.2f}; "
            f"the repeated half's loss falls fastest at step {phase[0]:.0f} ± {phase[1]:.0f}"), [
        Claim(f"two layers form a head with induction score above {FORMED}", SCORE, TWO, threshold=FORMED),
        Claim(f"one layer does not (its best head stays below {FORMED})", SCORE, ONE, above=False, threshold=FORMED)]


def run(p: InductionParams, ctx: Context) -> Result:
    done = ctx.collect(seed_major(p.seeds, (TWO, ONE)), lambda u: _one(ctx, p, u[0], u[1]),
                       lambda u: f"seed {u[0]}, {u[1]}")
    predictions = {(TWO, SCORE): (0.8, "high: a layer-1 head attends to the token after the earlier occurrence"),
                   (ONE, SCORE): (0.1, "low: one layer cannot know which token came before each key")}
    return build_result(NAME, p, done, predictions, _measure, ctx)


def draw(r: Result) -> list:
    series, bands = curve_bands(r.curves, "repeat_loss")
    return [bars(r.table, SCORE, "The best head's induction score over seeds", "induction score"),
            line_chart(series, "Loss on the repeated half while training (mean ± std over seeds)", "step",
                       "loss (nats)", bands=bands)]


NAME = "induction-heads"
EXPERIMENT = Experiment(
    name=NAME, title="Induction heads form in two layers, not one",
    question="Does a Transformer need two layers to form an induction head?",
    prediction="Two layers form a head with induction score well above 0.4, in a phase change where the repeated "
               "half's loss drops in one bend; one layer stays below 0.4.",
    source="Olsson et al. 2022, In-context learning and induction heads (issue 38)",
    params=InductionParams, tiny=dataclasses.replace(InductionParams(), steps=30, seeds=2, n_train=1_000,
                                                     eval_every=10),
    run=run, figures=draw, conditions=2)
