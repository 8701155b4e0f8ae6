"""Pre-LN vs Post-LN: gradient norms across 12 layers at initialisation (chapter exercise 2.2) and
training of 10-block stacks side by side (notebook exercise 3).

(a) A 12-layer encoder stack reads random tokens; its linear head scores every position against
random targets (cross-entropy, one scalar). After one backward pass we record, per block, the norm
of the gradient of its parameters (`p.grad`, as the exercise asks) and of the gradient at its input
(dL/dx^l). Uniformity across depth is the ratio of the largest to the smallest norm, per seed.
(b) 10-block encoders learn the notebook's order-detection task with the notebook's optimiser
settings (lr 0.01, constant, no warmup, no clipping); loss curves show which trains stably.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from explorer import inspect
from explorer.config import ModelConfig
from explorer.experiments.base import (
    Claim,
    Context,
    Experiment,
    Result,
    build_result,
    choice,
    final_metrics,
    history_curves,
    measuring,
    number,
    seed_major,
    whole,
)
from explorer.experiments.charts import bars, curve_bands, num, pct, stat
from explorer.figures.curves import line_chart, training_curves
from explorer.model import build_model
from explorer.tasks import TASK_PRESETS, make_task

PRE, POST = "Pre-LN", "Post-LN"
NORMS = {PRE: "pre", POST: "post"}
RATIO_P, RATIO_X = "max/min grad norm (parameters)", "max/min grad norm (block inputs)"
GRAD_P, GRAD_X = "grad_params", "grad_input"   # curve metrics; their "step" is the layer index
LOSS = "final training loss"                   # mean training loss over the last tenth of the steps
DIVERGED = "diverged (share of runs)"          # the loss or a gradient became non-finite
MARGIN = 0.05                                  # a difference in accuracy (or loss, nats) that counts


@dataclass(frozen=True)
class NormParams:
    init_layers: int = 12          # (a) depth of the stack at initialisation
    d_model: int = 64
    n_heads: int = 4
    batch_size: int = 16
    seq_len: int = 16
    vocab: int = 16
    train_layers: int = 10         # (b) depth of the trained stacks
    task: str = "order-vectors"
    steps: int = 300
    lr: float = 0.01
    warmup: int = 0
    seeds: int = 3

    def __post_init__(self) -> None:
        for name in ("init_layers", "d_model", "n_heads", "batch_size", "train_layers", "steps", "seeds"):
            whole(name, getattr(self, name))
        whole("seq_len", self.seq_len, 1, 256)
        whole("vocab", self.vocab, 2)
        whole("warmup", self.warmup, 0)
        number("lr", self.lr, 0.0, low_open=True)
        choice("task", self.task, ("order-vectors", "order"))
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")


def init_gradients(p: NormParams, norm: str, seed: int) -> tuple[list[float], list[float]]:
    """Per-block gradient norms (parameters, block inputs) of one random batch at initialisation."""
    cfg = ModelConfig(arch="encoder", src_vocab_size=p.vocab, n_classes=p.vocab, d_model=p.d_model,
                      n_heads=p.n_heads, n_encoder_layers=p.init_layers, d_ff=4 * p.d_model, norm=norm,
                      max_len=p.seq_len)
    model = build_model(cfg, seed=seed)
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, p.vocab, (p.batch_size, p.seq_len), generator=g)     # (B, T), no padding
    target = torch.randint(0, p.vocab, (p.batch_size, p.seq_len), generator=g)     # (B, T)
    at_input: dict[int, float] = {}
    x = model.encoder.embed_inputs(tokens)                                          # (B, T, d_model)
    for i, block in enumerate(model.encoder.layers):
        x.register_hook(lambda grad, i=i: at_input.__setitem__(i, float(grad.norm())))
        x = block(x, None, model.encoder.pos)
    logits = model.classifier(model.encoder.final_norm(x))                          # (B, T, vocab)
    F.cross_entropy(logits.flatten(0, 1), target.flatten()).backward()
    params = list(inspect.grad_norms(inspect.grad_groups(model)).values())
    return params, [at_input[i] for i in range(p.init_layers)]


def _init_unit(p: NormParams, seed: int, cond: str):
    params, inputs = init_gradients(p, NORMS[cond], seed)
    samples = [dict(condition=cond, seed=seed, metric=RATIO_P, value=max(params) / min(params)),
               dict(condition=cond, seed=seed, metric=RATIO_X, value=max(inputs) / min(inputs))]
    curves = [dict(condition=cond, seed=seed, step=i, metric=m, value=v)
              for m, vals in ((GRAD_P, params), (GRAD_X, inputs)) for i, v in enumerate(vals)]
    return samples, curves


def _train_unit(ctx: Context, p: NormParams, seed: int, cond: str):
    task = make_task(TASK_PRESETS[p.task].replace(seed=seed))
    cfg = task.model_config(ModelConfig(d_model=16, n_heads=4, n_encoder_layers=p.train_layers, d_ff=32,
                                        norm=NORMS[cond]))
    model = build_model(cfg, seed=seed)
    train = measuring(steps=p.steps, batch_size=64, lr=p.lr, warmup=p.warmup, schedule="constant",
                        grad_clip=0.0, weight_decay=0.0, seed=seed, eval_every=25, eval_examples=task.cfg.n_val)
    history = ctx.train(model, task, train)
    tail = [r.loss for r in history[-max(1, len(history) // 10):]]
    samples = [dict(condition=cond, seed=seed, metric="final accuracy",
                    value=final_metrics(model, task, history, task.cfg.n_val)["val_exact"]),
               dict(condition=cond, seed=seed, metric=LOSS, value=sum(tail) / len(tail)),
               dict(condition=cond, seed=seed, metric=DIVERGED, value=float(history[-1].stopped is not None))]
    return samples, history_curves(history, cond, seed, ("loss", "val_exact"))


def _measure(p: NormParams):
    def measure(table) -> tuple[str, list[Claim]]:
        (rp, sp, _), (rq, sq, _) = stat(table, PRE, RATIO_P), stat(table, POST, RATIO_P)
        (xp, xs, _), (xq, xqs, _) = stat(table, PRE, RATIO_X), stat(table, POST, RATIO_X)
        (ap, aps, _), (aq, aqs, _) = stat(table, PRE, "final accuracy"), stat(table, POST, "final accuracy")
        lp, lq = stat(table, PRE, LOSS)[0], stat(table, POST, LOSS)[0]
        dp, dq = stat(table, PRE, DIVERGED)[0], stat(table, POST, DIVERGED)[0]
        broke = f"; diverged: Pre-LN {dp:.0%}, Post-LN {dq:.0%} of runs" if dp > 0 or dq > 0 else ""
        text = (f"(a) {p.init_layers} layers at init, largest/smallest parameter-gradient norm: Pre-LN "
                f"{num(rp, sp)}, Post-LN {num(rq, sq)} (at block inputs {num(xp, xs)} vs {num(xq, xqs)}). "
                f"(b) {p.train_layers} blocks trained: Pre-LN {pct(ap, aps)}, Post-LN {pct(aq, aqs)} accuracy, "
                f"final loss {lp:.3f} vs {lq:.3f}{broke}")
        # "more stable" must show: Post-LN's loss ends clearly higher, and Pre-LN is not behind on accuracy
        return text, [
            Claim(f"(a) Post-LN's largest/smallest gradient-norm ratio across {p.init_layers} layers is larger "
                  "than Pre-LN's", RATIO_P, POST, PRE),
            Claim(f"(b) Post-LN's final training loss is higher than Pre-LN's by more than {MARGIN} nats", LOSS, POST,
                  PRE, threshold=MARGIN, unit="nats"),
            Claim(f"(b) Pre-LN's accuracy is not behind Post-LN's by more than {100 * MARGIN / 2:.1f} points",
                  "final accuracy", PRE, POST, threshold=-MARGIN / 2, unit="%")]
    return measure


def run(p: NormParams, ctx: Context) -> Result:
    def work(unit):
        (part, seed), cond = unit
        return _init_unit(p, seed, cond) if part == "init" else _train_unit(ctx, p, seed, cond)

    units = [(("init", s), c) for s, c in seed_major(p.seeds, (PRE, POST))]
    units += [(("train", s), c) for s, c in seed_major(p.seeds, (PRE, POST))]
    done = ctx.collect(units, work, lambda u: f"{u[0][0]} seed {u[0][1]}, {u[1]}")
    predictions = {(PRE, RATIO_P): (None, "closer to 1: even across depth"),
                   (POST, RATIO_P): (None, "larger: uneven across depth"),
                   (PRE, "final accuracy"): (None, "trains stably"),
                   (POST, "final accuracy"): (None, "less stable without warmup")}
    return build_result(NAME, p, done, predictions, _measure(p), ctx)


def draw(r: Result) -> list:
    out = []
    for metric, what in ((GRAD_P, "parameters of each block"), (GRAD_X, "the input of each block")):
        series, bands = curve_bands(r.curves, metric)
        out.append(line_chart(series, f"Gradient norm at initialisation: {what} (mean ± std)",
                              "layer (0 = first)", "gradient norm", log_y=True, bands=bands))
    out.append(bars(r.table, RATIO_P, "Largest / smallest gradient norm across layers (1 = even)", "ratio"))
    series, bands = curve_bands(r.curves, "loss")
    out.append(line_chart(series, "Training loss of the deep stacks (mean ± std over seeds)", "step",
                          "loss", bands=bands))
    loss = r.curves[r.curves["metric"] == "loss"]
    runs = {f"{c} · seed {s}": g.rename(columns={"value": "loss"}) for (c, s), g in loss.groupby(
        ["condition", "seed"], sort=False)}
    out.append(training_curves(runs, ("loss",), "Every run's training loss (a mean hides spikes)",
                               log_y=True))
    series, bands = curve_bands(r.curves, "val_exact")
    out.append(line_chart(series, "Test accuracy while training", "step", "accuracy", bands=bands))
    return out


NAME = "pre-post-ln"
EXPERIMENT = Experiment(
    name=NAME, title="Pre-LN vs Post-LN",
    question="Does putting LayerNorm before each sublayer keep gradients even across depth and deep "
             "stacks trainable?",
    prediction="Pre-LN keeps gradient norms roughly constant across depth at initialisation, Post-LN does "
               "not; deep Post-LN stacks train less stably without a warmup.",
    source="chapter §2.5 and exercise 2.2; notebook exercise 3",
    params=NormParams, tiny=NormParams(init_layers=6, d_model=32, steps=20, seeds=2, train_layers=2),
    run=run, figures=draw, conditions=2)

__all__ = ["NormParams", "init_gradients", "EXPERIMENT"]
