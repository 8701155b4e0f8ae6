"""Measuring a model on its task's validation data: loss and accuracies (`evaluate`), and the
attention of every layer and head on the first validation example (`snapshot`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch.nn.functional as F
from torch import nn

from explorer import inspect
from explorer.decoding import inference
from explorer.task_kinds import KINDS
from explorer.tasks import Batch, Task


@dataclass(frozen=True, eq=False)
class AttentionSnapshot:
    """Attention of every layer and head on the first validation example at one step (a seq2seq
    decoder reads the true target, as in training): cross-attention, enc_self or dec_self."""

    step: int
    kind: str                 # "cross", "enc_self" or "dec_self"
    pattern: np.ndarray       # (L, H, Q, K) float32, rows sum to 1
    q_labels: tuple[str, ...]
    k_labels: tuple[str, ...]


def evaluate(model: nn.Module, task: Task, max_examples: int = 200, batch_size: int = 100,
             exact: bool = True) -> dict:
    """val_loss (plain cross-entropy), val_token_acc (teacher forced) and val_exact: greedy-decoded
    sequence equals the target (seq2seq), accuracy (classify), next-token accuracy (lm); exact=False
    leaves it out (None): greedy decoding costs most of an evaluation. A task with `metric_parts` adds
    <part>_loss and <part>_acc for each (induction: the repeated half apart from the first)."""
    kind = KINDS[task.kind]
    loss_sum = hits = count = right = n_tok = 0.0
    parts = {name: [0.0, 0, 0] for name in task.metric_parts}   # loss sum, right, tokens
    seen = 0
    with inference(model):
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
            for name, mask in task.metric_masks(batch).items():
                losses = F.cross_entropy(logits.transpose(1, -1), target, ignore_index=ignore,
                                         reduction="none")                          # (B, T), 0 where ignored
                part = parts[name]
                part[0] += float(losses[mask].sum())
                part[1] += int(((logits.argmax(-1) == target) & mask).sum())
                part[2] += int(mask.sum())
            right += int(((logits.argmax(-1) == target) & real).sum())
            n_tok += int(real.sum())
            if exact:
                h, c = kind.exact(model, batch, logits)
                hits, count = hits + h, count + c
    n_tok = max(n_tok, 1)
    out = {"val_loss": loss_sum / n_tok, "val_token_acc": right / n_tok,
           "val_exact": hits / max(count, 1) if exact else None}
    for name, (loss, hit, n) in parts.items():
        out[f"{name}_loss"], out[f"{name}_acc"] = loss / max(n, 1), hit / max(n, 1)
    return out


def snapshot(model: nn.Module, task: Task, step: int = 0) -> AttentionSnapshot:
    """Attention of every layer on the task's first validation example."""
    kind = KINDS[task.kind]
    batch, q_labels, k_labels = kind.example(task)
    with inference(model), inspect.capture(model, kinds=(kind.attention,)) as cache:
        kind.logits(model, batch)
    pattern = cache.stacked(kind.attention)[:, 0].float().numpy()      # (L, H, Q, K)
    return AttentionSnapshot(step, kind.attention, pattern, tuple(q_labels), tuple(k_labels))


__all__ = ["AttentionSnapshot", "evaluate", "snapshot"]
