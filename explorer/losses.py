"""The training loss: cross-entropy against a label-smoothed target, and the statistics of a batch
(token and sequence accuracy, output entropy) computed from the same log-probabilities."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from explorer.tasks import PAD


def _smoothed_nll(logp: Tensor, target: Tensor, eps: float, ignore_index: int | None) -> Tensor:
    """logp (N, K) log-probabilities, target (N,). Mean over the rows that are not padding."""
    if eps == 0:
        if ignore_index is not None and not bool((target != ignore_index).any()):
            return logp.sum() * 0.0  # nothing to predict: a loss of 0, as the smoothed path gives (mean: NaN)
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


def loss_and_stats(logits: Tensor, target: Tensor, eps: float, ignore: int | None) -> tuple[Tensor, Tensor]:
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


__all__ = ["label_smoothing_loss", "loss_and_stats"]
