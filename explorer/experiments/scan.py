"""SCAN (Lake & Baroni 2018): the same model trained on the simple, length and add-jump splits.

The paper's recurrent models were nearly perfect on a random split and failed to compose: commands
longer than any they trained on, or "jump" in combinations seen only alone. Here a Transformer: each
split trains a fresh model with the recommended SCAN recipe (explorer.tasks.recipes) for `steps` steps and is
scored by greedy exact match on `eval_examples` commands of its test split; each seed draws its own
subset, order and initial weights.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from explorer.experiments import base
from explorer.experiments._seq2seq import train_seq2seq
from explorer.experiments.base import Claim, Context, Experiment, Result, build_result, seed_major
from explorer.experiments.charts import bars_and_curves, pct, stat
from explorer.tasks import TASK_PRESETS, make_task

SIMPLE, LENGTH, ADDJUMP = "simple", "length", "add-jump"
PRESETS = {SIMPLE: "scan-simple", LENGTH: "scan-length", ADDJUMP: "scan-addjump"}
# The paper's best recurrent models on each split (its Experiments 1-3): exact match on the test set.
PAPER = {SIMPLE: (0.998, "about 99.8% (the paper's recurrent models)"),
         LENGTH: (0.14, "about 14% (20.8% for the best model): longer than any command it trained on"),
         ADDJUMP: (0.012, "about 1%: 'jump' was seen only alone")}
LEARNED_MIN, GAP_MIN = 0.9, 0.5


@dataclass(frozen=True)
class ScanParams:
    """The recommended SCAN recipe (explorer.tasks.recipes: d_model 64, 4 heads, 2+2 layers, lr 2e-3) on each split."""

    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    n_train: int = 14_670      # every split trains on this many commands (add-jump has no more)
    eval_examples: int = 500   # test commands scored: greedy decoding of up to 48 actions is the slow part
    steps: int = 1200          # the recipe's 1,500 x 3 splits x 3 seeds would pass MAX_WORK (12,000)
    batch_size: int = 64
    lr: float = 2e-3
    warmup: int = 50
    eval_every: int = 200
    seeds: int = 3

    def __post_init__(self) -> None:
        for name in ("d_model", "n_heads", "n_layers", "steps", "batch_size", "seeds"):
            base.whole(name, getattr(self, name))
        base.whole("n_train", self.n_train, 1, 14_670)
        base.whole("eval_examples", self.eval_examples, 1, 3_920)   # the length split's test set is the smallest
        base.whole("warmup", self.warmup, 0)
        base.whole("eval_every", self.eval_every, 0)
        base.number("lr", self.lr, 0.0, low_open=True)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")


def _train(ctx: Context, p: ScanParams, seed: int, split: str) -> tuple[list[dict], list[dict]]:
    cfg = TASK_PRESETS[PRESETS[split]].replace(n_train=p.n_train, n_val=p.eval_examples, seed=seed)
    task = make_task(cfg)
    model, history = train_seq2seq(ctx, p, task, seed)
    final = base.final_metrics(model, task, history, p.eval_examples)
    samples = [dict(condition=split, seed=seed, metric="exact", value=final["val_exact"]),
               dict(condition=split, seed=seed, metric="token_acc", value=final["val_token_acc"])]
    return samples, base.history_curves(history, split, seed, ("loss", "val_exact"))


def _measure(table) -> tuple[str, list[Claim]]:
    text = ", ".join(f"{split} {pct(*stat(table, split, 'exact')[:2])}" for split in PRESETS)
    return f"exact match on the test split: {text}", [
        Claim(f"on the simple split the model is nearly perfect, above {LEARNED_MIN:.0%}", "exact", SIMPLE,
              threshold=LEARNED_MIN, unit="%"),
        Claim(f"the length split scores more than {GAP_MIN * 100:.0f} points below the simple one", "exact", SIMPLE,
              versus=LENGTH, threshold=GAP_MIN, unit="%"),
        Claim(f"the add-jump split scores more than {GAP_MIN * 100:.0f} points below the simple one", "exact", SIMPLE,
              versus=ADDJUMP, threshold=GAP_MIN, unit="%")]


def run(p: ScanParams, ctx: Context) -> Result:
    done = ctx.collect(seed_major(p.seeds, tuple(PRESETS)), lambda u: _train(ctx, p, *u),
                       lambda u: f"seed {u[0]}, {u[1]} split")
    predictions = {(split, "exact"): PAPER[split] for split in PRESETS}
    return build_result(NAME, p, done, predictions, _measure, ctx)


def draw(r: Result) -> list:
    return bars_and_curves(r, "exact", "SCAN: exact match on each split's test set (markers: the paper)",
                                "exact match (%)", "Test exact match while training (mean ± std over seeds)")


NAME = "scan"
EXPERIMENT = Experiment(
    name=NAME, title="SCAN: in distribution vs composition",
    question="A model that is nearly perfect on random SCAN commands: does it also handle longer commands, "
             "or 'jump' in combinations it never saw?",
    prediction="Lake & Baroni (2018): their recurrent models reach about 99.8% on the simple split but about "
               "14-21% on the length split and about 1% on add-jump. Nearly perfect in distribution, they "
               "fail to compose.",
    source="Lake & Baroni 2018, Generalization without systematicity (SCAN), experiments 1-3",
    params=ScanParams, tiny=dataclasses.replace(ScanParams(), d_model=16, n_layers=1, n_train=300, eval_examples=20,
                                                steps=15, batch_size=16, eval_every=0, seeds=2),
    run=run, figures=draw, conditions=3)
