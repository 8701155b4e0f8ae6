"""How the models of issue 38 learned, as data: the induction and previous-token score of every head (now, or
over training from its snapshots) with the step of the phase change, and the Fourier spectrum of modular
addition's token embeddings (which frequencies carry their norm).

    induction_scores(model, task)              # DataFrame: layer, head, induction, previous_token
    induction_over_training(snaps, task)       # DataFrame: step, layer, head, induction, previous_token
    phase_change_step(history)                 # the step where the repeated half's loss falls fastest
    fourier_norms(embedding, p)                # (p // 2 + 1,) share of the embeddings' norm per frequency
    key_frequencies(norms)                     # the few frequencies that carry most of it
    spectrum_over_training(weights, p)         # DataFrame: step, frequency, share (the replay's embeddings)
    grokking_curves(history, weights)          # DataFrame: step, train_acc, val_acc, weight_norm
    how_it_learned("induction")                # a shipped model's views, from its replay and its history

Induction score: the attention a token of the repeated half (after its first) pays to the token that followed
its earlier occurrence, the pattern Olsson et al. (2022) call prefix matching. Previous-token score: the
attention to the token just before, the head an induction head reads in the layer below.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from torch import nn

from explorer import inspect
from explorer.decoding import inference
from explorer.evaluation import AttentionSnapshot
from explorer.store import checkpoints, snapshots
from explorer.store.checkpoints import HISTORY_FILE
from explorer.tasks import PAD, SPECIALS, Task, TaskConfig, make_task

LEARNING_TASKS = ("induction", "modular-add")   # the tasks how_it_learned has views for

SCORES = ("induction", "previous_token")


def _scores(pattern: torch.Tensor, tokens: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(induction, previous_token), each (L, H), from attention (L, B, H, T, T) on rows `tokens` (B, T) that
    repeat their first half (right-padded)."""
    half = ((tokens != PAD).sum(1) + 1) // 2                                  # (B,) as Induction.halves
    t = torch.arange(tokens.size(1))
    repeat = (t[None] >= half[:, None]) & (t[None] < 2 * half[:, None] - 1)   # (B, T) queries scored
    back = (t[None] - half[:, None] + 1).clamp(min=0)                        # (B, T) the key after the earlier one
    prev = (t - 1).clamp(min=0)[None].expand_as(back)
    weight = repeat.float() / repeat.sum().clamp(min=1)
    out = []
    for key in (back, prev):
        idx = key[None, :, None, :, None].expand(pattern.size(0), -1, pattern.size(2), -1, 1)
        picked = pattern.gather(-1, idx)[..., 0]                              # (L, B, H, T)
        out.append((picked * weight[None, :, None]).sum((1, 3)).numpy())
    return out[0], out[1]


def _table(induction: np.ndarray, previous: np.ndarray, **extra) -> pd.DataFrame:
    layers, heads = induction.shape
    return pd.DataFrame([dict(**extra, layer=layer, head=head, induction=float(induction[layer, head]),
                              previous_token=float(previous[layer, head]))
                         for layer in range(layers) for head in range(heads)])


def induction_scores(model: nn.Module, task: Task, max_rows: int = 200) -> pd.DataFrame:
    """Every head's induction and previous-token score on the first `max_rows` validation rows of an
    induction task (a decoder-only model)."""
    tokens = task.val.tgt_in[:max_rows]
    with inference(model), inspect.capture(model, kinds=("dec_self",)) as cache:
        model(tokens)
    return _table(*_scores(cache.stacked("dec_self"), tokens))


def induction_over_training(snaps: list[AttentionSnapshot], task: Task) -> pd.DataFrame:
    """The scores of every head at each snapshot (each holds the attention on the first validation row)."""
    tokens = task.val.tgt_in[:1]
    frames = [_table(*_scores(torch.from_numpy(s.pattern)[:, None], tokens), step=s.step) for s in snaps]
    if not frames:
        raise ValueError("no snapshots: the training recorded no attention (snapshot_every=0)")
    return pd.concat(frames, ignore_index=True)


def phase_change_step(history: pd.DataFrame, metric: str = "repeat_loss") -> int:
    """The step at which `metric` (evaluated every few steps) falls fastest: the one bend of a phase change."""
    curve = history[["step", metric]].dropna()
    if len(curve) < 2:
        raise ValueError(f"{metric} was measured at {len(curve)} step(s); a bend needs at least 2")
    drop = -curve[metric].diff() / curve["step"].diff()
    return int(curve["step"].iloc[int(np.nanargmax(drop.to_numpy()))])


def fourier_norms(embedding, p: int) -> np.ndarray:
    """The share of the squared norm of the embeddings of the integers 0..p-1 (rows of `embedding`, (p, d))
    that each frequency k = 0..p//2 carries, k and p - k together (cos and sin of 2 pi k a / p)."""
    w = torch.as_tensor(embedding, dtype=torch.float64)[:p]
    w = w - w.mean(0)                                                         # the constant part says nothing
    power = torch.fft.fft(w, dim=0).abs().square().sum(1).numpy()            # (p,)
    k = np.arange(p // 2 + 1)
    norms = power[k] + np.where((k > 0) & (k < p - k), power[(p - k) % p], 0.0)
    return norms / max(norms.sum(), 1e-30)


def key_frequencies(norms: np.ndarray, share: float = 0.8) -> list[int]:
    """The fewest frequencies (largest first) whose shares add up to `share` of the norm."""
    order = np.argsort(norms)[::-1]
    count = int(np.searchsorted(np.cumsum(norms[order]), share) + 1)
    return sorted(int(k) for k in order[:count])


def spectrum_over_training(weights: dict, p: int) -> pd.DataFrame:
    """`fourier_norms` of the token embeddings at every step a replay kept (explorer.store.snapshots.load_weights)."""
    rows = [dict(step=int(step), frequency=k, share=float(share))
            for step, emb in zip(weights["steps"].tolist(), weights["embeddings"])
            for k, share in enumerate(fourier_norms(emb[len(SPECIALS):], p))]
    return pd.DataFrame(rows)


def grokking_curves(history: pd.DataFrame, weights: dict | None = None) -> pd.DataFrame:
    """Training accuracy (the full batch, every step), validation accuracy (where evaluated) and the total weight
    norm (where a replay kept it) by step."""
    out = pd.DataFrame({"step": history["step"], "train_acc": history["token_acc"],
                        "val_acc": history["val_token_acc"]})
    if weights is not None:
        norms = pd.DataFrame({"step": weights["steps"].tolist(), "weight_norm": weights["weight_norm"].tolist()})
        out = out.merge(norms, on="step", how="left")
    return out


def how_it_learned(name: str) -> dict:
    """A shipped model of a LEARNING_TASKS task, from its history and replay (`interpret snapshots`): induction:
    heads (over training), history, phase_step, now (every head's scores); modular-add: curves, spectrum, key
    (the key frequencies at the end), p. ValueError when it has no such views or no replay."""
    entry = {e["name"]: e for e in checkpoints.pretrained_manifest()}.get(name)
    if entry is None or entry["task"]["name"] not in LEARNING_TASKS:
        raise ValueError(f"{name!r} is not a shipped model of the tasks {', '.join(LEARNING_TASKS)}")
    task = make_task(TaskConfig.from_dict(entry["task"]))
    history = pd.read_csv(checkpoints.PRETRAINED_DIR / entry["path"] / HISTORY_FILE)
    folder = snapshots.shipped_folder() / name
    replay = f"its training was not replayed: run python -m explorer interpret snapshots --model {name}"
    if task.name == "induction":
        snaps = snapshots.load_snapshots(folder)
        if not snaps:
            raise ValueError(f"{name!r}: {replay}")
        model, _ = checkpoints.load_pretrained(name)
        return {"heads": induction_over_training(snaps, task), "history": history,
                "phase_step": phase_change_step(history), "now": induction_scores(model, task)}
    weights = snapshots.load_weights(folder)
    if weights is None:
        raise ValueError(f"{name!r}: {replay}")
    p = task.cfg.n_symbols
    spectrum = spectrum_over_training(weights, p)
    last = spectrum[spectrum["step"] == spectrum["step"].max()]["share"].to_numpy()
    return {"curves": grokking_curves(history, weights), "spectrum": spectrum, "key": key_frequencies(last), "p": p}


__all__ = ["LEARNING_TASKS", "SCORES", "fourier_norms", "grokking_curves", "how_it_learned", "induction_over_training",
           "induction_scores", "key_frequencies", "phase_change_step", "spectrum_over_training"]
