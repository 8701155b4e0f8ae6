"""What a saved run needs to continue as if it had never stopped: the optimizer's moments, the step
(and with it the schedule's position), the batch generator's state and the history so far.

    save_state(folder, state)                      # resume.safetensors + resume.json beside the weights
    state = load_state(folder, model, task, cfg)   # a TrainState that train_steps continues bit for bit
    payload = state_payload(state)                 # the same, as plain tensors and numbers for another process
    restore_state(state, payload)                  # ... and back, into a TrainState of the same model

Tensors go to safetensors and the rest to JSON, never pickle. Dropout needs nothing saved: the
trainer seeds it per step from the run's seed.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import safetensors.torch
from torch import nn

from explorer.store.atomic import atomic_write, write_text
from explorer.store.checkpoints import HISTORY_FILE
from explorer.tasks import Task
from explorer.train_config import TrainConfig
from explorer.training import StepMetrics, TrainState, new_state

STATE_FILE, STATE_META = "resume.safetensors", "resume.json"
GENERATOR = "generator"   # the batch generator's state, among the optimizer's tensors


def save_state(folder, state: TrainState) -> None:
    """Write the optimizer's and the batch generator's state next to a run's weights."""
    folder = Path(folder)
    opt = state.optimizer.state_dict()
    tensors = {f"{i}.{name}": value.detach().contiguous()
               for i, per_param in opt["state"].items() for name, value in per_param.items()}
    tensors[GENERATOR] = state.generator.get_state()
    atomic_write(folder / STATE_FILE, lambda tmp: safetensors.torch.save_file(tensors, tmp))
    meta = {"step": state.step, "elapsed": state.elapsed, "layer_labels": list(state.layer_labels),
            "param_groups": opt["param_groups"]}
    write_text(folder / STATE_META, json.dumps(meta, indent=2))


def can_resume(folder) -> bool:
    folder = Path(folder)
    return (folder / STATE_FILE).is_file() and (folder / STATE_META).is_file()


def _history(folder: Path, labels: tuple[str, ...]) -> list[StepMetrics]:
    """The run's StepMetrics, rebuilt from its metrics.csv (attention snapshots are not kept)."""
    path = folder / HISTORY_FILE
    if not path.is_file():
        return []
    import pandas as pd  # here, not at the top: a Ray worker restores a run without it (bench/README.md)

    frame = pd.read_csv(path)
    grads = [f"grad_{label.replace(' ', '_')}" for label in labels]

    def value(row, name):
        v = row.get(name)
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    out = []
    for row in frame.to_dict("records"):
        out.append(StepMetrics(
            step=int(row["step"]), loss=float(row["loss"]), lr=float(row["lr"]), token_acc=float(row["token_acc"]),
            seq_acc=float(row["seq_acc"]), grad_norm=float(row["grad_norm"]),
            grad_norms=tuple(float(row[g]) for g in grads), entropy=float(row["entropy"]),
            elapsed=float(row["elapsed"]), val_loss=value(row, "val_loss"),
            val_token_acc=value(row, "val_token_acc"), val_exact=value(row, "val_exact"),
            stopped=value(row, "stopped")))
    return out


def load_state(folder, model: nn.Module, task: Task, cfg: TrainConfig) -> TrainState:
    """The TrainState a run saved with `save_state`, for `model` (its weights already loaded)."""
    folder = Path(folder)
    if not can_resume(folder):
        raise ValueError(f"run {folder.name!r} was saved without what resuming needs (it predates resuming "
                         "from disk); train it again, or start a new run from its settings")
    meta = json.loads((folder / STATE_META).read_text(encoding="utf-8"))
    tensors = safetensors.torch.load_file(folder / STATE_FILE)
    state = new_state(model, task, cfg)
    per_param: dict[int, dict] = {}
    for key, value in tensors.items():
        if key != GENERATOR:
            index, name = key.split(".", 1)
            per_param.setdefault(int(index), {})[name] = value
    state.optimizer.load_state_dict({"state": per_param, "param_groups": meta["param_groups"]})
    state.generator.set_state(tensors[GENERATOR])
    state.step, state.elapsed = int(meta["step"]), float(meta["elapsed"])
    labels = tuple(meta["layer_labels"])
    state.history = [rec for rec in _history(folder, labels) if rec.stopped is None]
    if len(state.history) != state.step:
        raise ValueError(f"run {folder.name!r} has {len(state.history)} steps of history for step {state.step}; "
                         "it cannot continue exactly")
    return state



def state_payload(state: TrainState) -> dict:
    """The weights and what resuming needs (history aside), copied: sent from a worker (a search trial, a
    run on a Ray cluster) to the process that saves it."""
    return {"weights": {k: v.detach().clone() for k, v in state.model.state_dict().items()},
            "optimizer": copy.deepcopy(state.optimizer.state_dict()), "generator": state.generator.get_state(),
            "step": state.step, "elapsed": state.elapsed}


def restore_state(state: TrainState, payload: dict) -> None:
    """Load a `state_payload` into `state` (and its model) in place; the history is the caller's."""
    state.model.load_state_dict(payload["weights"])
    state.optimizer.load_state_dict(payload["optimizer"])
    state.generator.set_state(payload["generator"])
    state.step, state.elapsed = int(payload["step"]), float(payload["elapsed"])


__all__ = ["STATE_FILE", "STATE_META", "save_state", "load_state", "can_resume", "state_payload", "restore_state"]
