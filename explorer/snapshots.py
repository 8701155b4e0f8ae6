"""A run's attention snapshots on disk, so a saved run can replay how its attention formed.

    <run>/snapshots.safetensors   "pattern": (N, L, H, Q, K) float32, one row per snapshot
    <run>/snapshots.json          {"kind", "steps", "q_labels", "k_labels"}

Data, not code (safetensors + JSON, as explorer/checkpoints.py). A run trained without
`snapshot_every`, a resumed run's earlier part and the shipped models have none.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import safetensors.numpy

from .checkpoints import CheckpointError
from .evaluation import AttentionSnapshot

PATTERNS_FILE, LABELS_FILE = "snapshots.safetensors", "snapshots.json"


def save_snapshots(directory, snapshots) -> bool:
    """Write the snapshots (all of one kind and shape, as a run records them); False if there are none."""
    snaps = [s for s in snapshots if s is not None]
    if not snaps:
        return False
    directory = Path(directory)
    stack = np.stack([np.asarray(s.pattern, dtype=np.float32) for s in snaps])    # (N, L, H, Q, K)
    safetensors.numpy.save_file({"pattern": stack}, str(directory / PATTERNS_FILE))
    doc = {"kind": snaps[-1].kind, "steps": [int(s.step) for s in snaps],
           "q_labels": list(snaps[-1].q_labels), "k_labels": list(snaps[-1].k_labels)}
    (directory / LABELS_FILE).write_text(json.dumps(doc), encoding="utf-8")
    return True


def load_snapshots(directory) -> list[AttentionSnapshot]:
    """The snapshots saved in a run's folder, oldest first; [] when it has none."""
    directory = Path(directory)
    if not (directory / PATTERNS_FILE).is_file() or not (directory / LABELS_FILE).is_file():
        return []
    try:
        doc = json.loads((directory / LABELS_FILE).read_text(encoding="utf-8"))
        stack = safetensors.numpy.load_file(str(directory / PATTERNS_FILE))["pattern"]
        steps, kind = [int(s) for s in doc["steps"]], str(doc["kind"])
        q_labels, k_labels = tuple(map(str, doc["q_labels"])), tuple(map(str, doc["k_labels"]))
    except Exception as e:  # a hand-edited or truncated file: say so, never a traceback
        raise CheckpointError(f"the attention snapshots in {directory} cannot be read ({e})") from None
    if stack.ndim != 5 or len(stack) != len(steps):
        raise CheckpointError(f"the attention snapshots in {directory} do not match their steps")
    return [AttentionSnapshot(step, kind, stack[i], q_labels, k_labels) for i, step in enumerate(steps)]


__all__ = ["PATTERNS_FILE", "LABELS_FILE", "save_snapshots", "load_snapshots"]
