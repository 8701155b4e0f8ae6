"""Gradient norms across depth at initialisation: the chapter's Pre-LN vs Post-LN exercise.

    prof = depth_profile("post", n_layers=12)
    prof.weight_grad     # (12,) ||dL/dθ|| of each block's parameters, first layer first
    prof.input_grad      # (12,) ||dL/dx|| of the residual stream entering each block
    norms, labels, steps = grad_norm_table(history)   # a run's per-block norms as (layers, steps)

One random batch goes forward through a freshly initialised encoder stack and one scalar loss
(cross-entropy of the pooled classifier against random labels) goes backward. The same seed gives
Pre-LN and Post-LN the same weights, tokens and labels, so only the LayerNorm placement differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from explorer.analysis.evidence import welch
from explorer.analysis.views import single_threaded
from explorer.config import NORMS, ModelConfig
from explorer.inspect import blocks, grad_groups, grad_norms
from explorer.model import build_model

MAX_LAYERS = 96


@dataclass(frozen=True, eq=False)
class DepthProfile:
    norm: str                        # "pre" or "post"
    layer_labels: tuple[str, ...]    # "enc 0", "enc 1", ...
    weight_grad: np.ndarray          # (L,) gradient norm of each block's parameters
    input_grad: np.ndarray           # (L,) gradient norm at each block's input
    loss: float

    @staticmethod
    def spread(values: np.ndarray) -> float:
        """Largest over smallest layer: 1 means perfectly even across depth."""
        values = np.asarray(values, dtype=float)
        return float(values.max() / max(values.min(), 1e-30))


def _check(n_layers: int, d_model: int, n_heads: int, batch_size: int, seq_len: int, norm: str) -> None:
    if norm not in NORMS:
        raise ValueError(f"norm={norm!r} is not known; choose one of {', '.join(NORMS)}")
    for name, value, low, high in (("n_layers", n_layers, 1, MAX_LAYERS), ("batch_size", batch_size, 1, 512),
                                   ("seq_len", seq_len, 1, 512), ("d_model", d_model, 2, 1024)):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"{name}={value!r} must be a whole number in {low}..{high}")


@single_threaded  # 8x faster on a busy machine: bench/README.md, the Gradients page's verdict
def depth_profile(norm: str, n_layers: int = 12, d_model: int = 64, n_heads: int = 4, d_ff: int | None = None,
                  batch_size: int = 16, seq_len: int = 16, vocab_size: int = 32, seed: int = 0) -> DepthProfile:
    """Forward and backward one random batch through a fresh `n_layers`-block encoder."""
    _check(n_layers, d_model, n_heads, batch_size, seq_len, norm)
    cfg = ModelConfig(arch="encoder", src_vocab_size=vocab_size, d_model=d_model, n_heads=n_heads,
                      n_encoder_layers=n_layers, d_ff=d_ff or 4 * d_model, norm=norm,
                      max_len=max(seq_len, 8))  # ModelConfig explains a bad head split
    model = build_model(cfg, seed=seed).train()
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, vocab_size, (batch_size, seq_len), generator=gen)   # (B, T), no padding
    labels = torch.randint(0, cfg.n_classes, (batch_size,), generator=gen)        # (B,)

    inputs: list[torch.Tensor] = []

    def keep_input(_block, args):  # the residual stream entering the block; kept for its .grad
        args[0].retain_grad()
        inputs.append(args[0])

    handles = [block.register_forward_pre_hook(keep_input) for _, block in blocks(model)]
    try:
        loss = F.cross_entropy(model(tokens), labels)
        loss.backward()
    finally:
        for h in handles:
            h.remove()
    groups = grad_groups(model)
    weight = np.array(list(grad_norms(groups).values()))
    at_input = np.array([float(x.grad.norm()) for x in inputs])
    return DepthProfile(norm, tuple(label for label, _ in groups), weight, at_input, float(loss.detach()))


@dataclass(frozen=True)
class Evenness:
    """Pre-LN against Post-LN over seeds, for one measure ("weights" or "inputs"). `pre` and `post`:
    geometric means of the spread (largest / smallest layer); `interval`: the 95% Welch interval of
    log(post spread) - log(pre spread); `holds`: True when Pre-LN is the more even (the interval above
    0), False when Post-LN is, None when the interval spans 0 (too few seeds to say)."""

    what: str
    pre: float
    post: float
    interval: tuple[float, float]
    seeds: tuple[int, ...]
    holds: bool | None


def evenness(what: str, n_layers: int = 12, d_model: int = 64, seeds=range(8)) -> Evenness:
    """Which LayerNorm placement keeps gradient norms the more even across depth, over `seeds`."""
    if what not in ("weights", "inputs"):
        raise ValueError(f"what={what!r} is not a measure; choose 'weights' or 'inputs'")
    seeds = tuple(seeds)
    logs = {norm: [np.log(DepthProfile.spread(getattr(depth_profile(norm, n_layers, d_model, seed=s),
                                                      "weight_grad" if what == "weights" else "input_grad")))
                   for s in seeds] for norm in NORMS}
    ci = welch(logs["post"], logs["pre"])
    holds = None if not (ci.low > 0 or ci.high < 0) or len(seeds) < 3 else ci.low > 0
    return Evenness(what, float(np.exp(np.mean(logs["pre"]))), float(np.exp(np.mean(logs["post"]))),
                    (float(np.exp(ci.low)), float(np.exp(ci.high))), seeds, holds)


GRAD_PREFIX = "grad_"   # StepMetrics.to_row: one grad_<block> column per block ("grad_enc_0")
TOTAL_COLUMN = "grad_norm"


def grad_norm_table(history: pd.DataFrame, max_steps: int | None = None
                    ) -> tuple[np.ndarray, list[str], list[int]]:
    """A run's per-block gradient norms as (n_blocks, n_steps), block labels and step numbers.
    Rows without gradients (a diverged last step) are dropped; `max_steps` keeps evenly spaced
    steps (the last always) so a long run still draws quickly."""
    cols = [c for c in history.columns if c.startswith(GRAD_PREFIX) and c != TOTAL_COLUMN]
    if not cols or "step" not in history.columns:
        return np.zeros((0, 0)), [], []
    rows = history[["step", *cols]].dropna()
    if max_steps is not None and len(rows) > max_steps > 1:
        keep = np.unique(np.linspace(0, len(rows) - 1, max_steps).round().astype(int))
        rows = rows.iloc[keep]
    labels = [c[len(GRAD_PREFIX):].replace("_", " ") for c in cols]
    return rows[cols].to_numpy(dtype=float).T, labels, [int(s) for s in rows["step"]]


__all__ = ["MAX_LAYERS", "DepthProfile", "depth_profile", "Evenness", "evenness", "grad_norm_table"]
