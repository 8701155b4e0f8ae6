"""The Train page's training settings: their widgets (bound to the URL like the config), reading them
on any page, and the run's estimated cost."""

from __future__ import annotations

import math

import streamlit as st

from explorer.config import ModelConfig
from explorer.jobs.budget import estimate_budget
from explorer.limits import CAPS, check_run
from explorer.quoting import md, md_text
from explorer.store.runs import MAX_NAME, safe_name
from explorer.tasks import Task
from explorer.train_config import SCHEDULES, TrainConfig
from ui.links import SHARED, state_value
from ui.widgets import human_bytes

TRAIN_STEPS, TRAIN_BATCH, TRAIN_LR, TRAIN_WARMUP = "train_steps", "train_batch", "train_lr", "train_warmup"
TRAIN_SCHEDULE, TRAIN_SMOOTHING, TRAIN_CLIP = "train_schedule", "train_smoothing", "train_clip"
TRAIN_SEED, TRAIN_THREADS = "train_seed", "train_threads"
TRAIN_NAME = "train_name"  # the new run's name, optional; not in the link, which every visitor may open
NUMBERS = {  # key -> (min, max, default) of the number widgets
    TRAIN_STEPS: (1, CAPS["steps"], 300), TRAIN_BATCH: (1, CAPS["batch_size"], 64), TRAIN_LR: (1e-5, 10.0, 3e-3),
    TRAIN_WARMUP: (0, 100_000, 30), TRAIN_SMOOTHING: (0.0, 0.5, 0.0), TRAIN_CLIP: (0.0, 100.0, 1.0),
    TRAIN_SEED: (0, 2**31 - 1, 0), TRAIN_THREADS: (1, 2, 1)}
SETTINGS = {"steps": TRAIN_STEPS, "batch_size": TRAIN_BATCH, "lr": TRAIN_LR, "warmup": TRAIN_WARMUP,
            "schedule": TRAIN_SCHEDULE, "label_smoothing": TRAIN_SMOOTHING, "grad_clip": TRAIN_CLIP,
            "seed": TRAIN_SEED, "threads": TRAIN_THREADS}  # TrainConfig field -> widget key
THREAD_OPTIONS = (1, 2)  # one leaves a core for the server; two only pay on an idle machine
EVALS_PER_RUN = 25      # validation points on the curves
SNAPSHOTS_PER_RUN = 60  # attention frames for the time-lapse
MIN_EVAL_EVERY = 5
EVAL_EXAMPLES = 200


def cadence(steps: int) -> dict:
    """How often a run of `steps` evaluates and records attention: a fixed number of points per run."""
    return dict(eval_every=max(MIN_EVAL_EVERY, math.ceil(steps / EVALS_PER_RUN)),
                snapshot_every=max(1, math.ceil(steps / SNAPSHOTS_PER_RUN)))


def settings_values() -> dict:
    """The training settings as the widgets left them (defaults where a widget was never drawn)."""
    return {field: state_value(key, NUMBERS[key][2] if key in NUMBERS else SCHEDULES[0])
            for field, key in SETTINGS.items()}


def train_config(values: dict) -> tuple[TrainConfig | None, str | None]:
    """Widget values (steps, batch_size, lr, ...) -> (TrainConfig, None) or (None, what is wrong)."""
    try:
        return TrainConfig(**values, eval_examples=EVAL_EXAMPLES, **cadence(values["steps"])), None
    except (TypeError, ValueError) as err:
        return None, str(err)


def settings_widgets(columns: int = 4) -> tuple[TrainConfig | None, str | None]:
    """The training settings in a grid, bound to the URL; returns (config, None) or (None, message)."""
    n = NUMBERS
    cols = st.columns(columns)
    values = {}
    with cols[0]:
        values["steps"] = st.number_input("Steps", *n[TRAIN_STEPS], step=50, key=TRAIN_STEPS, **SHARED,
                                          help="Optimiser updates. Small models learn the toy tasks in a few hundred.")
        values["schedule"] = st.selectbox("Schedule", SCHEDULES, key=TRAIN_SCHEDULE, **SHARED,
                                          help="After the warmup: cosine decay to zero, the paper's inverse "
                                               "square root, or a constant rate.")
    with cols[1]:
        values["batch_size"] = st.number_input("Batch size", *n[TRAIN_BATCH], step=8, key=TRAIN_BATCH, **SHARED,
                                               help="Examples per update.")
        values["label_smoothing"] = st.slider("Label smoothing", *n[TRAIN_SMOOTHING], step=0.05,
                                              key=TRAIN_SMOOTHING, **SHARED,
                                              help="Moves this much probability off the right answer in the "
                                                   "target (the paper uses 0.1).")
    with cols[2]:
        values["lr"] = st.number_input("Learning rate", *n[TRAIN_LR], step=1e-3, format="%g", key=TRAIN_LR,
                                       **SHARED, help="Peak AdamW learning rate, reached after the warmup. "
                                                      "Too high and the loss explodes.")
        values["grad_clip"] = st.number_input("Gradient clipping", *n[TRAIN_CLIP], step=0.5, key=TRAIN_CLIP,
                                              **SHARED, help="Largest total gradient norm per update; 0 = off.")
    with cols[3]:
        values["warmup"] = st.number_input("Warmup steps", *n[TRAIN_WARMUP], step=10, key=TRAIN_WARMUP, **SHARED,
                                           help="The learning rate rises linearly from 0 over these steps.")
        seed_col, threads_col = st.columns(2)
        values["seed"] = seed_col.number_input("Seed", *n[TRAIN_SEED], key=TRAIN_SEED, **SHARED,
                                               help="Initial weights, batches and dropout: the same seed "
                                                    "repeats a run exactly.")
        values["threads"] = threads_col.radio("Threads", THREAD_OPTIONS, key=TRAIN_THREADS, **SHARED,
                                              horizontal=True, help="CPU threads for this run.")
    cfg, err = train_config(values)
    if err:
        st.error(f"**These settings do not work.** {md_text(err)}", icon=":material/error:")
    return cfg, err


def check_run_name(text) -> tuple[str | None, str | None]:
    """The run name typed -> (name or None for the default, None) or (None, what is wrong and what is valid)."""
    text = str(text or "").strip()
    if not text:
        return None, None
    try:
        fixed = safe_name(text)
    except ValueError:
        fixed = None
    if fixed == text:
        return text, None
    hint = f" For example: {md(fixed)}." if fixed else ""
    return None, (f"The run name {md(text)} cannot be used: a run name has at most {MAX_NAME} letters, digits, dots, "
                  f"underscores or dashes (no spaces), and starts with a letter, a digit or an underscore.{hint}")


def budget_text(cfg: ModelConfig, train_cfg: TrainConfig, task: Task) -> tuple[str, str | None]:
    """(an estimate to show) and the reason the run is refused, if it is."""
    b = estimate_budget(cfg, train_cfg, task)
    took = (f"about {duration(b.run_s)} on {train_cfg.threads} core{'s' if train_cfg.threads > 1 else ''} "
            f"(measured here: {b.step_s * 1000:.0f} ms a step, evaluations apart)" if b.measured else
            f"at least {duration(b.run_s)}")
    estimate = f"Estimated: {took} · {human_bytes(b.memory_bytes)} of memory · {b.params:,} parameters"
    try:
        check_run(cfg, train_cfg, task)
    except ValueError as err:
        return estimate, f"Too big for this machine: {err}."
    return estimate, None


def duration(seconds: float | None) -> str:
    """'42 s', '8 min 31 s', '3 h 05 min', '12 days'."""
    if seconds is None or not math.isfinite(seconds):
        return "—"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"
    if seconds < 2 * 86400:
        return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:02.0f} min"
    return f"{seconds / 86400:,.0f} days"
