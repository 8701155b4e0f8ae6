"""Where models come from: shipped checkpoints, runs saved on disk, runs of this session.

Shipped models are read-only, so one cached copy (keyed on the name) serves every session; runs
are loaded into this session's state only. Loaders raise `ValueError` with a readable message,
which the sidebar shows instead of a traceback.
"""

from __future__ import annotations

import json

import streamlit as st
from torch import nn

from explorer import checkpoints, runs
from explorer.config import ModelConfig
from explorer.tasks import TASK_PRESETS, Task, TaskConfig
from pages.state import _DISK_RUNS, SESSION_RUNS, SelectedModel, _task_of_config, load_task


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
        return _task_of_config(json.dumps(spec, sort_keys=True))
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
    return checkpoints.load_pretrained(name)


def load_pretrained(name: str, entry: dict | None = None) -> SelectedModel:
    try:
        model, meta = _load_pretrained(name)
        cfg, task = _config_of(model, meta), _meta_task(meta, entry)
    except Exception as err:
        raise ValueError(f"could not load the shipped model {name!r}: {err}") from err
    model.eval()
    return SelectedModel(model, cfg, task, name, "pretrained", f"pretrained:{name}")


def disk_run_names() -> list[str]:
    try:
        return [getattr(info, "name", str(info)) for info in runs.list_runs()]
    except Exception:
        return []


def run_names() -> list[str]:
    """This session's runs first (newest first), then runs saved on disk."""
    session = list(st.session_state.get(SESSION_RUNS, {}))
    return session + [n for n in disk_run_names() if n not in session]


def load_run(name: str) -> SelectedModel:
    session = st.session_state.get(SESSION_RUNS, {})
    if name in session:
        return session[name]
    loaded = st.session_state.setdefault(_DISK_RUNS, {})
    if name not in loaded:
        try:
            model, meta, history = runs.load_run(name)
            cfg, task = _config_of(model, meta), _meta_task(meta)
        except Exception as err:
            raise ValueError(f"could not load run {name!r}: {err}") from err
        model.eval()
        loaded[name] = SelectedModel(model, cfg, task, name, "run", f"run:{name}", history)
    return loaded[name]
