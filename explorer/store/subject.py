"""What a report or an exported figure is about: a model with its task, recipe, history and snapshots.

`open_subject(name)` finds a shipped model (pretrained/) or a saved run (runs/) by name; the app builds
one from a model it holds (`Subject(...)`); `load_model(name)` is its model and task alone (the interpret
command's, a notebook's). Nothing here draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
from torch import nn

from explorer.evaluation import AttentionSnapshot
from explorer.store import checkpoints, snapshots
from explorer.store.checkpoints import CheckpointError, load_pretrained, pretrained_history, pretrained_manifest
from explorer.store.runs import list_runs, load_run, run_folder
from explorer.store.snapshots import load_snapshots
from explorer.tasks import Task, TaskConfig, make_task

FINAL_COLUMNS = ("step", "loss", "token_acc", "seq_acc", "val_loss", "val_token_acc", "val_exact", "elapsed")


@dataclass(frozen=True)
class Subject:
    name: str
    source: str                 # "shipped", "run" or "session" (a run the app holds in memory only)
    model: nn.Module
    task: Task
    train: dict = field(default_factory=dict)     # the recipe: TrainConfig as a dict ({} when unknown)
    final: dict = field(default_factory=dict)     # the last metrics recorded (meta.json "final"/"metrics")
    history: pd.DataFrame = field(default_factory=pd.DataFrame)   # one row per step
    snapshots: tuple[AttentionSnapshot, ...] = ()


def names() -> tuple[list[str], list[str]]:
    """(shipped model names, saved run names), each as the CLI accepts them."""
    return [e["name"] for e in pretrained_manifest()], [r.name for r in list_runs()]


def from_job(job) -> Subject:
    """A training job of the app (explorer.jobs.training.TrainingJob) as it stands: its model, recipe, history,
    snapshots."""
    history = job.history_frame()
    final = {k: v.item() if hasattr(v, "item") else v for k, v in history.iloc[-1].items()} if len(history) else {}
    return Subject(job.run_name or job.name, "session", job.model, job.task, job.train_cfg.to_dict(),
                   {k: v for k, v in final.items() if k in FINAL_COLUMNS}, history, tuple(job.snapshots()))


def open_subject(name: str) -> Subject:
    """A shipped model by its manifest name, else a saved run by its folder name (shipped names win; the
    prefixes "shipped:" and "run:" say which). ValueError says what exists."""
    shipped, _ = names()
    kind, _, bare = name.partition(":") if name.startswith(("shipped:", "run:")) else ("", "", name)
    if kind == "run":
        shipped = []
    name = bare
    try:
        if name in shipped:
            model, meta = load_pretrained(name)
            history = pretrained_history(name)
            final = meta.get("metrics") or {}
            return Subject(name, "shipped", model, make_task(TaskConfig.from_dict(meta["task"])),
                           dict(meta.get("train") or {}), dict(final) if isinstance(final, dict) else {},
                           history if history is not None else pd.DataFrame(),
                           tuple(load_snapshots(snapshots.shipped_folder() / name)))   # its replayed training
        try:
            if kind == "shipped":
                raise FileNotFoundError(name)
            folder = run_folder(name)
        except (ValueError, FileNotFoundError):
            all_shipped, saved = names()
            found = ", ".join(all_shipped) or (f"none (no {checkpoints.PRETRAINED_DIR}: set EXPLORER_PRETRAINED_DIR "
                                               "to a checkout's pretrained/ folder)")
            raise ValueError(f"no shipped model or saved run named {name!r}; shipped: {found}; "
                             f"saved runs: {', '.join(saved[:8]) or 'none'}{' …' if len(saved) > 8 else ''}") from None
        model, meta, history = load_run(name)
        return Subject(name, "run", model, make_task(TaskConfig.from_dict(meta["task"])), dict(meta.get("train") or {}),
                       dict(meta.get("final") or {}), history, tuple(load_snapshots(folder)))
    except CheckpointError as e:
        raise ValueError(str(e)) from None


def load_model(name: str) -> tuple[nn.Module, Task]:
    """(model in eval mode, its task) of a shipped model or a saved run, found as `open_subject` finds it.
    ValueError names the shipped models and saved runs there are."""
    subject = open_subject(name)
    return subject.model, subject.task


__all__ = ["Subject", "names", "open_subject", "load_model", "from_job", "FINAL_COLUMNS"]
