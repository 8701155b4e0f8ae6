"""Shared by the experiments on the reversal task: the base parameters and one training run.

The defaults are the shipped `reversal-fast` model (d_model 32, 4 heads, 2+2 layers, sinusoidal PE,
Pre-LN), which learns to reverse 4-8 digits in a few hundred steps on one core.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import torch
from torch import nn

from explorer.config import ModelConfig
from explorer.experiments.base import Context, choice, measuring, number, whole
from explorer.model import build_model
from explorer.tasks import PAD, Batch, Task, make_task, own_data, presets
from explorer.training import StepMetrics

REVERSAL_TASKS = ("reversal-fast", "reversal-seed")
OWN_DATA = own_data.OWN   # a teacher's TSV (explorer/tasks/own_data.py), its text in the params' `data`


@dataclass(frozen=True)
class Seq2SeqBase:
    task: str = "reversal-fast"   # "reversal-seed": the chapter's 1..100, lengths 10-20 (needs far more steps)
    d_model: int = 32
    n_heads: int = 4
    n_layers: int = 2
    steps: int = 400
    batch_size: int = 64
    lr: float = 3e-3
    warmup: int = 50
    eval_every: int = 50
    eval_examples: int = 200
    seeds: int = 3
    data: str = field(default="", repr=False)   # task "pairs": the TSV's text
    takes_own_data: ClassVar[bool] = False       # True where the experiment asks nothing of reversal itself

    def __post_init__(self) -> None:
        choice("task", self.task, REVERSAL_TASKS + ((OWN_DATA,) if self.takes_own_data else ()))
        presets.preset_or_pairs(self.task, self.data)  # a refused TSV names its line
        for name in ("d_model", "n_heads", "n_layers", "steps", "batch_size", "eval_examples", "seeds"):
            whole(name, getattr(self, name))
        whole("warmup", self.warmup, 0)
        whole("eval_every", self.eval_every, 0)
        number("lr", self.lr, 0.0, low_open=True)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")


def seq2seq_task(p: Seq2SeqBase, seed: int, **changes) -> Task:
    """The run's task: a reversal preset (with `changes`), or the teacher's pairs split by `seed`."""
    return make_task(presets.preset_or_pairs(p.task, p.data, seed).replace(**changes))


def train_seq2seq(ctx: Context, p: Seq2SeqBase, task: Task, seed: int, label_smoothing: float = 0.0,
                  max_len: int | None = None, each: Callable[[nn.Module, StepMetrics], None] | None = None,
                  **model) -> tuple[nn.Module, list[StepMetrics]]:
    """Build (with `model` overriding ModelConfig fields) and train one encoder-decoder;
    `each(model, record)` runs after every step."""
    base = ModelConfig(d_model=p.d_model, n_heads=p.n_heads, n_encoder_layers=p.n_layers,
                       n_decoder_layers=p.n_layers, d_ff=2 * p.d_model, max_len=max_len or 64)
    net = build_model(task.model_config(base, **model), seed=seed)
    cfg = measuring(steps=p.steps, batch_size=p.batch_size, lr=p.lr, warmup=min(p.warmup, p.steps - 1),
                      label_smoothing=label_smoothing, seed=seed, eval_every=p.eval_every,
                      eval_examples=p.eval_examples)
    return net, ctx.train(net, task, cfg, None if each is None else lambda rec: each(net, rec))


def val_rows(task: Task, n: int) -> Batch:
    """The first n validation examples as one batch, trimmed to its longest row."""
    v = task.val
    src, tin, tout = v.src[:n], v.tgt_in[:n], v.tgt_out[:n]
    s, t = int((src != PAD).sum(1).max()), int((tout != PAD).sum(1).max())
    return Batch(src=src[:, :s], tgt_in=tin[:, :t], tgt_out=tout[:, :t])


def exact_match(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """(B,) bool: the decoded ids (greedy's format) equal the target (target + EOS, PAD after)."""
    width = max(pred.size(1), target.size(1))
    pred = nn.functional.pad(pred, (0, width - pred.size(1)), value=PAD)
    target = nn.functional.pad(target, (0, width - target.size(1)), value=PAD)
    return (pred == target).all(1)


__all__ = ["REVERSAL_TASKS", "OWN_DATA", "Seq2SeqBase", "seq2seq_task", "train_seq2seq", "val_rows",
           "exact_match"]
