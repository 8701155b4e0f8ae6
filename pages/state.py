"""Session state in one place: the keys, `init_state()`, and the selected model every page reads.

Config widgets write their values under `f"{prefix}_{field}"` (prefix `CFG` for the shared config);
they are bound to the URL and kept across page switches, so `current_config()` can rebuild the
config on any page, even one that does not draw the widgets. Only read-only shipped models go into
`st.cache_resource`; untrained models and runs live in `st.session_state` (one per user).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass

import pandas as pd
import streamlit as st
from torch import nn

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.tasks import ARCH_FOR_KIND, TASK_PRESETS, Task, TaskConfig, make_task

# ----------------------------------------------------------------------------- session keys
CFG = "cfg"                       # prefix of the shared config widgets: "cfg_d_model", "cfg_norm", ...
TASK = f"{CFG}_task"              # task preset the shared config is built for (Architecture, Train)
SOURCE = "model_source"           # sidebar: "pretrained" | "run" | "untrained"
PRETRAINED = "model_pretrained"   # sidebar: name of the shipped model
RUN = "model_run"                 # sidebar: name of the run
SESSION_RUNS = "session_runs"     # run name -> SelectedModel trained in this session (Train page adds)
SELECTED = "selected_model"       # the SelectedModel of this rerun, set by the sidebar
_UNTRAINED = "_untrained_model"   # (identity key, SelectedModel) of the last untrained model built
_DISK_RUNS = "_disk_runs"         # run name -> SelectedModel loaded from disk in this session
_PENDING = "_pending_selection"   # (source, name) the sidebar adopts on the next rerun (select_run)
# Widgets of one page, bound to the URL like the config: Positional encoding, Architecture.
PE_TYPE, PE_D_MODEL, PE_POSITIONS, PE_BASE = "pe_type", "pe_d_model", "pe_positions", "pe_base"
PE_STACK = "pe_stack"             # encoder or decoder table, for a model with two learned tables
ARCH_BATCH, ARCH_SEQ = "arch_batch", "arch_seq"
# Attention and Outputs pages: the input both inspect (shared, so one example follows you across them)
INSPECT_MODE, INSPECT_INDEX, INSPECT_TEXT = "inspect_mode", "inspect_index", "inspect_text"
INSPECT_TEACHER, INSPECT_PAD = "inspect_teacher", "inspect_pad"
ATT_KIND, ATT_REF = "att_kind", "att_ref"
ATT_LAYER, ATT_HEAD = "att_layer", "att_head"  # the focused head (ints; "L1" / "H2" in a shared link)
ATT_MOSAIC = "att_mosaic"         # the mosaic chart (a click on a tile's name focuses that head)
ATT_CLOSEUP = "att_closeup"       # the close-up chart, whose own slider flips heads in the browser
ATT_FOCUS_FOR = "_att_focus_for"  # (model, kind, reference) the focused head was picked for
OUT_TOP_K, OUT_BEAM, OUT_PENALTY = "out_top_k", "out_beam_k", "out_length_penalty"
OUT_NEW, OUT_TEMPERATURE, OUT_SEED = "out_new_chars", "out_temperature", "out_seed"
# Train page: the training settings (bound to the URL like the config), this session's job, the live view
TRAIN_STEPS, TRAIN_BATCH, TRAIN_LR, TRAIN_WARMUP = "train_steps", "train_batch", "train_lr", "train_warmup"
TRAIN_SCHEDULE, TRAIN_SMOOTHING, TRAIN_CLIP = "train_schedule", "train_smoothing", "train_clip"
TRAIN_SEED, TRAIN_THREADS = "train_seed", "train_threads"
JOB = "train_job"                 # this session's TrainingJob; every page's sidebar shows its progress
TRAIN_HEAD = "train_head"          # live attention: (layer, head) or "best"
TRAIN_ATTENTION = "train_attention_chart"  # its chart, whose own slider replays the snapshots of a run that ended
_JOB_DONE = "_train_job_done"     # (job, run name) already offered in the sidebar's run list
TRAIN_ERROR = "_train_error"      # why the last Train / Resume click was refused, shown once
TRAIN_FIGS = "_train_figs"        # figure name -> (what it shows, figure): the live view redraws only changes
# Gradients page: the at-initialisation study and the two runs compared over training
GRAD_LAYERS, GRAD_D_MODEL, GRAD_SEED, GRAD_WHAT = "grad_layers", "grad_d_model", "grad_seed", "grad_what"
GRAD_RUN_A, GRAD_RUN_B = "grad_run_a", "grad_run_b"
# Runs page: the table's selection, the curves shown, the run waiting for a delete confirmation
RUNS_TABLE, RUNS_METRICS, RUNS_ONLY_DIFF = "runs_table", "runs_metrics", "runs_only_diff"
RUNS_EXPORT, RUNS_DELETE, RUNS_ERROR = "runs_export", "_runs_delete", "_runs_error"
# Experiments page: the experiment shown and its budget (in the URL), its parameter widgets, this session's job
EXP_NAME, EXP_BUDGET = "exp_name", "exp_budget"
EXP_PARAM = "exp_param"           # prefix of the parameter widgets: "exp_param_pe-order_full_seeds"
EXP_JOB = "experiment_job"        # this session's ExperimentJob (one at a time)
EXP_ERROR = "_exp_error"          # why the last Run click was refused, shown once
EXP_SHOWN = "_exp_shown"          # cache key -> (file mtime, Result): a cached result is read once per session

DEFAULT_TASK = "reversal-fast"
UNTRAINED_SEED = 0

# The ModelConfig fields the config widgets edit; defaults are ModelConfig's own.
CONFIG_FIELDS = ("d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "d_ff", "pos_encoding",
                 "norm", "activation", "dropout", "max_len", "tie_embeddings")
DEFAULTS = {f.name: f.default for f in dataclasses.fields(ModelConfig) if f.name in CONFIG_FIELDS}

# Widget ranges, declared once for the widgets and for reading values off the URL.
RANGES = {"d_model": (4, 512), "n_heads": (1, 16), "n_encoder_layers": (1, 6), "n_decoder_layers": (1, 6),
          "dropout": (0.0, 0.5), "max_len": (4, 512)}
D_FF_OPTIONS = (16, 32, 64, 128, 256, 512, 1024, 2048)
PAGE_NUMBERS = {  # key -> (min, max, default) of the number inputs of one page
    PE_D_MODEL: (2, 512, 64), PE_POSITIONS: (2, 512, 100), ARCH_BATCH: (1, 4096, 32), ARCH_SEQ: (1, 8192, 64)}
PAGE_NUMBERS.update({  # Train and Gradients pages
    TRAIN_STEPS: (1, 100_000, 300), TRAIN_BATCH: (1, 1024, 64), TRAIN_LR: (1e-5, 10.0, 3e-3),
    TRAIN_WARMUP: (0, 100_000, 30), TRAIN_SMOOTHING: (0.0, 0.5, 0.0), TRAIN_CLIP: (0.0, 100.0, 1.0),
    TRAIN_SEED: (0, 2**31 - 1, 0), TRAIN_THREADS: (1, 2, 1), GRAD_LAYERS: (2, 48, 12), GRAD_SEED: (0, 9999, 0)})

# Display names of option values. A bound selection widget writes the *label* into the URL
# (?cfg_norm=Post-LN), so reading a value off the URL maps labels back to options.
PE_LABELS = {"sinusoidal": "Sinusoidal", "learned": "Learned", "rope": "RoPE", "none": "None"}
NORM_LABELS = {"pre": "Pre-LN", "post": "Post-LN"}
ACT_LABELS = {"relu": "ReLU", "gelu": "GELU", "swiglu": "SwiGLU"}
FIELD_LABELS = {"pos_encoding": PE_LABELS, "norm": NORM_LABELS, "activation": ACT_LABELS}


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


def init_state() -> None:
    """Create the session's containers once and adopt the widget values a shared link carries."""
    st.session_state.setdefault(SESSION_RUNS, {})
    st.session_state.setdefault(_DISK_RUNS, {})
    seed_from_url()


def _valid(field: str, value) -> bool:
    if field in RANGES:
        low, high = RANGES[field]
        return low <= value <= high
    if field == "d_ff":
        return value in D_FF_OPTIONS
    return field not in FIELD_LABELS or value in FIELD_LABELS[field]


def seed_from_url(prefix: str = CFG) -> None:
    """Copy a shared link's values into session state before any widget exists. Bound widgets read
    the URL themselves, but only on the page that draws them: without this a link to Home would
    build the sidebar's model from defaults. Values outside a widget's range are ignored."""
    wanted = [(f"{prefix}_{f}", DEFAULTS[f], FIELD_LABELS.get(f), lambda v, f=f: _valid(f, v))
              for f in CONFIG_FIELDS]
    wanted.append((f"{prefix}_task", DEFAULT_TASK, None, lambda v: v in TASK_PRESETS))
    wanted += [(k, d, None, lambda v, lo=lo, hi=hi: lo <= v <= hi) for k, (lo, hi, d) in PAGE_NUMBERS.items()]
    for key, default, labels, ok in wanted:
        if key in st.session_state or key not in st.query_params:
            continue
        value = _parse(st.query_params[key], default, labels)
        if value is not None and ok(value):
            st.session_state[key] = value


# ---------------------------------------------------------------------------- reading values
def _parse(text: str, default, labels: dict | None = None):
    """A URL parameter as the type of `default` (or an option of `labels`); None if it does not parse."""
    if labels:
        by_label = {label: option for option, label in labels.items()}
        return by_label.get(text, text if text in labels else None)
    try:
        if isinstance(default, bool):
            return {"true": True, "false": False}.get(text.lower())
        return type(default)(text)
    except (TypeError, ValueError):
        return None


def state_value(key: str, default):
    """A widget's value on a page that may not draw it (bound widgets keep their value across page
    switches, and `seed_from_url` adopts a shared link's), else the default."""
    return st.session_state.get(key, default)


def config_values(prefix: str = CFG) -> dict:
    return {f: state_value(f"{prefix}_{f}", DEFAULTS[f]) for f in CONFIG_FIELDS}


# ------------------------------------------------------------------------------ tasks, configs
@st.cache_resource(show_spinner="Generating the task's examples…", max_entries=16)
def load_task(preset: str) -> Task:
    """Tasks are read-only data generated from a seed, so every session can share them."""
    return make_task(preset)


@st.cache_resource(show_spinner="Generating the task's examples…", max_entries=16)
def _task_of_config(spec_json: str) -> Task:
    """A task that is not a preset (a checkpoint's own TaskConfig), keyed on its JSON."""
    return make_task(TaskConfig.from_dict(json.loads(spec_json)))


def current_task(prefix: str = CFG) -> Task:
    name = state_value(f"{prefix}_task", DEFAULT_TASK)
    return load_task(name if name in TASK_PRESETS else DEFAULT_TASK)


def vector_width(task: Task) -> int | None:
    """d_model a task forces (vector inputs have no embedding to resize), else None."""
    probe = task.model_config(ModelConfig(arch=ARCH_FOR_KIND[task.kind]))
    return probe.d_model if probe.uses_encoder and probe.src_vocab_size == 0 else None


def build_config(values: dict, task: Task) -> tuple[ModelConfig | None, str | None]:
    """Widget values + task -> (config, None), or (None, what is wrong and what is valid)."""
    fields = dict(values)
    width = vector_width(task)
    if width is not None:
        fields["d_model"] = width
    try:
        base = ModelConfig(arch=ARCH_FOR_KIND[task.kind], **fields)
        cfg = task.model_config(base, max_len=fields["max_len"])  # keep max_len: check() explains it
        task.check(cfg)
    except (TypeError, ValueError) as err:
        return None, str(err)
    return cfg, None


def current_config(prefix: str = CFG, task: Task | None = None) -> tuple[ModelConfig | None, str | None]:
    """The config the widgets under `prefix` describe, readable on every page."""
    return build_config(config_values(prefix), task or current_task(prefix))


def _digest(*parts: dict) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:10]


# ------------------------------------------------------------------------------------ models
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
    runs = st.session_state.setdefault(SESSION_RUNS, {})
    runs.pop(name, None)
    st.session_state[SESSION_RUNS] = {name: run, **runs}
    return run


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
