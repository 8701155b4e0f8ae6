"""The trainer: a generator of frozen metric records, one per optimisation step.

    state = new_state(model, task, cfg)
    for rec in train_steps(model, task, cfg, state):   # stop iterating at any time; call again to resume
        ...

It prints nothing and knows nothing of the UI; the CLI, the app and the tests drive the same loop.
What differs between task kinds (how to run the model, what the target is, what "exact" means,
which attention a snapshot shows) lives in one small registry, `KINDS`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import inspect
from .decoding import greedy
from .tasks import BOS, EOS, PAD, Batch, Task

SCHEDULES = ("cosine", "inverse_sqrt", "constant")
BATCHING = ("random", "by-length")


def _check(name: str, value, low, below=math.inf, whole: bool = False, low_open: bool = False) -> None:
    """value >= low (> low if low_open) and < below, else a ValueError naming the field."""
    ok = isinstance(value, int if whole else (int, float)) and not isinstance(value, bool)
    ok = ok and math.isfinite(value) and (value > low if low_open else value >= low) and value < below
    if not ok:
        bounds = (f"> {low}" if low_open else f">= {low}") + ("" if below == math.inf else f" and < {below}")
        raise ValueError(f"{name}={value!r} must be {'a whole number' if whole else 'a number'} {bounds}")


@dataclass(frozen=True)
class TrainConfig:
    """How to train: optimiser (AdamW), schedule, regularisation, evaluation and snapshots."""

    steps: int = 1000
    batch_size: int = 64
    lr: float = 1e-3
    warmup: int = 100            # linear warmup steps before the schedule
    schedule: str = "cosine"     # one of SCHEDULES
    label_smoothing: float = 0.0
    grad_clip: float = 1.0       # max total gradient norm; 0 = off
    weight_decay: float = 0.01   # AdamW, on matrices only
    beta1: float = 0.9
    beta2: float = 0.98          # Vaswani et al.
    seed: int = 0                # batches, dropout, and (by convention) the model's initial weights
    eval_every: int = 100        # 0 = only at the last step
    eval_examples: int = 200
    snapshot_every: int = 0      # 0 = off
    threads: int = 1
    spike_nats: float = 2.0      # stop when a loss exceeds the first step's by this many nats; 0 = off
    batching: str = "random"     # one of BATCHING; "by-length": each batch from one range of lengths (less padding)

    def __post_init__(self) -> None:
        for name, low in (("steps", 1), ("batch_size", 1), ("warmup", 0), ("seed", 0), ("eval_every", 0),
                          ("eval_examples", 1), ("snapshot_every", 0), ("threads", 1)):
            _check(name, getattr(self, name), low, whole=True)
        _check("lr", self.lr, 0, low_open=True)
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule={self.schedule!r} is not known; choose one of {', '.join(SCHEDULES)}")
        if self.batching not in BATCHING:
            raise ValueError(f"batching={self.batching!r} is not known; choose one of {', '.join(BATCHING)}")
        for name, below in (("label_smoothing", 1), ("grad_clip", math.inf), ("weight_decay", math.inf),
                            ("beta1", 1), ("beta2", 1), ("spike_nats", math.inf)):
            _check(name, getattr(self, name), 0, below)

    def replace(self, **changes) -> TrainConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TrainConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown TrainConfig fields {unknown}; valid: {sorted(known)}")
        return cls(**data)


@dataclass(frozen=True, eq=False)
class AttentionSnapshot:
    """Attention of every layer and head on the first validation example at one step (a seq2seq
    decoder reads the true target, as in training): cross-attention, enc_self or dec_self."""

    step: int
    kind: str                 # "cross", "enc_self" or "dec_self"
    pattern: np.ndarray       # (L, H, Q, K) float32, rows sum to 1
    q_labels: tuple[str, ...]
    k_labels: tuple[str, ...]


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

    def to_row(self, labels: tuple[str, ...] | None = None) -> dict:
        """Flat dict for a DataFrame; per-block gradient norms become grad_<label> columns."""
        row = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("grad_norms", "snapshot")}
        labels = labels or tuple(str(i) for i in range(len(self.grad_norms)))
        row.update({f"grad_{label.replace(' ', '_')}": g for label, g in zip(labels, self.grad_norms)})
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


# ---------------------------------------------------------------------------------------------
# Loss and schedule
# ---------------------------------------------------------------------------------------------

def _smoothed_nll(logp: Tensor, target: Tensor, eps: float, ignore_index: int | None) -> Tensor:
    """logp (N, K) log-probabilities, target (N,). Mean over the rows that are not padding."""
    if eps == 0:
        return F.nll_loss(logp, target, ignore_index=-100 if ignore_index is None else ignore_index)
    k = logp.size(-1)
    gold = logp.gather(-1, target[:, None]).squeeze(-1)                 # (N,)
    rest = logp.sum(-1) - gold                                          # log-probs of the other classes
    others = k - 1
    if ignore_index is not None:  # padding gets no probability mass
        rest, others = rest - logp[:, ignore_index], k - 2
    if others < 1:
        raise ValueError(f"label smoothing needs at least one class besides the gold one (K={k})")
    per_row = -(1 - eps) * gold - eps / others * rest                   # (N,)
    if ignore_index is None:
        return per_row.mean()
    keep = (target != ignore_index).to(per_row.dtype)
    return (per_row * keep).sum() / keep.sum().clamp_min(1)


def label_smoothing_loss(logits: Tensor, target: Tensor, eps: float, ignore_index: int | None = PAD) -> Tensor:
    """Cross-entropy against the chapter's smoothed target: 1 - eps on the gold class and eps / (K - 2)
    on every other class except padding (eps / (K - 1) when nothing is padding). logits (..., K)."""
    logp = logits.reshape(-1, logits.size(-1)).log_softmax(-1)
    return _smoothed_nll(logp, target.reshape(-1), eps, ignore_index)


_SCHEDULE: dict[str, Callable[[int, TrainConfig], float]] = {
    "constant": lambda s, c: 1.0,
    "cosine": lambda s, c: 0.5 * (1 + math.cos(math.pi * min(1.0, (s - c.warmup) / max(1, c.steps - c.warmup)))),
    "inverse_sqrt": lambda s, c: math.sqrt(max(c.warmup, 1) / (s + 1)),
}


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate of update `step` (0-based): linear warmup, then the schedule."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    return cfg.lr * _SCHEDULE[cfg.schedule](step, cfg)


# ---------------------------------------------------------------------------------------------
# What differs per task kind
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Kind:
    attention: str                                      # what a snapshot shows
    logits: Callable[[nn.Module, Batch], Tensor]        # (B, T, V); a classifier gets T = 1
    target: Callable[[Batch], Tensor]                   # (B, T)
    ignore_index: int | None
    exact: Callable[[nn.Module, Batch, Tensor], tuple[int, int]]   # (hits, count) for val_exact
    example: Callable[[Task], tuple[Batch, list[str], list[str]]]  # snapshot input, q and k labels


def _greedy_exact(model: nn.Module, batch: Batch, logits: Tensor) -> tuple[int, int]:
    target = batch.tgt_out                                              # (B, T): target, EOS, PAD...
    pred = greedy(model, batch.src, max_len=target.size(1))
    pred = F.pad(pred, (0, target.size(1) - pred.size(1)), value=PAD)
    return int((pred == target).all(1).sum()), len(target)


def _label_exact(model, batch, logits) -> tuple[int, int]:
    return int((logits[:, 0].argmax(-1) == batch.label).sum()), len(batch.label)


def _token_exact(model, batch, logits) -> tuple[int, int]:
    real = batch.tgt_out != PAD
    return int(((logits.argmax(-1) == batch.tgt_out) & real).sum()), int(real.sum())


def _seq2seq_example(task: Task):
    src, tgt = task.example("val", 0)
    batch = Batch(src=torch.tensor([src]), tgt_in=torch.tensor([[BOS] + tgt]), tgt_out=torch.tensor([tgt + [EOS]]))
    return batch, task.tokens([BOS] + tgt), task.position_labels(src)


def _classify_example(task: Task):
    src, label = task.example("val", 0)
    x = torch.tensor([src], dtype=task.val.src.dtype)  # token ids, or vectors (order-vectors)
    labels = task.position_labels(src)
    return Batch(src=x, label=torch.tensor(label)), labels, labels


def _lm_example(task: Task):
    tokens, nxt = task.example("val", 0)
    labels = task.position_labels(tokens)
    return Batch(tgt_in=torch.tensor([tokens]), tgt_out=torch.tensor([nxt])), labels, labels


KINDS: dict[str, _Kind] = {
    "seq2seq": _Kind("cross", lambda m, b: m(b.src, b.tgt_in), lambda b: b.tgt_out, PAD,
                     _greedy_exact, _seq2seq_example),
    "classify": _Kind("enc_self", lambda m, b: m(b.src)[:, None], lambda b: b.label[:, None], None,
                      _label_exact, _classify_example),
    "lm": _Kind("dec_self", lambda m, b: m(b.tgt_in), lambda b: b.tgt_out, PAD,
                _token_exact, _lm_example),
}


def _loss_and_stats(logits: Tensor, target: Tensor, eps: float, ignore: int | None) -> tuple[Tensor, Tensor]:
    """Loss with grad, and (loss, token_acc, seq_acc, entropy) as one detached tensor."""
    logp = logits.log_softmax(-1)                                       # (B, T, V)
    loss = _smoothed_nll(logp.flatten(0, -2), target.flatten(), eps, ignore)
    with torch.no_grad():
        real = torch.ones_like(target, dtype=torch.bool) if ignore is None else target != ignore  # (B, T)
        n = real.sum().clamp_min(1)
        right = (logp.argmax(-1) == target) & real
        ent = -(logp.exp() * logp).sum(-1)                              # (B, T)
        stats = torch.stack([loss.detach(), right.sum() / n, (right | ~real).all(1).float().mean(),
                             (ent * real).sum() / n])
    return loss, stats


# ---------------------------------------------------------------------------------------------
# Evaluation and snapshots
# ---------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _eval_mode(model: nn.Module):
    was = model.training
    model.eval()
    try:
        with torch.inference_mode():
            yield
    finally:
        model.train(was)


def evaluate(model: nn.Module, task: Task, max_examples: int = 200, batch_size: int = 100,
             exact: bool = True) -> dict:
    """val_loss (plain cross-entropy), val_token_acc (teacher forced) and val_exact: greedy-decoded
    sequence equals the target (seq2seq), accuracy (classify), next-token accuracy (lm); exact=False
    leaves it out (None): greedy decoding costs most of an evaluation."""
    kind = KINDS[task.kind]
    loss_sum = hits = count = right = n_tok = 0.0
    seen = 0
    with _eval_mode(model):
        for batch in task.iter_val(batch_size):
            if seen >= max_examples:
                break
            take = min(len(batch), max_examples - seen)
            batch = Batch(*(None if t is None else t[:take] for t in dataclasses.astuple(batch)))
            seen += take
            logits, target = kind.logits(model, batch), kind.target(batch)
            ignore = -100 if kind.ignore_index is None else kind.ignore_index
            loss_sum += float(F.cross_entropy(logits.flatten(0, -2), target.flatten(),
                                              ignore_index=ignore, reduction="sum"))
            real = target != ignore
            right += int(((logits.argmax(-1) == target) & real).sum())
            n_tok += int(real.sum())
            if exact:
                h, c = kind.exact(model, batch, logits)
                hits, count = hits + h, count + c
    n_tok = max(n_tok, 1)
    return {"val_loss": loss_sum / n_tok, "val_token_acc": right / n_tok,
            "val_exact": hits / max(count, 1) if exact else None}


def snapshot(model: nn.Module, task: Task, step: int = 0) -> AttentionSnapshot:
    """Attention of every layer on the task's first validation example."""
    kind = KINDS[task.kind]
    batch, q_labels, k_labels = kind.example(task)
    with _eval_mode(model), inspect.capture(model, kinds=(kind.attention,)) as cache:
        kind.logits(model, batch)
    pattern = cache.stacked(kind.attention)[:, 0].float().numpy()      # (L, H, Q, K)
    return AttentionSnapshot(step, kind.attention, pattern, tuple(q_labels), tuple(k_labels))


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------

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
    model.train()
    while state.step < cfg.steps:
        start, step, lr = time.perf_counter(), state.step + 1, lr_at(state.step, cfg)
        batch = task.sample(cfg.batch_size, state.generator, by_length=by_length)
        with _dropout_rng(model, cfg.seed, step):
            logits = kind.logits(model, batch)
        loss, stats = _loss_and_stats(logits, kind.target(batch), cfg.label_smoothing, kind.ignore_index)
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
                              stopped=f"diverged: {problem} at step {step}; kept the weights of step {step - 1}")
            state.history.append(rec)
            yield rec
            return
        state.step = step
        extra = {}
        if step == cfg.steps or (cfg.eval_every and step % cfg.eval_every == 0):
            extra = evaluate(model, task, cfg.eval_examples)
        if cfg.snapshot_every and step % cfg.snapshot_every == 0:
            extra["snapshot"] = snapshot(model, task, step)
        state.elapsed += time.perf_counter() - start
        rec = StepMetrics(step, loss_v, lr, token_acc, seq_acc, total, tuple(norms), ent, state.elapsed, **extra)
        state.history.append(rec)
        yield rec


__all__ = ["SCHEDULES", "BATCHING", "TrainConfig", "StepMetrics", "AttentionSnapshot", "TrainState", "KINDS",
           "new_state", "train_steps", "label_smoothing_loss", "evaluate", "snapshot", "lr_at"]
