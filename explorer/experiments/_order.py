"""Order detection, shared by the experiments built on the notebook's task (pe-order, heads, length).

The notebook trains one attention layer on 400 sequences of T=8 noisy vectors (D=16) where fixed
vectors A and B sit at two random positions; the label says whether A comes first. Mean pooling
discards where things were, so only positional encoding can tell the classes apart. Our model is
the library's encoder classifier (one block, mean pool, linear head), trained like the notebook:
Adam-style updates at lr 0.01, constant, no warmup, no clipping. Every seed draws its own data and
its own initial weights.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.config import ModelConfig
from explorer.experiments.base import Context, choice, final_metrics, history_curves, measuring, number, whole
from explorer.model import build_model
from explorer.tasks import TASK_PRESETS, make_task

ORDER_TASKS = ("order-vectors", "order")


@dataclass(frozen=True)
class OrderBase:
    """What the order experiments share. `task` "order-vectors" feeds vectors (the notebook);
    "order" feeds tokens A, B and digit distractors through an embedding."""

    task: str = "order-vectors"
    d_model: int = 16         # D, the vector width
    n_layers: int = 1
    n_train: int = 400
    n_val: int = 150
    steps: int = 300
    batch_size: int = 64
    lr: float = 0.01
    eval_every: int = 25
    seeds: int = 5

    def __post_init__(self) -> None:
        choice("task", self.task, ORDER_TASKS)
        for name in ("d_model", "n_layers", "n_train", "n_val", "steps", "batch_size", "seeds"):
            whole(name, getattr(self, name))
        whole("eval_every", self.eval_every, 0)
        number("lr", self.lr, 0.0, low_open=True)


@dataclass(frozen=True)
class OrderParams(OrderBase):
    """The notebook's setting: T=8, D=16, 4 heads, 400 training and 150 test sequences, 5 seeds."""

    seq_len: int = 8          # T
    n_heads: int = 4

    def __post_init__(self) -> None:
        super().__post_init__()
        whole("seq_len", self.seq_len, 2, 256)
        whole("n_heads", self.n_heads)


def order_run(ctx: Context, p: OrderBase, seed: int, condition: str, pos_encoding: str, n_heads: int,
              T: int) -> tuple[list[dict], list[dict]]:
    """Train one order-detection model; (sample rows, curve rows) for one condition and seed."""
    base = TASK_PRESETS[p.task]
    task = make_task(base.replace(min_len=T, max_len=T, n_train=p.n_train, n_val=p.n_val, seed=seed,
                                  dim=p.d_model))
    cfg = task.model_config(ModelConfig(d_model=p.d_model, n_heads=n_heads, n_encoder_layers=p.n_layers,
                                        d_ff=2 * p.d_model, pos_encoding=pos_encoding, max_len=T),
                            n_heads=n_heads)
    model = build_model(cfg, seed=seed)
    train = measuring(steps=p.steps, batch_size=p.batch_size, lr=p.lr, warmup=0, schedule="constant",
                        grad_clip=0.0, weight_decay=0.0, seed=seed, eval_every=p.eval_every,
                        eval_examples=p.n_val)
    history = ctx.train(model, task, train)
    final = final_metrics(model, task, history, p.n_val)
    samples = [dict(condition=condition, seed=seed, metric="accuracy", value=final["val_exact"]),
               dict(condition=condition, seed=seed, metric="val_loss", value=final["val_loss"])]
    curves = history_curves(history, condition, seed, ("loss", "val_exact"))
    return samples, curves


__all__ = ["ORDER_TASKS", "OrderBase", "OrderParams", "order_run"]
