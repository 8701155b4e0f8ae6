"""A run's attention snapshots on disk: `snapshots.safetensors` beside its weights (tensors, and the kind and
token labels as JSON in the header: data, never pickle), so the heads of a saved run can be followed over
its training."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import safetensors.torch
import torch

from explorer.evaluation import AttentionSnapshot
from explorer.store import checkpoints
from explorer.store.atomic import atomic_write

SNAPSHOTS_FILE = "snapshots.safetensors"
WEIGHTS_FILE = "weights.safetensors"


def shipped_folder() -> Path:
    """Where the shipped models' replayed snapshots live (explorer.interpret.over_training.replay_snapshots),
    one folder per model."""
    return checkpoints.PRETRAINED_DIR / "snapshots"


def save_snapshots(directory, snaps: list[AttentionSnapshot]) -> Path | None:
    """Write the snapshots (one example, one kind, so one shape) into directory; None when there are none."""
    snaps = [s for s in snaps if s.pattern.shape == snaps[0].pattern.shape] if snaps else []
    if not snaps:
        return None
    path = Path(directory) / SNAPSHOTS_FILE
    tensors = {"steps": torch.tensor([s.step for s in snaps], dtype=torch.int64),
               "patterns": torch.from_numpy(np.stack([s.pattern for s in snaps]).astype(np.float16))}  # (N, L, H, Q, K)
    meta = {"kind": snaps[0].kind, "q_labels": json.dumps(list(snaps[0].q_labels)),
            "k_labels": json.dumps(list(snaps[0].k_labels))}
    return atomic_write(path, lambda tmp: safetensors.torch.save_file(tensors, tmp, metadata=meta))


def save_weights(directory, steps: list[int], embeddings: torch.Tensor, norms: list[float]) -> Path:
    """Weights over training beside the snapshots: token embeddings (N, V, d_model) and the total weight norm
    at each of `steps` (explorer.interpret.over_training.replay_snapshots keeps them for modular addition); the
    embeddings in float16, as the attention snapshots (enough for their spectrum, half the bytes)."""
    path = Path(directory) / WEIGHTS_FILE
    tensors = {"steps": torch.tensor(steps, dtype=torch.int64), "embeddings": embeddings.half(),
               "weight_norm": torch.tensor(norms, dtype=torch.float64)}
    return atomic_write(path, lambda tmp: safetensors.torch.save_file(tensors, tmp))


def load_weights(directory) -> dict[str, torch.Tensor] | None:
    """What save_weights kept in directory (steps, embeddings, weight_norm), or None."""
    path = Path(directory) / WEIGHTS_FILE
    if not path.is_file():
        return None
    with safetensors.safe_open(str(path), framework="pt") as f:
        kept = {k: f.get_tensor(k) for k in ("steps", "embeddings", "weight_norm")}
    kept["embeddings"] = kept["embeddings"].float()
    return kept


def load_snapshots(directory) -> list[AttentionSnapshot]:
    """The snapshots saved in directory, oldest first ([] when it keeps none or the file cannot be read)."""
    path = Path(directory) / SNAPSHOTS_FILE
    if not path.is_file():
        return []
    try:
        with safetensors.safe_open(str(path), framework="pt") as f:
            meta = f.metadata()
            steps, patterns = f.get_tensor("steps").tolist(), f.get_tensor("patterns").float().numpy()
        kind, q, k = meta["kind"], tuple(json.loads(meta["q_labels"])), tuple(json.loads(meta["k_labels"]))
    except Exception:  # safetensors raises its own error types for a bad file; a broken file shows nothing
        return []
    return [AttentionSnapshot(int(step), kind, pattern, q, k) for step, pattern in zip(steps, patterns)]


__all__ = ["SNAPSHOTS_FILE", "WEIGHTS_FILE", "load_snapshots", "save_snapshots", "load_weights", "save_weights"]
