"""What differs between task kinds (seq2seq, classify, lm) for training and evaluation: how to run the
model, what the target is, what "exact" means and which attention a snapshot shows. One registry, `KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from explorer.decoding import greedy
from explorer.tasks import BOS, EOS, PAD, Batch, Task


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


__all__ = ["KINDS"]
