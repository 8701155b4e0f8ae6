"""Residual connections: a 12-block language model with and without x + f(x) (module 6, §6.2).

The seed: "Residual connections (x + f(x)) allow gradients to flow unchanged through deep stacks.
Without them, training networks deeper than ~10 layers is nearly impossible."

Decoder-only character language models (Pre-LN, the char-lm text, `context` characters) are trained
alike: `layers` blocks with residual connections, the same without them (`ModelConfig.residual="none"`:
each sublayer's output replaces x instead of being added to it), and a shallow `shallow_layers`-block
stack with and without them (2 vs 12 layers, each with and without); the shallow one without them shows
that a failure is the depth's fault rather than the missing addition's alone. The same seed gives every
condition the same batches and (for one depth) the same initial weights.
(a) Trained: validation loss and next-character accuracy after `steps` steps (Adam, the char-lm
recipe's lr 3e-3, warmup, cosine), against the unigram baseline: the loss of predicting each character
by its frequency alone, which is what a model that learned nothing from the context reaches.
(b) At initialisation: the gradient norm of each block's parameters (`p.grad`, as in pre-post-ln) on
one training batch; the claim compares the first block's with the last's, on a log scale.

Measured at the default budget (5 seeds x 150 steps; bench/README.md, session 11, has the timing and why 5
seeds): every claim holds. Val loss 2.35 with residuals, 2.95 without (the unigram baseline is 2.946: the plain
stack predicts the most frequent character, 17.4%), 2.75 for 2 blocks without and 2.43 for 2 with. At
initialisation the first block's gradient is 1.7x the last's with residuals and 0.26x without: it fades, but
about 4x over 12 blocks, not by orders of magnitude (each block's LayerNorm rescales what it passes on).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from explorer import inspect
from explorer.config import ModelConfig
from explorer.experiments.base import (
    Claim,
    Context,
    Experiment,
    Result,
    build_result,
    final_metrics,
    history_curves,
    measuring,
    number,
    seed_major,
    whole,
)
from explorer.experiments.charts import bars, curve_bands, pct, stat
from explorer.figures.curves import line_chart
from explorer.figures.gradients import grad_norm_profile
from explorer.losses import loss_and_stats
from explorer.model import build_model
from explorer.task_kinds import KINDS
from explorer.tasks import PAD, TASK_PRESETS, Task, make_task

LOSS, ACC = "val loss", "next-character accuracy"
RATIO = "log10 first/last block gradient"   # log10(||grad first block|| / ||grad last block||) at init
GRAD = "grad_init"                          # curve metric; its "step" is the layer index
MARGIN = 0.1                                # nats of validation loss that count as a difference
NEARLY = 0.05                               # "nearly impossible": within this many nats of the unigram baseline


@dataclass(frozen=True)
class ResidualParams:
    layers: int = 12               # "deeper than ~10 layers"
    shallow_layers: int = 2        # the depth control: few blocks, no residuals
    d_model: int = 32
    n_heads: int = 4
    context: int = 16              # characters a window holds
    batch_size: int = 32
    steps: int = 150
    lr: float = 3e-3
    warmup: int = 30
    eval_every: int = 25
    eval_examples: int = 256
    seeds: int = 5                 # 3 leave the depth control and the gradient claim open (bench/README.md)

    def __post_init__(self) -> None:
        for name in ("layers", "d_model", "n_heads", "batch_size", "steps", "eval_examples", "seeds"):
            whole(name, getattr(self, name))
        whole("shallow_layers", self.shallow_layers)
        if self.shallow_layers >= self.layers:
            raise ValueError(f"shallow_layers={self.shallow_layers} must be fewer than layers={self.layers}")
        whole("context", self.context, 2, 256)
        whole("warmup", self.warmup, 0)
        whole("eval_every", self.eval_every, 0)
        number("lr", self.lr, 0.0, low_open=True)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")

    @property
    def deep(self) -> str:
        return f"{_blocks(self.layers)}, residual"

    @property
    def plain(self) -> str:
        return f"{_blocks(self.layers)}, no residual"

    @property
    def shallow(self) -> str:
        return f"{_blocks(self.shallow_layers)}, no residual"

    @property
    def shallow_residual(self) -> str:
        return f"{_blocks(self.shallow_layers)}, residual"

    def conditions(self) -> dict[str, tuple[int, str]]:
        """condition -> (blocks, ModelConfig.residual): both depths with and without residuals."""
        return {self.deep: (self.layers, "add"), self.plain: (self.layers, "none"),
                self.shallow_residual: (self.shallow_layers, "add"), self.shallow: (self.shallow_layers, "none")}


def _blocks(n: int) -> str:
    return f"{n} layer" + ("s" if n != 1 else "")


def lm_task(p: ResidualParams, seed: int) -> Task:
    return make_task(TASK_PRESETS["char-lm"].replace(seed=seed, min_len=p.context, max_len=p.context,
                                                     n_val=p.eval_examples))


def lm_config(p: ResidualParams, task: Task, layers: int, residual: str) -> ModelConfig:
    return task.model_config(ModelConfig(arch="decoder", d_model=p.d_model, n_heads=p.n_heads,
                                         n_decoder_layers=layers, d_ff=2 * p.d_model, norm="pre",
                                         residual=residual, max_len=p.context))


def unigram_loss(task: Task) -> float:
    """Cross-entropy (nats) on the validation text of predicting each character by its training frequency."""
    vocab = len(task.vocab)
    train, val = task.train.tgt_out.flatten(), task.val.tgt_out.flatten()
    counts = torch.bincount(train[train != PAD], minlength=vocab).double() + 1.0   # add-one: no log(0)
    logp = (counts / counts.sum()).log()
    return float(-logp[val[val != PAD]].mean())


def init_gradients(p: ResidualParams, layers: int, residual: str, seed: int) -> list[float]:
    """Per-block parameter-gradient norms of one training batch at initialisation, first block first."""
    task = lm_task(p, seed)
    model = build_model(lm_config(p, task, layers, residual), seed=seed).train()
    batch = task.sample(p.batch_size, torch.Generator().manual_seed(seed))
    kind = KINDS[task.kind]
    loss, _ = loss_and_stats(kind.logits(model, batch), kind.target(batch), 0.0, kind.ignore_index)
    loss.backward()
    return list(inspect.grad_norms(inspect.grad_groups(model)).values())


def _init_unit(p: ResidualParams, seed: int, cond: str):
    layers, residual = p.conditions()[cond]
    norms = init_gradients(p, layers, residual, seed)
    ratio = math.log10(max(norms[0], 1e-30) / max(norms[-1], 1e-30))
    return ([dict(condition=cond, seed=seed, metric=RATIO, value=ratio)],
            [dict(condition=cond, seed=seed, step=i, metric=GRAD, value=v) for i, v in enumerate(norms)])


def _train_unit(ctx: Context, p: ResidualParams, seed: int, cond: str):
    layers, residual = p.conditions()[cond]
    task = lm_task(p, seed)
    model = build_model(lm_config(p, task, layers, residual), seed=seed)
    train = measuring(steps=p.steps, batch_size=p.batch_size, lr=p.lr, warmup=min(p.warmup, p.steps - 1),
                      seed=seed, eval_every=p.eval_every, eval_examples=p.eval_examples)
    history = ctx.train(model, task, train)
    final = final_metrics(model, task, history, p.eval_examples)
    samples = [dict(condition=cond, seed=seed, metric=LOSS, value=final["val_loss"]),
               dict(condition=cond, seed=seed, metric=ACC, value=final["val_exact"])]
    return samples, history_curves(history, cond, seed, ("loss", "val_loss"))


def _measure(p: ResidualParams, unigram: float):
    def measure(table) -> tuple[str, list[Claim]]:
        loss = {c: stat(table, c, LOSS) for c in p.conditions()}
        acc = {c: pct(*stat(table, c, ACC)[:2]) for c in p.conditions()}
        trained = "; ".join(f"{c}: val loss {m:.3f} ± {s:.2g}, accuracy {acc[c]}" for c, (m, s, _) in loss.items())
        (rd, sd, _), (rp, sp, _) = stat(table, p.deep, RATIO), stat(table, p.plain, RATIO)
        grads = (f"at initialisation the first block's gradient norm is {_times(rd)} the last's with residuals "
                 f"(log10 {rd:.2f} ± {sd:.2g}) and {_times(rp)} without (log10 {rp:.2f} ± {sp:.2g})")
        text = (f"(a) after {p.steps} steps: {trained}; predicting characters by frequency alone gives "
                f"{unigram:.3f}. (b) {grads}")
        return text, [
            Claim(f"(a) without residuals the {p.layers}-layer stack ends with a validation loss higher than with "
                  f"them by more than {MARGIN} nats", LOSS, p.plain, p.deep, threshold=MARGIN, unit="nats"),
            Claim(f"(a) without residuals the {p.layers}-layer stack learns next to nothing from the context: its "
                  f"validation loss stays within {NEARLY} nats of the unigram baseline ({unigram:.3f})", LOSS, p.plain,
                  above=False, threshold=unigram + NEARLY, unit="nats"),
            Claim(f"(a) without residuals the {p.layers}-layer stack ends higher than a {p.shallow_layers}-layer "
                  f"one by more than {MARGIN} nats (the depth's fault)", LOSS, p.plain, p.shallow,
                  threshold=MARGIN, unit="nats"),
            Claim("(b) at initialisation the first block's gradient norm relative to the last's is smaller without "
                  "residuals than with them (log10 ratio; same weights and batch per seed)", RATIO, p.deep,
                  p.plain, paired=True)]
    return measure


def _times(log_ratio: float) -> str:
    if math.isnan(log_ratio):
        return "(not measured)"
    return f"{10 ** log_ratio:.2g}x"


def run(p: ResidualParams, ctx: Context) -> Result:
    conditions = tuple(p.conditions())

    def work(unit):
        (part, seed), cond = unit
        return _init_unit(p, seed, cond) if part == "init" else _train_unit(ctx, p, seed, cond)

    units = [(("train", s), c) for s, c in seed_major(p.seeds, conditions)]
    units += [(("init", s), c) for s, c in seed_major(p.seeds, (p.deep, p.plain))]   # a second each
    done = ctx.collect(units, work, lambda u: f"{u[0][0]} seed {u[0][1]}, {u[1]}")
    unigram = unigram_loss(lm_task(p, 0))   # the validation text and the training text are the same for every seed
    predictions = {(p.deep, LOSS): (None, "learns: gradients flow unchanged through the additions"),
                   (p.plain, LOSS): (unigram, "nearly impossible to train: about the unigram baseline"),
                   (p.shallow, LOSS): (None, "a shallow stack learns even without residuals"),
                   (p.shallow_residual, LOSS): (None, "a shallow stack with residuals: the reference for depth"),
                   (p.deep, RATIO): (0.0, "about 0: the gradient reaches the first block unchanged"),
                   (p.plain, RATIO): (None, "below the residual stack's: the gradient fades on the way down")}
    return build_result(NAME, p, done, predictions, _measure(p, unigram), ctx)


def draw(r: Result) -> list:
    out = [bars(r.table, LOSS, "Validation loss after training (mean ± std over seeds; marker: unigram "
                "baseline)", "loss (nats)"),
           bars(r.table, ACC, "Next-character accuracy after training", "accuracy (%)", 100.0)]
    for metric, title, y in (("loss", "Training loss (mean ± std over seeds)", "loss"),
                             ("val_loss", "Validation loss while training", "loss")):
        series, bands = curve_bands(r.curves, metric)
        out.append(line_chart(series, title, "step", y, bands=bands))
    grads = r.curves[r.curves["metric"] == GRAD]
    profiles = {}
    for cond, g in grads.groupby("condition", sort=False):
        per_seed = g.pivot(index="seed", columns="step", values="value").clip(lower=1e-30)   # (seeds, layers)
        profiles[cond] = np.exp(np.log(per_seed).mean(axis=0)).to_numpy()
    out.append(grad_norm_profile(profiles, title="Gradient norm of each block at initialisation (geometric "
                                 "mean over seeds)"))
    out.append(bars(r.table, RATIO, "First block's gradient norm over the last's at initialisation (log10; "
                    "0 = unchanged)", "log10 ratio"))
    return out


NAME = "residuals"
EXPERIMENT = Experiment(
    name=NAME, title="Residual connections in a deep stack",
    question="Can a 12-block language model train without residual connections, and do gradients reach its "
             "first block?",
    prediction="With x + f(x) the gradient flows through the stack unchanged and the deep model learns; without "
               "it, a stack deeper than about 10 layers is nearly impossible to train.",
    source="module 6 (Haskell): §6.2, the Transformer block",
    params=ResidualParams,
    tiny=ResidualParams(layers=3, shallow_layers=1, d_model=16, context=8, batch_size=16, steps=8, warmup=2,
                        eval_every=4, eval_examples=32, seeds=2),
    run=run, figures=draw, conditions=4, version=2)   # 2: the shallow stack with residuals too

__all__ = ["ResidualParams", "init_gradients", "unigram_loss", "EXPERIMENT"]
