"""The trainer: a generator of frozen metric records, one per optimisation step.

    state = new_state(model, task, cfg)
    for rec in train_steps(model, task, cfg, state):   # stop iterating at any time; call again to resume
        ...

It prints nothing and knows nothing of the UI; the CLI, the app and the tests drive the same loop.
What differs between task kinds lives in `task_kinds.KINDS`; the loss in `losses`, validation and
attention snapshots in `evaluation`, the config and its schedule in `train_config`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from explorer import inspect
from explorer.evaluation import AttentionSnapshot, evaluate, snapshot
from explorer.losses import loss_and_stats
from explorer.task_kinds import KINDS
from explorer.tasks import Task
from explorer.train_config import TrainConfig, lr_at


@dataclass(frozen=True)
class StepMetrics:
    step: int
    loss: float               # training loss (label-smoothed if asked), teacher forced
    lr: float
    token_acc: float
    seq_acc: float
    grad_norm: float          # total, before clipping
    grad_norms: tuple[float, ...]   # per block, labels in TrainState.layer_labels
    entropy: float            # mean entropy (nats) of the output softmax at real target positions
    elapsed: float            # seconds spent training so far, across resumes
    val_loss: float | None = None   # plain cross-entropy on validation data
    val_token_acc: float | None = None
    val_exact: float | None = None
    snapshot: AttentionSnapshot | None = None
    stopped: str | None = None
    parts: tuple[tuple[str, float | None], ...] = ()   # the task's metric_parts measured: ("repeat_acc", 0.9)...

    def to_row(self, labels: tuple[str, ...] | None = None) -> dict:
        """Flat dict for a DataFrame; per-block gradient norms become grad_<label> columns, parts their own."""
        row = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("grad_norms", "snapshot", "parts")}
        labels = labels or tuple(str(i) for i in range(len(self.grad_norms)))
        row.update({f"grad_{label.replace(' ', '_')}": g for label, g in zip(labels, self.grad_norms)})
        row.update(dict(self.parts))
        return row


@dataclass
class TrainState:
    """Everything a resumed run needs; train_steps mutates it in place."""

    model: nn.Module
    optimizer: torch.optim.Optimizer
    step: int
    generator: torch.Generator
    elapsed: float
    layer_labels: tuple[str, ...]
    history: list[StepMetrics] = field(default_factory=list)


def new_state(model: nn.Module, task: Task, cfg: TrainConfig) -> TrainState:
    task.check(model.cfg)
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]  # biases, norms
    optimizer = torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), fused=True)
    labels = tuple(label for label, _ in inspect.blocks(model))
    return TrainState(model, optimizer, 0, torch.Generator().manual_seed(cfg.seed), 0.0, labels, [])


@contextlib.contextmanager
def _dropout_rng(model: nn.Module, seed: int, step: int):
    """Dropout draws from the global RNG: seed it per step so a resumed run repeats a straight one,
    and leave the caller's RNG as it was."""
    if not model.cfg.dropout:
        yield
        return
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed((seed * 1_000_003 + step) % 2**63)
        yield


class _GradNorms:
    """Per-parameter gradient norms in one foreach call, from which come the per-block norms, the total
    norm and the clipping factor, computed as torch.nn.utils.clip_grad_norm_ does (same numbers)."""

    def __init__(self, model: nn.Module, params: list[nn.Parameter]) -> None:
        self.params = params
        owner = {id(p): i for i, (_, ps) in enumerate(inspect.grad_groups(model)) for p in ps}
        self.n_groups = len(set(owner.values()))
        self.owner = [owner.get(id(p), self.n_groups) for p in params]   # the last slot: outside any block
        self.all_owners = torch.tensor(self.owner, dtype=torch.long)

    def __call__(self, clip: float) -> tuple[Tensor, Tensor]:
        """(total norm before clipping, per-block norms); clips the gradients in place when clip > 0."""
        have = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not have:
            return torch.zeros(()), torch.zeros(self.n_groups)
        grads = [self.params[i].grad for i in have]
        norms = torch.stack(torch._foreach_norm(grads))                  # (P,)
        total = torch.linalg.vector_norm(norms)
        if clip:
            torch._foreach_mul_(grads, torch.clamp(clip / (total + 1e-6), max=1.0))
        owner = self.all_owners if len(have) == len(self.params) else torch.tensor([self.owner[i] for i in have])
        per_block = torch.zeros(self.n_groups + 1).index_add_(0, owner, norms.square())[:-1].sqrt()
        return total, per_block


def _all_finite(tensors: list[Tensor]) -> bool:
    return bool(torch.stack(torch._foreach_norm(tensors)).isfinite().all())


def _problem(loss: float, first: float, total: float, spike_nats: float) -> str | None:
    if not math.isfinite(loss):
        return f"loss is {loss}"
    if spike_nats and loss > first + spike_nats:
        # Far worse than the untrained model it started from: the run has blown up (Post-LN
        # with a large learning rate does this) even while every number stays finite.
        return f"loss {loss:.3g} is more than {spike_nats:g} nats above the first step's {first:.3g}"
    if not math.isfinite(total):
        return f"gradient norm is {total}"
    return None


def train_steps(model: nn.Module, task: Task, cfg: TrainConfig,
                state: TrainState | None = None) -> Iterator[StepMetrics]:
    """One record per step until state.step == cfg.steps. A non-finite loss, gradient or update is
    not applied: a last record says so in `stopped` and the weights stay the last finite ones."""
    torch.set_num_threads(cfg.threads)
    state = state or new_state(model, task, cfg)
    kind = KINDS[task.kind]
    params = [p for p in model.parameters() if p.requires_grad]
    grad_norms = _GradNorms(model, params)
    weights = [p.detach() for p in params]
    backup = [w.clone() for w in weights]
    by_length = cfg.batching == "by-length"
    part_keys = tuple(f"{name}_{what}" for name in task.metric_parts for what in ("loss", "acc"))
    model.train()
    while state.step < cfg.steps:
        start, step, lr = time.perf_counter(), state.step + 1, lr_at(state.step, cfg)
        batch = task.sample(cfg.batch_size, state.generator, by_length=by_length)
        with _dropout_rng(model, cfg.seed, step):
            logits = kind.logits(model, batch)
        loss, stats = loss_and_stats(logits, kind.target(batch), cfg.label_smoothing, kind.ignore_index)
        state.optimizer.zero_grad(set_to_none=True)
        loss.backward()   # also for a bad loss: its gradient is dropped below, never applied
        total, per_block = grad_norms(cfg.grad_clip)
        # the step's only read of tensor values: loss, accuracies, entropy and gradient norms together
        loss_v, token_acc, seq_acc, ent, total, *norms = torch.cat([stats, total[None], per_block]).tolist()
        first = state.history[0].loss if state.history else loss_v
        problem = _problem(loss_v, first, total, cfg.spike_nats)
        if problem is None:
            for g in state.optimizer.param_groups:
                g["lr"] = lr
            torch._foreach_copy_(backup, weights)
            state.optimizer.step()
            if not _all_finite(weights):
                torch._foreach_copy_(weights, backup)
                problem = "the update made a weight non-finite"
        if problem is not None:
            state.optimizer.zero_grad(set_to_none=True)
            state.elapsed += time.perf_counter() - start
            rec = StepMetrics(step, loss_v, lr, token_acc, seq_acc, total, tuple(norms), ent, state.elapsed,
                              stopped=f"diverged: {problem} at step {step}; kept the weights of step {step - 1}",
                              parts=tuple((key, None) for key in part_keys))
            state.history.append(rec)
            yield rec
            return
        state.step = step
        extra = {}
        if step == cfg.steps or (cfg.eval_every and step % cfg.eval_every == 0):
            extra = evaluate(model, task, cfg.eval_examples)
        # every record names the same parts (None between evaluations), so the history stays one table
        extra["parts"] = tuple((key, extra.pop(key, None)) for key in part_keys)
        if cfg.snapshot_every and step % cfg.snapshot_every == 0:
            extra["snapshot"] = snapshot(model, task, step)
        state.elapsed += time.perf_counter() - start
        rec = StepMetrics(step, loss_v, lr, token_acc, seq_acc, total, tuple(norms), ent, state.elapsed, **extra)
        state.history.append(rec)
        yield rec


__all__ = ["StepMetrics", "TrainState", "new_state", "train_steps"]
