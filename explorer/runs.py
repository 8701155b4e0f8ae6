"""Run history on disk: one folder per finished (or stopped) training run.

    <runs_dir>/<name>/model.safetensors   weights            (explorer.checkpoints)
    <runs_dir>/<name>/meta.json           task, model, train configs, final metrics
    <runs_dir>/<name>/metrics.csv         one row per step

Names are sanitised to [A-Za-z0-9._-] so a name can never leave the runs folder.
"""

from __future__ import annotations

import math
import os
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from torch import nn

from .checkpoints import load_checkpoint, read_meta, save_checkpoint
from .inspect import blocks
from .resume import load_state, save_state
from .tasks import Task, TaskConfig, make_task
from .train_config import TrainConfig
from .training import StepMetrics, TrainState

MAX_NAME = 64
METRICS_FILE = "metrics.csv"


def runs_dir() -> Path:
    """$EXPLORER_RUNS_DIR, else <repo>/runs; created on demand."""
    path = Path(os.environ.get("EXPLORER_RUNS_DIR") or Path(__file__).parent.parent / "runs")
    path.mkdir(parents=True, exist_ok=True)
    return path


def safe_name(text) -> str:
    """A folder name made of [A-Za-z0-9._-], no leading dot or dash, at most 64 characters."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).lstrip(".-")[:MAX_NAME].rstrip("-")
    if not name:
        raise ValueError(f"name={text!r} has no usable characters; use letters, digits, '.', '_' or '-'")
    return name


@dataclass(frozen=True)
class RunInfo:
    name: str
    path: Path
    task: dict
    model: dict
    train: dict
    final: dict       # the last step's metrics, with the latest validation metrics
    steps: int        # steps completed
    duration: float   # seconds of training
    created: str      # ISO time


def _final(history: list[StepMetrics], labels: tuple[str, ...]) -> dict:
    if not history:
        return {}
    row = history[-1].to_row(labels)
    for rec in reversed(history):  # validation runs only on eval steps: carry the latest forward
        if rec.val_loss is not None:
            row.update(val_loss=rec.val_loss, val_token_acc=rec.val_token_acc, val_exact=rec.val_exact)
            break
    return row


def _new_folder(name: str) -> Path:
    """A fresh folder: name, or name-2, name-3, ... if taken (mkdir is the atomic test)."""
    root = runs_dir()
    for i in range(1, 10_000):
        suffix = "" if i == 1 else f"-{i}"
        path = root / (name[:MAX_NAME - len(suffix)] + suffix)
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise ValueError(f"too many runs named {name!r}; pick another name")


def save_run(name: str, model: nn.Module, task_cfg, train_cfg, history: list[StepMetrics],
             extra: dict | None = None, state=None) -> RunInfo:
    """Save weights, configs and per-step metrics under a unique, sanitised name; with the run's
    TrainState, also what resuming it needs (explorer.resume)."""
    path = _new_folder(safe_name(name))
    labels = tuple(label for label, _ in blocks(model))
    last = history[-1] if history else None
    meta = {**(extra or {}), "name": path.name, "task": task_cfg.to_dict(), "train": train_cfg.to_dict(),
            "final": _final(history, labels),
            "steps": (last.step - (last.stopped is not None)) if last else 0,
            "duration": last.elapsed if last else 0.0,
            "created": datetime.now(UTC).isoformat(timespec="milliseconds")}
    try:
        pd.DataFrame([r.to_row(labels) for r in history]).to_csv(path / METRICS_FILE, index=False)
        if state is not None:
            save_state(path, state)
        save_checkpoint(path, model, meta)  # meta.json last: its presence marks a complete run
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    return _info(path)


def _info(path: Path) -> RunInfo:
    meta = read_meta(path)
    duration = float(meta.get("duration", 0.0))
    return RunInfo(name=path.name, path=path, task=dict(meta["task"]), model=dict(meta["model"]),
                   train=dict(meta["train"]), final=dict(meta.get("final") or {}),
                   steps=int(meta.get("steps", 0)), duration=duration if math.isfinite(duration) else 0.0,
                   created=str(meta.get("created", "")))


def list_runs() -> list[RunInfo]:
    """Every readable run, newest first; folders that are not runs (or are broken) are skipped."""
    out = []
    try:
        folders = [p for p in runs_dir().iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []
    for path in folders:
        try:
            out.append(_info(path))
        except Exception:  # a half-written or hand-edited folder must not break the Runs page
            continue
    return sorted(out, key=lambda r: (r.created, r.name), reverse=True)


def _path(name: str) -> Path:
    if not isinstance(name, str) or safe_name(name) != name:
        raise ValueError(f"{name!r} is not a run name; names use only [A-Za-z0-9._-] and start with "
                         "a letter, digit or '_'")
    path = runs_dir() / name
    if not path.is_dir() or path.is_symlink():
        raise FileNotFoundError(f"no run named {name!r} in {runs_dir()}")
    return path


def run_folder(name: str) -> Path:
    """The folder of run `name`; ValueError for a name that is not one, FileNotFoundError if absent."""
    return _path(name)


def load_run(name: str) -> tuple[nn.Module, dict, pd.DataFrame]:
    """(model in eval mode, meta, per-step metrics)."""
    path = _path(name)
    model, meta = load_checkpoint(path)
    metrics = path / METRICS_FILE
    try:
        frame = pd.read_csv(metrics) if metrics.is_file() else pd.DataFrame()
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame()
    return model, meta, frame


def open_for_resume(name: str) -> tuple[nn.Module, Task, TrainConfig, TrainState, dict]:
    """A saved run ready to continue: (model, task, its TrainConfig, its TrainState, meta)."""
    model, meta, _ = load_run(name)
    task = make_task(TaskConfig.from_dict(meta["task"]))
    cfg = TrainConfig.from_dict(meta["train"])
    return model, task, cfg, load_state(_path(name), model, task, cfg), meta


def delete_run(name: str) -> None:
    shutil.rmtree(_path(name))


__all__ = ["runs_dir", "safe_name", "RunInfo", "save_run", "list_runs", "run_folder", "load_run", "open_for_resume",
           "delete_run"]
