"""A run's attention snapshots on disk: `snapshots.npz` beside its weights (numpy arrays and strings only,
read without pickle), so the heads of a saved run can be followed over its training."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .evaluation import AttentionSnapshot

SNAPSHOTS_FILE = "snapshots.npz"


def save_snapshots(directory, snaps: list[AttentionSnapshot]) -> Path | None:
    """Write the snapshots (one example, one kind, so one shape) into directory; None when there are none."""
    snaps = [s for s in snaps if s.pattern.shape == snaps[0].pattern.shape] if snaps else []
    if not snaps:
        return None
    path = Path(directory) / SNAPSHOTS_FILE
    np.savez_compressed(path, steps=np.array([s.step for s in snaps], dtype=np.int64),
                        patterns=np.stack([s.pattern for s in snaps]).astype(np.float16),   # (N, L, H, Q, K)
                        kind=np.array(snaps[0].kind), q_labels=np.array(snaps[0].q_labels, dtype=str),
                        k_labels=np.array(snaps[0].k_labels, dtype=str))
    return path


def load_snapshots(directory) -> list[AttentionSnapshot]:
    """The snapshots saved in directory, oldest first ([] when it keeps none or the file cannot be read)."""
    path = Path(directory) / SNAPSHOTS_FILE
    if not path.is_file():
        return []
    try:
        with np.load(path, allow_pickle=False) as f:
            kind, q, k = str(f["kind"]), tuple(f["q_labels"].tolist()), tuple(f["k_labels"].tolist())
            return [AttentionSnapshot(int(step), kind, pattern.astype(np.float32), q, k)
                    for step, pattern in zip(f["steps"], f["patterns"])]
    except (OSError, ValueError, KeyError):
        return []


__all__ = ["SNAPSHOTS_FILE", "load_snapshots", "save_snapshots"]
