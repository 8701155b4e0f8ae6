"""The model every page looks inside, and where models come from: shipped checkpoints, runs saved on
disk, runs of this session, freshly initialised weights.

Shipped models are read-only, so one cached copy (keyed on the name) serves every session; runs and
untrained models live in this session's state only. Loaders raise `ValueError` with a readable
message, which the sidebar shows instead of a traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from dataclasses import dataclass

import pandas as pd
import streamlit as st
from torch import nn

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store import checkpoints, runs
from explorer.tasks import TASK_PRESETS, Task, TaskConfig
from ui.model_config import current_config, current_task, load_task, task_of_config
from ui.owner import owner_id

SOURCE = "model_source"           # sidebar: "pretrained" | "run" | "untrained"
PRETRAINED = "model_pretrained"   # sidebar: name of the shipped model
RUN = "model_run"                 # sidebar: name of the run
SESSION_RUNS = "session_runs"     # run name -> SelectedModel trained in this session (Train page adds)
SELECTED = "selected_model"       # the SelectedModel of this rerun, set by the sidebar
_UNTRAINED = "_untrained_model"   # (identity key, SelectedModel) of the last untrained model built
_DISK_RUNS = "_disk_runs"         # run name -> SelectedModel loaded from disk in this session
_PENDING = "_pending_selection"   # (source, name) the sidebar adopts on the next rerun (select_run)
PRIVATE = ("was trained on another visitor's own data, so only they can open it (they can share it on "
           "their Runs page)")
UNTRAINED_SEED = 0


@dataclass(frozen=True, eq=False)
class SelectedModel:
    """The model the sidebar picked. `key` names it stably ("pretrained:reversal",
    "untrained:ab12cd34"): key `st.cache_data` on it and pass the model as an `_underscored` arg."""

    model: nn.Module
    config: ModelConfig
    task: Task
    label: str
    source: str                          # "pretrained" | "run" | "untrained"
    key: str
    history: pd.DataFrame | None = None  # training metrics, for runs


def init_models() -> None:
    """Create this session's containers of runs once, and the run picker's key: a key that exists
    before the picker first draws lets Streamlit write a run chosen by code into the URL at once."""
    st.session_state.setdefault(SESSION_RUNS, {})
    st.session_state.setdefault(_DISK_RUNS, {})
    st.session_state.setdefault(RUN, None)


# ------------------------------------------------------------------------------ the selection
def _digest(*parts: dict) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:10]


def untrained_model(cfg: ModelConfig, task: Task, seed: int = UNTRAINED_SEED) -> SelectedModel:
    """Freshly initialised weights for cfg, rebuilt only when cfg, task or seed change."""
    key = "untrained:" + _digest(cfg.to_dict(), task.cfg.to_dict(), {"seed": seed})
    cached = st.session_state.get(_UNTRAINED)
    if cached is None or cached[0] != key:
        label = f"Untrained {task.name} model"
        cached = (key, SelectedModel(build_model(cfg, seed=seed), cfg, task, label, "untrained", key))
        st.session_state[_UNTRAINED] = cached
    return cached[1]


def add_session_run(name: str, model: nn.Module, config: ModelConfig, task: Task,
                    history: pd.DataFrame | None = None) -> SelectedModel:
    """Offer a model trained in this session in the sidebar's run list (newest first)."""
    run = SelectedModel(model, config, task, name, "run", f"run:{name}", history)
    runs_ = st.session_state.setdefault(SESSION_RUNS, {})
    runs_.pop(name, None)
    st.session_state[SESSION_RUNS] = {name: run, **runs_}
    return run


def forget_run(name: str) -> None:
    """Drop run `name` from this session's lists (after it was deleted, or replaced by a new save)."""
    for key in (SESSION_RUNS, _DISK_RUNS):
        with contextlib.suppress(KeyError):
            st.session_state.get(key, {}).pop(name)


def select_run(name: str) -> None:
    """Make the sidebar pick run `name` on the next rerun (call `st.rerun()` after it): the sidebar's
    widgets are already drawn when a page runs, so they cannot change in the same rerun."""
    st.session_state[_PENDING] = ("run", name)


def apply_pending_selection() -> None:
    """Called by the sidebar before it draws its widgets."""
    pending = st.session_state.pop(_PENDING, None)
    if pending is not None:
        source, name = pending
        st.session_state[SOURCE] = source
        st.session_state[RUN if source == "run" else PRETRAINED] = name


def selected_model() -> SelectedModel:
    """The model the sidebar picked for this rerun (the untrained default if none was picked)."""
    sel = st.session_state.get(SELECTED)
    if sel is None:
        cfg, _ = current_config()
        task = current_task()
        sel = untrained_model(cfg or task.model_config(), task)
    return sel


# --------------------------------------------------------------------------------- sources
def task_from(spec, fallback: Task | None = None) -> Task:
    """A task from a preset name, a TaskConfig or its dict (as checkpoints and runs store it)."""
    if isinstance(spec, Task):
        return spec
    if isinstance(spec, str) and spec in TASK_PRESETS:
        return load_task(spec)
    if isinstance(spec, TaskConfig):
        spec = spec.to_dict()
    if isinstance(spec, dict):
        for name, preset in TASK_PRESETS.items():  # share the cached copy when it is a preset
            if preset.to_dict() == {**preset.to_dict(), **spec}:
                return load_task(name)
        return task_of_config(json.dumps(spec, sort_keys=True))
    if fallback is not None:
        return fallback
    raise ValueError(f"cannot tell the task from {spec!r}; expected a preset name or a TaskConfig dict")


def _meta_task(meta: dict, entry: dict | None = None) -> Task:
    meta = meta or {}
    for spec in (meta.get("task_config"), meta.get("task"), (entry or {}).get("task")):
        if spec is not None:
            return task_from(spec)
    raise ValueError("the checkpoint does not say which task it was trained on")


def _config_of(model: nn.Module, meta: dict) -> ModelConfig:
    cfg = getattr(model, "cfg", None)
    if isinstance(cfg, ModelConfig):
        return cfg
    return ModelConfig.from_dict((meta or {})["config"])


def pretrained_entries() -> list[dict]:
    """The shipped models' manifest entries ("name", "task", "description"); [] when none."""
    try:
        return list(checkpoints.pretrained_manifest())
    except Exception as err:
        raise ValueError(f"the list of shipped models cannot be read: {err}") from err


@st.cache_resource(show_spinner="Loading the shipped model…", max_entries=8)
def _load_pretrained(name: str):
    return *checkpoints.load_pretrained(name), checkpoints.pretrained_history(name)


def load_pretrained(name: str, entry: dict | None = None) -> SelectedModel:
    try:
        model, meta, history = _load_pretrained(name)
        cfg, task = _config_of(model, meta), _meta_task(meta, entry)
    except Exception as err:
        raise ValueError(f"could not load the shipped model {name!r}: {err}") from err
    model.eval()
    return SelectedModel(model, cfg, task, name, "pretrained", f"pretrained:{name}", history)


def visible_runs() -> list[runs.RunInfo]:
    """The runs on disk this visitor may see: every run but other visitors' private ones (explorer.store.runs)."""
    try:
        return runs.visible_runs(owner_id())
    except OSError:
        return []


def is_private(name: str) -> bool:
    """Whether run `name` is on disk but private to another visitor."""
    try:
        return not runs.run_info(name).visible_to(owner_id())
    except (OSError, ValueError, KeyError):
        return False


def disk_run_names() -> list[str]:
    return [info.name for info in visible_runs()]


def run_names() -> list[str]:
    """This session's runs first (newest first), then runs saved on disk, then runs deleted from disk
    since this session loaded them: it keeps its copy, so a deletion never switches a tab's model."""
    session = list(st.session_state.get(SESSION_RUNS, {}))
    disk = [n for n in disk_run_names() if n not in session]
    return session + disk + [n for n in st.session_state.get(_DISK_RUNS, {})
                             if n not in session and n not in disk and not (runs.runs_dir() / n).is_dir()]


def deleted_since_loaded(name: str) -> bool:
    """Whether run `name` is gone from disk but this session still has the copy it loaded."""
    return name in st.session_state.get(_DISK_RUNS, {}) and not (runs.runs_dir() / name).is_dir()


def trained_models() -> dict[str, tuple[str, dict, dict]]:
    """Every trained model with a history, by key ("run:NAME", "pretrained:NAME"): (label, task dict,
    model config dict), from what the lists already hold (nothing is loaded). Runs first, newest first.
    A config saved before a field existed gets the field's default, so old and new runs compare."""
    out = {f"run:{name}": (name, sel.task.cfg.to_dict(), sel.config.to_dict())
           for name, sel in st.session_state.get(SESSION_RUNS, {}).items()}
    try:
        for info in visible_runs():
            out.setdefault(f"run:{info.name}", (info.name, info.task, _complete(info.model)))
        for e in pretrained_entries():
            out[f"pretrained:{e['name']}"] = (f"{e['name']} (shipped)", e.get("task", {}),
                                              _complete(e.get("model", {})))
    except (OSError, ValueError):
        pass  # a broken list offers what it could read
    return out


def _complete(model: dict) -> dict:
    if not model:
        return model
    return {**{f.name: f.default for f in dataclasses.fields(ModelConfig)}, **model}


def load(key: str) -> SelectedModel:
    """A trained model by its key (see trained_models)."""
    source, _, name = key.partition(":")
    return load_pretrained(name) if source == "pretrained" else load_run(name)


def load_run(name: str) -> SelectedModel:
    session = st.session_state.get(SESSION_RUNS, {})
    if name in session:
        return session[name]
    loaded = st.session_state.setdefault(_DISK_RUNS, {})
    if is_private(name):  # made private since this tab loaded it, or named by a link: never served
        loaded.pop(name, None)
        raise ValueError(f"run {name!r} {PRIVATE}")
    if name not in loaded:
        try:
            model, meta, history = runs.load_run(name)
            cfg, task = _config_of(model, meta), _meta_task(meta)
        except Exception as err:
            raise ValueError(f"could not load run {name!r}: {err}") from err
        model.eval()
        loaded[name] = SelectedModel(model, cfg, task, name, "run", f"run:{name}", history)
    return loaded[name]
