"""Embedding geometry: the token embeddings and the positional table as points, projected to 2-D or 3-D by
PCA (an SVD of the centred table, in numpy: no new dependency), and their cosine similarities."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch import nn

from explorer.tasks import SPECIALS, Task


@dataclass(frozen=True)
class Projection:
    """A table's rows (N, d) projected on its first principal axes: coords (N, k), the share of the variance each
    axis explains (k,), the rows' labels, and the cosine similarity of every pair of rows (N, N)."""

    name: str
    coords: np.ndarray
    explained: np.ndarray
    labels: tuple[str, ...]
    cosine: np.ndarray


def pca(table, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """(coords (N, k), explained variance ratio (k,)) of the rows of table (N, d), centred; signs fixed so each
    axis's largest coordinate is positive (an SVD's signs are arbitrary)."""
    x = np.asarray(table, dtype=np.float64)
    if x.ndim != 2 or len(x) < 2:
        raise ValueError(f"PCA needs a table of at least 2 rows (N, d); got shape {x.shape}")
    if not 1 <= k <= min(x.shape):
        raise ValueError(f"k={k} must be from 1 to {min(x.shape)} for a table of shape {x.shape}")
    x = x - x.mean(0)
    u, s, _ = np.linalg.svd(x, full_matrices=False)
    coords = u[:, :k] * s[:k]                                            # (N, k)
    sign = np.sign(coords[np.abs(coords).argmax(0), np.arange(k)])
    coords = coords * np.where(sign == 0, 1.0, sign)
    total = float((s ** 2).sum())
    return coords, (s[:k] ** 2 / total if total > 0 else np.zeros(k))


def cosine(table) -> np.ndarray:
    """Cosine similarity of every pair of rows (N, N); a zero row (the padding embedding) gives 0."""
    x = np.asarray(table, dtype=np.float64)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    unit = np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)
    return unit @ unit.T


def tables(model: nn.Module, task: Task, n_positions: int | None = None) -> dict[str, tuple[np.ndarray, tuple]]:
    """name -> (table (N, d_model), row labels): each token embedding (the specials left out, the padding row
    is zero) and each additive positional table (learned or sinusoidal) over the task's positions."""
    out = {}
    n_positions = n_positions or task.longest + 1
    seen = set()
    for name in ("encoder", "decoder"):
        where = getattr(model, name, None)
        if where is None:
            continue
        embed = where.embed
        if embed is not None and id(embed) not in seen:
            seen.add(id(embed))
            w = embed.weight.detach().numpy()[len(SPECIALS):]
            labels = tuple(task.position_labels(list(range(len(SPECIALS), len(task.vocab))))
                           if task.kind == "lm" else task.vocab[len(SPECIALS):])
            out[f"{name} tokens" if model.cfg.arch == "encoder-decoder" else "tokens"] = (w, labels[:len(w)])
        table = getattr(where.pos, "table", None)
        pe = None if table is None else table().detach().numpy()[:n_positions]
        if pe is not None and not any(np.array_equal(pe, t) for t, _ in out.values()):  # sinusoids: one table
            out[f"{name} positions" if model.cfg.pos_encoding == "learned" and model.cfg.arch == "encoder-decoder"
                else "positions"] = (pe, tuple(f"pos {i}" for i in range(len(pe))))
    return out


def embedding_geometry(model: nn.Module, task: Task, k: int = 2) -> dict[str, Projection]:
    """Every table of `tables` projected to k (2 or 3) dimensions, with its cosine similarities."""
    out = {}
    for name, (table, labels) in tables(model, task).items():
        coords, explained = pca(table, min(k, *table.shape))
        out[name] = Projection(name, coords, explained, tuple(str(t) for t in labels), cosine(table))
    return out


__all__ = ["Projection", "cosine", "embedding_geometry", "pca", "tables"]
