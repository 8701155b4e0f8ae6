"""Positional encodings: one registry, one interface.

Every encoding is a module with three methods, so the model never branches on the kind:
  `forward(x)`            adds position information to embeddings      # (B, T, d_model)
  `rotate(x, offset=0)`   rotates queries or keys inside attention     # (B, H, T, d_head)
  `bias(tq, tk)`          is added to self-attention's scores, or None # (H, Tq, Tk)
Additive encodings (sinusoidal, learned) leave `rotate` as the identity and `bias` None; RoPE only
rotates; ALiBi only biases.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from explorer.config import POS_ENCODINGS, ModelConfig


def sinusoidal_table(n_positions: int, d_model: int, base: float = 10_000.0) -> np.ndarray:
    """PE[pos, 2i] = sin(pos / base^(2i/d_model)), PE[pos, 2i+1] = cos(pos / base^(2i/d_model)).

    Works for odd d_model too: the last even dimension keeps its sine and has no cosine partner.
    """
    pos = np.arange(n_positions, dtype=np.float64)[:, None]          # (P, 1)
    dim = np.arange(d_model)
    pair = (dim - dim % 2).astype(np.float64)                         # 2i for both dims of a pair
    angle = pos / np.power(base, pair / d_model)                     # (P, d_model)
    return np.where(dim % 2 == 0, np.sin(angle), np.cos(angle))


def rope_angles(n_positions: int, d_head: int, base: float = 10_000.0) -> np.ndarray:
    """Rotation angle m * theta_i for position m and dimension pair i, theta_i = base^(-2i/d_head)."""
    theta = np.power(base, -np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    return np.arange(n_positions, dtype=np.float64)[:, None] * theta   # (P, d_head/2)


def rope_rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate consecutive pairs (x[2i], x[2i+1]) by the given angles.  x: (..., T, d_head)."""
    x1, x2 = x[..., 0::2], x[..., 1::2]                               # (..., T, d_head/2)
    out = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return out.flatten(-2)


def alibi_slopes(n_heads: int) -> np.ndarray:
    """m_h = 2^(-8h/H) for heads h = 1..H (Press et al., 2022): a geometric series from 2^(-8/H) to 1/256."""
    return np.power(2.0, -8.0 * np.arange(1, n_heads + 1) / n_heads)


def alibi_bias(n_heads: int, tq: int, tk: int) -> np.ndarray:
    """-m_h * |i - j| for query i and key j; under a causal mask that is the paper's -m_h * (i - j)."""
    distance = np.abs(np.arange(tq)[:, None] - np.arange(tk)[None, :])  # (Tq, Tk)
    return -alibi_slopes(n_heads)[:, None, None] * distance             # (H, Tq, Tk)


def alibi_attention(n_heads: int, n_positions: int) -> np.ndarray:
    """Causal attention when q·k = 0 everywhere, so the bias alone decides: softmax over keys 0..i."""
    scores = alibi_bias(n_heads, n_positions, n_positions)
    scores = np.where(np.tri(n_positions, dtype=bool), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True)                    # (H, P, P)


class NoPositionalEncoding(nn.Module):
    """No position information at all: the encoder is permutation-equivariant."""

    name, label = "none", "None"  # its ModelConfig.pos_encoding, and how the app shows it

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x

    def rotate(self, x: Tensor, offset: int = 0) -> Tensor:
        return x

    def bias(self, tq: int, tk: int) -> Tensor | None:
        return None


class SinusoidalEncoding(NoPositionalEncoding):
    """Fixed sinusoids added to the embeddings (Vaswani et al., 2017)."""

    name, label = "sinusoidal", "Sinusoidal"  # its ModelConfig.pos_encoding, and how the app shows it

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg)
        table = torch.tensor(sinusoidal_table(cfg.max_len, cfg.d_model, cfg.pe_base), dtype=torch.float32)
        self.register_buffer("pe", table, persistent=False)           # (max_len, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.pe[: x.size(1)]

    def table(self) -> Tensor:
        return self.pe


class LearnedEncoding(NoPositionalEncoding):
    """A trained embedding per position (BERT, GPT-2); cannot go past max_len."""

    name, label = "learned", "Learned"  # its ModelConfig.pos_encoding, and how the app shows it

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg)
        self.weight = nn.Parameter(nn.init.xavier_uniform_(torch.empty(cfg.max_len, cfg.d_model)))

    def forward(self, x: Tensor) -> Tensor:
        return x + self.weight[: x.size(1)]

    def table(self) -> Tensor:
        return self.weight.detach()


class RotaryEncoding(NoPositionalEncoding):
    """RoPE (Su et al., 2021): q and k are rotated in pairs of dimensions by position-dependent
    angles, so q_m . k_n depends only on m - n. Nothing is added to the embeddings."""

    name, label = "rope", "RoPE"  # its ModelConfig.pos_encoding, and how the app shows it

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg)
        angles = torch.tensor(rope_angles(cfg.max_len, cfg.d_head, cfg.pe_base), dtype=torch.float32)
        self.register_buffer("cos", angles.cos(), persistent=False)   # (max_len, d_head/2)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def rotate(self, x: Tensor, offset: int = 0) -> Tensor:
        t = x.size(-2)
        return rope_rotate(x, self.cos[offset: offset + t], self.sin[offset: offset + t])


class ALiBiEncoding(NoPositionalEncoding):
    """ALiBi (Press, Smith & Lewis, 2022, "Train Short, Test Long"): nothing is added to the embeddings;
    each self-attention head h adds -m_h * distance to its scores, so far keys fade at the head's rate.
    Cross-attention gets no bias (the model only hands `bias` to self-attention)."""

    name, label = "alibi", "ALiBi"  # its ModelConfig.pos_encoding, and how the app shows it

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg)
        slopes = torch.tensor(alibi_slopes(cfg.n_heads), dtype=torch.float32)
        self.register_buffer("slopes", slopes, persistent=False)       # (H,)

    def bias(self, tq: int, tk: int) -> Tensor:
        i = torch.arange(tq, device=self.slopes.device)[:, None]
        j = torch.arange(tk, device=self.slopes.device)[None, :]
        return -self.slopes[:, None, None] * (i - j).abs()             # (H, Tq, Tk)


POSITIONAL: dict[str, type[NoPositionalEncoding]] = {  # in the order of config.POS_ENCODINGS, its names
    cls.name: cls for cls in (SinusoidalEncoding, LearnedEncoding, RotaryEncoding, ALiBiEncoding, NoPositionalEncoding)}
if tuple(POSITIONAL) != POS_ENCODINGS:
    raise ImportError(f"explorer.positional implements {tuple(POSITIONAL)}, config.POS_ENCODINGS names {POS_ENCODINGS}")


def make_positional(cfg: ModelConfig) -> NoPositionalEncoding:
    return POSITIONAL[cfg.pos_encoding](cfg)
