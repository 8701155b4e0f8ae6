"""Heads over training: from a run's attention snapshots (the same validation example at regular steps), each
head's entropy and its match with the pattern it should learn, step by step: when a head specialises, or
collapses.

The pattern: the task's expected cross-attention (seq2seq), the previous position for a language model's
self-attention; none for a classifier's encoder (its match is NaN).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from explorer.analysis.views import head_entropy, match_scores
from explorer.evaluation import AttentionSnapshot
from explorer.store import checkpoints, runs, shipped, snapshots
from explorer.store.checkpoints import read_meta
from explorer.store.snapshots import load_snapshots, save_snapshots, save_weights
from explorer.tasks import Task, TaskConfig, make_task

COLUMNS = ["step", "kind", "layer", "head", "entropy", "match"]


def reference(task: Task, snap: AttentionSnapshot) -> np.ndarray | None:
    """The (Q, K) pattern a head of this snapshot is measured against, or None."""
    _, _, q, k = snap.pattern.shape
    if snap.kind == "cross":
        src, _ = task.example("val", 0)   # snapshots show the first validation example (evaluation.snapshot)
        want = task.expected_cross_attention(src)
        if want is None:
            return None
        out = np.zeros((q, k))
        out[:min(q, len(want)), :min(k, want.shape[1])] = want[:q, :k]
        return out
    return np.eye(q, k, -1) if snap.kind == "dec_self" else None


WEIGHTS_OVER_TRAINING = ("modular-add",)   # tasks whose replay also keeps the token embeddings and weight norm


def replay_snapshots(name: str, every: int = 20) -> Path:
    """Train shipped model `name` again from its recipe, recording a snapshot every `every` steps, and keep them
    in snapshots.shipped_folder()/name if the replay ends with exactly the shipped weights (snapshots only read the
    model, so it does when the CPU kernels are those it was built with: explorer.store.shipped.KERNELS)."""

    r = shipped.shipped_model(name)
    weights = {"steps": [], "embeddings": [], "norms": []}

    def keep_weights(model, rec) -> None:   # modular addition's Fourier features form in the embeddings
        if rec.step % every == 0 or rec.step == 1:
            weights["steps"].append(rec.step)
            weights["embeddings"].append(model.decoder.embed.weight.detach().clone())
            weights["norms"].append(float(torch.linalg.vector_norm(torch.cat([p.detach().flatten()
                                                                             for p in model.parameters()]))))

    watch = keep_weights if r.task.name in WEIGHTS_OVER_TRAINING else None
    model, _, history = shipped.train_shipped(dataclasses.replace(r, train=r.train.replace(snapshot_every=every)),
                                              watch=watch)
    kept, _ = checkpoints.load_pretrained(name)
    ours, theirs = model.state_dict(), kept.state_dict()
    off = max(float((ours[k] - theirs[k]).abs().max()) for k in theirs)
    if off > 0:
        kernels = " ".join(f"{k}={v}" for k, v in shipped.KERNELS.items())
        raise ValueError(f"the replay of {name!r} ends {off:.2g} away from the shipped weights, so its snapshots "
                         f"are not that model's; run it with {kernels}")
    folder = snapshots.shipped_folder() / name
    folder.mkdir(parents=True, exist_ok=True)
    if watch is not None:
        save_weights(folder, weights["steps"], torch.stack(weights["embeddings"]), weights["norms"])
    return save_snapshots(folder, [h.snapshot for h in history if h.snapshot is not None])


def snapshots_of(run) -> tuple[list[AttentionSnapshot], Task]:
    """(snapshots, task) of a saved run (by name or folder) or of a shipped model whose training was replayed
    (`replay_snapshots`); ValueError when it has none to show."""
    entry = {e["name"]: e for e in checkpoints.pretrained_manifest()}.get(run) if isinstance(run, str) else None
    if entry is not None:
        snaps = load_snapshots(snapshots.shipped_folder() / run)
        if not snaps:
            raise ValueError(f"{run!r} is a shipped model whose training was not replayed; run python -m explorer "
                             f"interpret snapshots --model {run}")
        return snaps, make_task(TaskConfig.from_dict(entry["task"]))
    folder = Path(run) if isinstance(run, Path) else runs.run_folder(run)
    meta = read_meta(folder)
    snaps = load_snapshots(folder)
    if not snaps:
        raise ValueError(f"run {folder.name!r} recorded no attention snapshots; train with --snapshot-every N "
                         "(the app's Train page records them) to follow its heads over training")
    return snaps, make_task(TaskConfig.from_dict(meta["task"]))


def heads_over_training(run, task: Task | None = None) -> pd.DataFrame:
    """One row per (step, layer, head): entropy (nats, mean over the query rows) and match (0..1, NaN without
    a reference pattern). `run`: a saved run's name or folder, or a list of AttentionSnapshot with its `task`.
    `table.attrs["uniform"]`: the entropy of a head that spreads every row evenly."""
    if isinstance(run, (str, Path)):
        snaps, task = snapshots_of(run)
    else:
        snaps = list(run)
        if task is None:
            raise ValueError("heads_over_training(snapshots) needs the task they were recorded on: pass task=")
    if not snaps:
        raise ValueError("there are no snapshots to follow")
    rows = []
    ref = reference(task, snaps[0])
    for snap in snaps:
        n_l, n_h, q, _ = snap.pattern.shape
        ent = head_entropy(snap.pattern, np.ones(q, dtype=bool))                    # (L, H)
        match = match_scores(snap.pattern, ref) if ref is not None else np.full((n_l, n_h), np.nan)
        rows += [{"step": snap.step, "kind": snap.kind, "layer": layer, "head": head,
                  "entropy": float(ent[layer, head]), "match": float(match[layer, head])}
                 for layer in range(n_l) for head in range(n_h)]
    table = pd.DataFrame(rows, columns=COLUMNS)
    causal = snaps[0].kind == "dec_self"
    allowed = np.tri(*snaps[0].pattern.shape[2:]) if causal else np.ones(snaps[0].pattern.shape[2:])
    table.attrs["uniform"] = float(np.log(allowed.sum(-1)).mean())
    return table


def specialised_at(table: pd.DataFrame, threshold: float = 0.5) -> pd.DataFrame:
    """Per head, the first step its match reaches `threshold` (NaN if never): when it specialised."""
    def first(group: pd.DataFrame) -> float:
        hit = group.loc[group["match"] >= threshold, "step"]
        return float(hit.iloc[0]) if len(hit) else np.nan
    return (table.sort_values("step").groupby(["layer", "head"])[["step", "match"]].apply(first)
            .rename("step").reset_index())


__all__ = ["COLUMNS", "heads_over_training", "reference", "replay_snapshots", "snapshots_of",
           "specialised_at"]
