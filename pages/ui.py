"""The one import pages need: `from pages import ui`.

Session keys and model sources live in `pages/state.py`, shared widgets in `pages/widgets.py`;
this module re-exports their public names so pages never reach into either directly.
"""

from pages.frame import require_app
from pages.sources import task_from
from pages.state import (
    ACT_LABELS,
    ARCH_BATCH,
    ARCH_SEQ,
    CFG,
    CONFIG_FIELDS,
    DEFAULT_TASK,
    DEFAULTS,
    NORM_LABELS,
    PAGE_NUMBERS,
    PE_BASE,
    PE_D_MODEL,
    PE_LABELS,
    PE_POSITIONS,
    PE_STACK,
    PE_TYPE,
    PRETRAINED,
    RUN,
    SELECTED,
    SESSION_RUNS,
    SOURCE,
    TASK,
    SelectedModel,
    add_session_run,
    build_config,
    current_config,
    current_task,
    init_state,
    load_task,
    select_run,
    selected_model,
    state_value,
    untrained_model,
)
from pages.widgets import (
    ARCH_LABELS,
    SHARED,
    chart,
    config_widgets,
    human_bytes,
    layers_text,
    model_facts,
    model_picker,
    task_blurb,
    task_picker,
)

__all__ = [
    "require_app",
    "ACT_LABELS", "ARCH_BATCH", "ARCH_LABELS", "ARCH_SEQ", "CFG", "CONFIG_FIELDS", "DEFAULTS", "DEFAULT_TASK",
    "NORM_LABELS", "PAGE_NUMBERS", "PE_BASE", "PE_D_MODEL", "PE_LABELS", "PE_POSITIONS", "PE_STACK",
    "PE_TYPE", "PRETRAINED", "RUN", "SELECTED", "SESSION_RUNS", "SHARED", "SOURCE", "TASK", "SelectedModel",
    "add_session_run", "build_config", "chart", "config_widgets", "current_config", "current_task",
    "human_bytes", "init_state", "layers_text", "load_task", "model_facts", "model_picker", "select_run",
    "selected_model", "state_value", "task_blurb", "task_from", "task_picker", "untrained_model",
]

# Attention and Outputs pages: their session keys, input picker and cached computations.
from pages import inspecting  # noqa: E402
from pages.slider_events import on_slider  # noqa: E402
from pages.state import (  # noqa: E402
    ATT_CLOSEUP,
    ATT_FOCUS_FOR,
    ATT_HEAD,
    ATT_KIND,
    ATT_LAYER,
    ATT_MOSAIC,
    ATT_REF,
    INSPECT_INDEX,
    INSPECT_MODE,
    INSPECT_PAD,
    INSPECT_TEACHER,
    INSPECT_TEXT,
    OUT_BEAM,
    OUT_NEW,
    OUT_PENALTY,
    OUT_SEED,
    OUT_TEMPERATURE,
    OUT_TOP_K,
)

__all__ += ["inspecting", "on_slider", "ATT_CLOSEUP", "ATT_FOCUS_FOR", "ATT_HEAD", "ATT_KIND", "ATT_LAYER",
            "ATT_MOSAIC", "ATT_REF", "INSPECT_INDEX", "INSPECT_MODE", "INSPECT_PAD", "INSPECT_TEACHER",
            "INSPECT_TEXT", "OUT_BEAM", "OUT_NEW", "OUT_PENALTY", "OUT_SEED", "OUT_TEMPERATURE", "OUT_TOP_K"]

# Train, Gradients and Runs pages: their session keys, the sidebar's job status, the run list.
from pages.sources import load_run, run_names  # noqa: E402
from pages.state import (  # noqa: E402
    GRAD_D_MODEL,
    GRAD_LAYERS,
    GRAD_RUN_A,
    GRAD_RUN_B,
    GRAD_SEED,
    GRAD_WHAT,
    JOB,
    RUNS_DELETE,
    RUNS_ERROR,
    RUNS_EXPORT,
    RUNS_METRICS,
    RUNS_ONLY_DIFF,
    RUNS_TABLE,
    TRAIN_ATTENTION,
    TRAIN_BATCH,
    TRAIN_CLIP,
    TRAIN_HEAD,
    TRAIN_LR,
    TRAIN_SCHEDULE,
    TRAIN_SEED,
    TRAIN_SMOOTHING,
    TRAIN_STEPS,
    TRAIN_THREADS,
    TRAIN_WARMUP,
)
from pages.training_ui import job_status  # noqa: E402

__all__ += ["load_run", "run_names", "job_status", "GRAD_D_MODEL", "GRAD_LAYERS", "GRAD_RUN_A", "GRAD_RUN_B",
            "GRAD_SEED", "GRAD_WHAT", "JOB", "RUNS_DELETE", "RUNS_ERROR", "RUNS_EXPORT", "RUNS_METRICS",
            "RUNS_ONLY_DIFF", "RUNS_TABLE", "TRAIN_BATCH", "TRAIN_CLIP", "TRAIN_ATTENTION", "TRAIN_HEAD",
            "TRAIN_LR", "TRAIN_SCHEDULE", "TRAIN_SEED", "TRAIN_SMOOTHING", "TRAIN_STEPS", "TRAIN_THREADS",
            "TRAIN_WARMUP"]
