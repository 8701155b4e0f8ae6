"""Run history on disk: one folder per finished (or stopped) training run.

    <runs_dir>/<name>/model.safetensors   weights            (explorer.store.checkpoints)
    <runs_dir>/<name>/meta.json           task, model, train configs, final metrics
    <runs_dir>/<name>/metrics.csv         one row per step
    <runs_dir>/.names                     every name ever given to a run, one a line

Names are sanitised to [A-Za-z0-9._-] so a name can never leave the runs folder, and never given
twice: a link that names a deleted run finds nothing rather than another run.

A run records its owner in meta.json: an opaque id (the app's is a hash of a token kept in the
visitor's browser). Passing `owner=` to `delete_run` or `claim_run` acts for that owner and refuses
another's run; a run without an owner (saved by the CLI, or before runs had owners) is nobody's, so
an owner cannot change it; calls without `owner=` (the CLI, a notebook, the jobs' own bookkeeping)
act for whoever can write the folder.

A run trained on a visitor's own data (`TaskConfig.text`: an uploaded TSV, a pasted text) holds that data
in meta.json, so it is private: `visible_to(viewer)` is True only for its owner until the owner shares it
(`share_run`). The app lists and opens only the runs `visible_runs(viewer)` gives; the CLI sees them all.

A researcher keeps notes and tags on a run (`annotate_run`: its owner only, within explorer.limits'
MAX_NOTE_CHARS / MAX_TAGS; visitor text, so shown through explorer.quoting). A run a search trial saved names
its study and trial (meta "search", "trial"). Every run records its throughput: "steps_per_second" (steps over
the trainer's seconds) and "wall_seconds" (the clock from start to save, waits between steps included); a run
saved before these existed reads its throughput from its steps and duration, and its wall time as unknown.
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

from explorer.inspect import blocks
from explorer.limits import check_notes, check_tags
from explorer.store import checkpoints
from explorer.store.atomic import atomic_write
from explorer.store.checkpoints import load_checkpoint, read_meta, save_checkpoint, write_meta
from explorer.store.resume import load_state, save_state
from explorer.store.snapshots import save_snapshots
from explorer.tasks import Task, TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import StepMetrics, TrainState

MAX_NAME = 64
METRICS_FILE = "metrics.csv"
NAMES_FILE = ".names"   # hidden: run names never start with a dot


def runs_dir() -> Path:
    """$EXPLORER_RUNS_DIR, else <repo>/runs in a checkout, else ./runs (an installed explorer); created on demand."""
    checkout = Path(__file__).parents[2]
    default = checkout / "runs" if (checkout / "pyproject.toml").is_file() else Path.cwd() / "runs"
    path = Path(os.environ.get("EXPLORER_RUNS_DIR") or default)
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
    owner: str | None = None  # who may delete it (None: nobody's, see the module's docstring)
    private: bool = False     # holds its owner's own data and is not shared: only the owner sees it
    notes: str = ""           # the owner's notes (visitor text)
    tags: tuple[str, ...] = ()            # the owner's tags (visitor text)
    study: str | None = None  # the search study whose trial saved it
    trial: int | None = None  # that trial's number
    steps_per_second: float | None = None  # steps over the trainer's seconds (None: no step timed)
    wall_seconds: float | None = None      # start to save on the clock (None: saved before it was recorded)

    @property
    def own_data(self) -> bool:
        """Whether the run was trained on a visitor's own data (and carries it)."""
        return bool(self.task.get("text"))

    def visible_to(self, viewer: str | None) -> bool:
        """Whether the visitor `viewer` (an owner id) may list, open and download this run."""
        return not self.private or (self.owner is not None and self.owner == viewer)


def _final(history: list[StepMetrics], labels: tuple[str, ...]) -> dict:
    if not history:
        return {}
    row = history[-1].to_row(labels)
    for rec in reversed(history):  # validation runs only on eval steps: carry the latest forward
        if rec.val_loss is not None:
            row.update(val_loss=rec.val_loss, val_token_acc=rec.val_token_acc, val_exact=rec.val_exact)
            break
    return row


def _used_names() -> set[str]:
    try:
        return set((runs_dir() / NAMES_FILE).read_text(encoding="utf-8").split())
    except FileNotFoundError:
        return set()


def _record_name(name: str) -> None:
    """Add name to the names ever used (one short appended line: atomic between processes)."""
    with open(runs_dir() / NAMES_FILE, "a", encoding="utf-8") as f:
        f.write(name + "\n")


def name_was_used(name: str) -> bool:
    """Whether a run was ever saved under this name in this runs folder (deleted or not)."""
    try:
        _path(name)
        return True
    except FileNotFoundError:
        return name in _used_names()
    except ValueError:  # not a run name at all
        return False


def _new_folder(name: str) -> Path:
    """A fresh folder under a name never used before: name, else name-2, name-3, ... (mkdir is the
    atomic test between two savers; the names file keeps a deleted run's name from coming back)."""
    root, used = runs_dir(), _used_names()
    for i in range(1, 10_000):
        suffix = "" if i == 1 else f"-{i}"
        path = root / (name[:MAX_NAME - len(suffix)] + suffix)
        if path.name in used:
            continue
        try:
            path.mkdir()
        except FileExistsError:
            continue
        _record_name(path.name)
        return path
    raise ValueError(f"too many runs named {name!r}; pick another name")


def _rate(steps: int, seconds: float) -> float | None:
    return steps / seconds if steps > 0 and math.isfinite(seconds) and seconds > 0 else None


def wall_of(meta: dict) -> float:
    """A saved run's wall time so far, for a run that continues it (its training seconds when not recorded)."""
    wall = meta.get("wall_seconds")
    return float(wall if isinstance(wall, (int, float)) and math.isfinite(wall) else meta.get("duration") or 0.0)


def save_run(name: str, model: nn.Module, task_cfg, train_cfg, history: list[StepMetrics],
             extra: dict | None = None, owner: str | None = None, state=None, shared: bool = False,
             wall_seconds: float | None = None) -> RunInfo:
    """Save weights, configs and per-step metrics under a sanitised name never used before
    (name, else name-2, name-3, ...), owned by `owner` (None: nobody's); with the run's TrainState,
    also what resuming it needs (explorer.store.resume). A run on own data is private unless `shared`.
    `wall_seconds`: the clock from the run's start to now, as its caller timed it (default: the trainer's seconds,
    for a caller that trained without pausing)."""
    path = _new_folder(safe_name(name))
    labels = tuple(label for label, _ in blocks(model))
    last = history[-1] if history else None
    steps = (last.step - (last.stopped is not None)) if last else 0
    duration = last.elapsed if last else 0.0
    wall = duration if wall_seconds is None else max(float(wall_seconds), duration)
    meta = {**(extra or {}), **({"owner": owner} if owner else {}),
            **({"private": not shared} if task_cfg.text else {}),
            "name": path.name, "task": task_cfg.to_dict(), "train": train_cfg.to_dict(),
            "final": _final(history, labels), "steps": steps, "duration": duration,
            "steps_per_second": _rate(steps, duration), "wall_seconds": wall,
            "created": datetime.now(UTC).isoformat(timespec="milliseconds")}
    try:
        frame = pd.DataFrame([r.to_row(labels) for r in history])
        atomic_write(path / METRICS_FILE, lambda tmp: frame.to_csv(tmp, index=False))
        if state is not None:
            save_state(path, state)
        save_snapshots(path, [r.snapshot for r in history if r.snapshot is not None])  # heads over training
        save_checkpoint(path, model, meta)  # meta.json last: its presence marks a complete run
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    return _info(path)


def _number(value) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return float(value) if ok else None


def _info(path: Path) -> RunInfo:
    meta = read_meta(path)
    duration = float(meta.get("duration", 0.0))
    duration = duration if math.isfinite(duration) else 0.0
    steps = int(meta.get("steps", 0))
    tags = meta.get("tags")
    trial = meta.get("trial")
    return RunInfo(name=path.name, path=path, task=dict(meta["task"]), model=dict(meta["model"]),
                   train=dict(meta["train"]), final=dict(meta.get("final") or {}),
                   steps=steps, duration=duration,
                   created=str(meta.get("created", "")), owner=_owner(meta),
                   private=bool(meta.get("private", bool(meta["task"].get("text")))),  # older runs: by their data
                   notes=str(meta.get("notes") or ""),
                   tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
                   study=str(meta["search"]) if meta.get("search") else None,
                   trial=trial if isinstance(trial, int) and not isinstance(trial, bool) else None,
                   steps_per_second=_number(meta.get("steps_per_second")) if "steps_per_second" in meta
                   else _rate(steps, duration),   # older runs: from what they recorded
                   wall_seconds=_number(meta.get("wall_seconds")))


def _owner(meta: dict) -> str | None:
    return str(meta["owner"]) if meta.get("owner") else None


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


def visible_runs(viewer: str | None) -> list[RunInfo]:
    """The runs the visitor `viewer` may see (`RunInfo.visible_to`), newest first."""
    return [info for info in list_runs() if info.visible_to(viewer)]


def run_info(name: str) -> RunInfo:
    """What meta.json says of run `name`; ValueError for a name that is not one, FileNotFoundError if absent."""
    return _info(_path(name))


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


def _writable(path: Path) -> None:
    if path.resolve().is_relative_to(checkpoints.PRETRAINED_DIR.resolve()):
        raise PermissionError(f"{path.name!r} is a shipped model, and shipped models are read-only")


def _refuse_others(name: str, recorded: str | None, owner: str, verb: str) -> None:
    if recorded == owner:
        return
    if recorded is None:
        raise PermissionError(f"run {name!r} has no owner (it was saved from the command line, or before runs "
                              f"had owners), so the app cannot {verb} it; delete its folder on the server instead")
    raise PermissionError(f"run {name!r} belongs to another visitor: only they can {verb} it (you can still "
                          "open it and download it)")


def delete_run(name: str, owner: str | None = None) -> None:
    """Delete run `name`, acting for `owner` (see the module's docstring). Its name stays used."""
    path = _path(name)
    _writable(path)
    if owner is not None:
        _refuse_others(name, _owner(read_meta(path)), owner, "delete")
    if name not in _used_names():  # a run saved before the names file existed
        _record_name(name)
    shutil.rmtree(path)


def claim_run(name: str, owner: str) -> None:
    """Record `owner` as the owner of run `name`, which has none yet: the app's jobs save a run without
    one, and the session that started the job claims it. Another owner's run is refused."""
    if not isinstance(owner, str) or not owner:
        raise ValueError(f"owner={owner!r} must be a non-empty id")
    path = _path(name)
    _writable(path)
    meta = read_meta(path)
    recorded = _owner(meta)
    if recorded is None:
        write_meta(path, {**meta, "owner": owner})
    elif recorded != owner:
        raise PermissionError(f"run {name!r} belongs to another visitor: it cannot be claimed")


def share_run(name: str, owner: str, shared: bool) -> None:
    """The owner shares run `name` with every visitor (`shared`), or makes it private again; another
    visitor's run, or nobody's, is refused (PermissionError)."""
    path = _path(name)
    _writable(path)
    meta = read_meta(path)
    _refuse_others(name, _owner(meta), owner, "share")
    write_meta(path, {**meta, "private": not shared})


def annotate_run(name: str, notes: str | None = None, tags=None, owner: str | None = None) -> RunInfo:
    """Replace run `name`'s notes and/or tags (None: keep them), within explorer.limits, acting for `owner`
    (another visitor's run, or nobody's, is refused with PermissionError; no owner: the CLI). meta.json is
    rewritten atomically; ValueError says what is over a limit."""
    notes = None if notes is None else check_notes(notes)
    tags = None if tags is None else list(check_tags(tags))
    path = _path(name)
    _writable(path)
    meta = read_meta(path)
    if owner is not None:
        _refuse_others(name, _owner(meta), owner, "annotate")
    changed = {**({"notes": notes} if notes is not None else {}), **({"tags": tags} if tags is not None else {})}
    write_meta(path, {**meta, **changed})
    return _info(path)


__all__ = ["runs_dir", "safe_name", "RunInfo", "save_run", "annotate_run", "wall_of", "list_runs", "visible_runs",
           "run_info", "share_run", "run_folder", "load_run", "open_for_resume", "delete_run", "claim_run",
           "name_was_used"]
