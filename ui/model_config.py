"""The model config the widgets describe, readable on every page.

Config widgets write their values under `f"{prefix}_{field}"` (prefix `CFG` for the shared config);
they are bound to the URL and kept across page switches, so `current_config()` rebuilds the config on
any page, even one that does not draw the widgets (ui/widgets.py draws them).
"""

from __future__ import annotations

import dataclasses
import json

import streamlit as st

from explorer.config import ModelConfig
from explorer.limits import CAPS
from explorer.positional import POSITIONAL
from explorer.tasks import ARCH_FOR_KIND, TASK_PRESETS, Task, TaskConfig, make_task
from ui.links import UrlSpec, state_value

CFG = "cfg"                       # prefix of the shared config widgets: "cfg_d_model", "cfg_norm", ...
TASK = f"{CFG}_task"              # task preset the shared config is built for (Architecture, Train)
DEFAULT_TASK = "reversal-fast"

# The ModelConfig fields the config widgets edit; defaults are ModelConfig's own.
CONFIG_FIELDS = ("d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "d_ff", "pos_encoding",
                 "norm", "residual", "attn_scale", "activation", "dropout", "max_len", "tie_embeddings")
DEFAULTS = {f.name: f.default for f in dataclasses.fields(ModelConfig) if f.name in CONFIG_FIELDS}

# Widget ranges, declared once for the widgets and for reading values off the URL; the tops are the caps
# every path shares (explorer/limits.py).
LOWEST = {"d_model": 4, "n_heads": 1, "n_encoder_layers": 1, "n_decoder_layers": 1, "max_len": 4}
RANGES = {**{f: (low, CAPS[f]) for f, low in LOWEST.items()}, "dropout": (0.0, 0.5)}
D_FF_OPTIONS = tuple(2**k for k in range(4, CAPS["d_ff"].bit_length()))   # 16, 32, ... up to the cap

# Display names of option values (also what a bound selection widget writes into the URL).
PE_LABELS = {name: cls.label for name, cls in POSITIONAL.items()}
NORM_LABELS = {"pre": "Pre-LN", "post": "Post-LN"}
ACT_LABELS = {"relu": "ReLU", "gelu": "GELU", "swiglu": "SwiGLU"}
RESIDUAL_LABELS = {"add": "On", "none": "Off"}
SCALE_LABELS = {"sqrt_d_k": "÷ √d_k", "none": "None"}
FIELD_LABELS = {"pos_encoding": PE_LABELS, "norm": NORM_LABELS, "activation": ACT_LABELS,
                "residual": RESIDUAL_LABELS, "attn_scale": SCALE_LABELS}


def _valid(field: str, value) -> bool:
    if field in RANGES:
        low, high = RANGES[field]
        return low <= value <= high
    if field == "d_ff":
        return value in D_FF_OPTIONS
    return field not in FIELD_LABELS or value in FIELD_LABELS[field]


def url_specs(prefix: str = CFG) -> list[UrlSpec]:
    """What a shared link may set of the config widgets under `prefix`, and their task."""
    specs = [(f"{prefix}_{f}", DEFAULTS[f], FIELD_LABELS.get(f), lambda v, f=f: _valid(f, v), _valid_text(f))
             for f in CONFIG_FIELDS]
    return specs + [(f"{prefix}_task", DEFAULT_TASK, None, lambda v: v in TASK_PRESETS,
                     "one of " + ", ".join(TASK_PRESETS))]


def _valid_text(field: str) -> str:
    if field in RANGES:
        return "a number from {:g} to {:g}".format(*RANGES[field])
    if field == "d_ff":
        return "one of " + ", ".join(map(str, D_FF_OPTIONS))
    if field in FIELD_LABELS:
        return "one of " + ", ".join(FIELD_LABELS[field].values())
    return "true or false"


def config_values(prefix: str = CFG) -> dict:
    return {f: state_value(f"{prefix}_{f}", DEFAULTS[f]) for f in CONFIG_FIELDS}


@st.cache_resource(show_spinner="Generating the task's examples…", max_entries=16)
def load_task(preset: str) -> Task:
    """Tasks are read-only data generated from a seed, so every session can share them."""
    return make_task(preset)


@st.cache_resource(show_spinner="Generating the task's examples…", max_entries=16)
def task_of_config(spec_json: str) -> Task:
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
