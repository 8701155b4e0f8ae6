"""Train: train the configured model on a toy task in the background and watch it learn live."""

import streamlit as st

from explorer.analysis.gradients import grad_norm_table
from explorer.evaluation import AttentionSnapshot
from explorer.figures import timelapse
from explorer.figures.curves import training_curves
from explorer.figures.gradients import grad_norm_heatmap
from explorer.jobs.base import ENDED
from explorer.jobs.slots import pool_counts
from explorer.jobs.training import TrainingJob
from explorer.store import runs
from explorer.store.subject import from_job
from explorer.tasks.recipes import recommended
from ui import (
    exports,
    frame,
    links,
    model_config,
    models,
    own_data,
    saved_runs,
    slider_events,
    train_settings,
    train_view,
    training_job,
    widgets,
)

frame.require_app()  # a deep link on a fresh server: rerun through app.py

CURVES = {"loss": "train loss", "val_loss": "validation loss", "token_acc": "train accuracy",
          "val_token_acc": "validation accuracy", "val_exact": "validation exact match"}
ACCURACY = {"seq2seq": ("token_acc", "val_token_acc", "val_exact"), "classify": ("token_acc", "val_token_acc"),
            "lm": ("token_acc", "val_token_acc")}
EXACT_LABEL = {"seq2seq": "Exact match", "classify": "Accuracy", "lm": "Next-char accuracy"}
MAX_GRAD_STEPS = 200
# The head picker's default. Not None: a selectbox whose value is None shows "Choose an option" each
# time the server sends the value (Streamlit 1.67), which the live view's reruns made it do.
BEST_HEAD = "best"
SAVED_RUN = "train_saved_run"  # the saved run "Continue a saved run" resumes


# ----------------------------------------------------------------------------------- controls
def apply_recipe(preset: str) -> None:
    """Button callback: the task's recommended model and training settings (explorer.tasks.recipes, measured
    in bench/). Settings the recipe leaves open go back to their defaults, so the run is the recipe."""
    overrides, train = recommended(preset)
    for field in model_config.CONFIG_FIELDS:
        st.session_state[f"{model_config.CFG}_{field}"] = overrides.get(field, model_config.DEFAULTS[field])
    for field, key in train_settings.SETTINGS.items():
        if field != "threads":  # the machine's business, not the recipe's
            st.session_state[key] = getattr(train, field)
    st.toast(f"Loaded the recommended recipe for {preset}: {train.steps:,} steps at learning rate {train.lr:g}.",
             icon=":material/auto_fix_high:")


def run_name_field(preset: str, cfg, train_cfg) -> str | None:
    """The new run's name, optional; returns what is wrong with it, or None."""
    left, right = st.columns([2, 2.6], vertical_alignment="bottom")
    default = training_job.run_name(preset, cfg, train_cfg) if cfg is not None and train_cfg is not None else ""
    text = left.text_input("Run name (optional)", key=train_settings.TRAIN_NAME, persist_state="session",
                           max_chars=runs.MAX_NAME, placeholder=default,
                           help="Letters, digits, '.', '_' and '-'. Left empty, the run takes the name shown "
                                "in grey.")
    right.caption("Left empty, the run takes the grey name, made of the task and the model. A name used "
                  "before, even by a run deleted since, gets -2, -3, …, so a link to a run never opens another.")
    _, error = train_settings.check_run_name(text)
    if error:
        st.error(error, icon=":material/error:")
    return error


def controls(cfg, task, train_cfg, job: TrainingJob | None, status: str | None,
             name_error: str | None = None) -> None:
    """Train / Stop / Resume / Use this model, for the job's status as this run draws it. Callbacks act
    before the page draws, so the buttons below already show the new state."""
    active = status is not None and status not in ENDED
    ready = cfg is not None and train_cfg is not None
    refused = None
    if ready:
        estimate, refused = train_settings.budget_text(cfg, train_cfg, task)
        st.caption(estimate)
    if refused:
        st.error(refused, icon=":material/block:")
    finished = status == "finished"
    more = train_cfg.steps if train_cfg is not None else 0
    offered = training_job.offered_run(job) if job is not None else None
    in_use = offered is not None and models.selected_model().key == f"run:{offered}"
    row = st.container(horizontal=True, vertical_alignment="center")
    row.button("Train", key="train_start", type="primary", icon=":material/play_arrow:", on_click=training_job.on_train,
               disabled=active or not ready or refused is not None or name_error is not None,
               help="Start a new run with the settings above, from fresh weights.")
    row.button("Stop", key="train_stop", icon=":material/stop:", on_click=training_job.on_stop, disabled=not active,
               help="Stop after the current step; the weights and curves are kept and saved.")
    row.button(f"Train {more:,} more steps" if finished else "Resume", key="train_resume", icon=":material/resume:",
               on_click=training_job.on_resume, args=(more if finished else None,),
               disabled=status not in ("stopped", "finished") or (finished and not more),
               help="Continue this run from where it stopped, with its own settings.")
    row.button("In use on every page" if in_use else "Use this model", key="train_use", icon=":material/check:",
               on_click=models.select_run, args=(offered,), disabled=offered is None or in_use,
               help="Select this run in the sidebar, so every page looks inside it.")
    exports.report_button(row, lambda: from_job(job), job.run_name or job.name if job else "run", "train_report",
                          disabled=status not in ENDED,
                          help="This run's report as one HTML file that opens offline: config, recipe, curves, "
                               "attention, time-lapse, gradients, entropy, metrics (once the run has stopped).")
    running, waiting = pool_counts()
    row.caption(f"Server: {running} training, {waiting} waiting")
    error = training_job.take_error()
    if error:
        st.error(error, icon=":material/error:")
    if job is not None and cfg is not None and (job.model.cfg != cfg or job.task.cfg != task.cfg):
        st.caption("The settings above differ from the run below: **Train** starts a new run with them, "
                   "**Resume** continues the run below with its own.")


# ---------------------------------------------------------------------------------- live view
def status(job: TrainingJob) -> None:
    state, message = job.status, job.message
    message = message[:1].upper() + message[1:]
    if state == "queued" and not job.pooled:  # on a Ray cluster: connecting, or waiting for one of its CPUs
        st.info(f"**{message}.** The run starts by itself when the cluster has a CPU free (Stop leaves the "
                "queue).", icon=":material/hourglass_top:")
    elif state == "queued":
        pos = job.progress().queue_position or 1
        st.info(f"**Waiting: position {pos} in the queue.** Every training slot on this server is busy; "
                "the run starts by itself when one frees up (Stop leaves the queue).",
                icon=":material/hourglass_top:")
    elif state == "running":
        st.progress(job.progress().fraction, text=training_job.progress_text(job))
        if getattr(job, "worker", None):
            st.caption(f"Training on the Ray cluster, worker {job.worker}.")
    elif state == "finished":
        st.success(f"{message}.", icon=":material/check_circle:")
    elif state == "stopped":
        st.info(f"{message}. **Resume** continues from here.", icon=":material/pause_circle:")
    elif state == "diverged":
        st.error(f"**The loss diverged.** {message}. Lower the learning rate or raise the warmup, then "
                 "train again.", icon=":material/warning:")
    else:
        st.error(f"Training failed: {message}", icon=":material/error:")


def numbers(job: TrainingJob, hist) -> None:
    p = job.progress()
    last = hist.iloc[-1]
    val = hist.dropna(subset=["val_exact"]) if "val_exact" in hist else hist.iloc[:0]
    row = st.container(horizontal=True)
    row.metric("Step", f"{p.step:,} / {p.total:,}", border=True, width="content")
    row.metric("Steps / s", f"{p.steps_per_s:.1f}" if p.steps_per_s else "—", border=True, width="content")
    row.metric("Time", f"{p.elapsed_s:.0f} s", border=True, width="content")
    row.metric("Train loss", f"{last['loss']:.3f}", border=True, width="content")
    if len(val):
        row.metric("Validation loss", f"{val['val_loss'].iloc[-1]:.3f}", border=True, width="content")
        row.metric(EXACT_LABEL[job.task.kind], f"{val['val_exact'].iloc[-1]:.0%}", border=True, width="content")


def curves(job: TrainingJob, hist) -> None:
    shown = train_view.thin(hist).rename(columns=CURVES)
    left, right = st.columns(2)
    with left:
        widgets.chart(training_curves(shown, metrics=[CURVES[m] for m in ("loss", "val_loss")], title="Loss",
                                      layout=dict(yaxis=dict(title="cross-entropy (nats)"))),
                      key="train_loss_chart")
    with right:
        metrics = [CURVES[m] for m in ACCURACY[job.task.kind]]
        widgets.chart(training_curves(shown, metrics=metrics, title="Accuracy",
                                      layout=dict(yaxis=dict(title="right")), percent=True),
                      key="train_acc_chart")


def expected(job: TrainingJob, snap: AttentionSnapshot):
    return timelapse.expected(job.task, snap)


def pick_head(snaps: list[AttentionSnapshot], job: TrainingJob) -> tuple[int, int]:
    """Layer and head: by default the one that matches the task best in the latest snapshot, so the
    time-lapse follows the head that learned; or any one the user picks."""
    last = snaps[-1]
    n_layers, n_heads = last.pattern.shape[:2]
    options = [BEST_HEAD] + [(layer, head) for layer in range(n_layers) for head in range(n_heads)]
    if st.session_state.get(train_view.TRAIN_HEAD, BEST_HEAD) not in options:  # a new run may have fewer heads
        st.session_state.pop(train_view.TRAIN_HEAD, None)

    def name(option):  # fixed labels: a selectbox whose labels change between reruns loses its value
        return "Best match (follows the run)" if option == BEST_HEAD else f"L{option[0]} H{option[1]}"  # as Attention

    picked = st.selectbox("Layer and head", options, format_func=name, key=train_view.TRAIN_HEAD,
                          help="Best match: the head whose attention is closest to what the task needs "
                               "(or the most focused one when the task expects nothing).")
    if picked in (None, BEST_HEAD):  # None: the box was cleared
        return timelapse.focus_head(last.pattern, expected(job, last))
    return picked


def attention(job: TrainingJob) -> None:
    snaps = job.snapshots()
    if not snaps:
        st.caption("The first attention snapshot arrives after a few steps.")
        return
    layer, head = pick_head(snaps, job)
    lapse = snaps if job.ended and len(snaps) > 1 else snaps[-1:]  # a run that ended replays its snapshots
    fig = train_view.reuse_figure("attention", (job, snaps[-1].step, layer, head, len(lapse)),
                                  lambda: heatmap(job, lapse, layer, head))
    widgets.chart(fig, key=train_view.TRAIN_ATTENTION)
    if len(lapse) > 1:
        slider_events.on_slider(train_view.TRAIN_ATTENTION)  # the arrow keys; nothing else here needs the frame
        st.caption("Time-lapse: press Play, or slide along the top (or click the chart and press ← →), to "
                   "replay the snapshots recorded while the model trained.")


def heatmap(job: TrainingJob, snaps: list[AttentionSnapshot], layer: int, head: int):
    """The head in the last snapshot; with several, a slider over all of them swaps the heatmap in the browser."""
    return timelapse.timelapse_figure(job.task, snaps, layer, head)


def gradients(hist) -> None:
    norms, labels, steps = grad_norm_table(hist, MAX_GRAD_STEPS)
    if not steps:
        return
    fig = grad_norm_heatmap(norms, labels, steps, title="Gradient norm per layer")
    widgets.chart(fig, key="train_grad_chart")
    st.caption("Each column is one step; brighter = larger gradient on that layer's weights (log scale).")


def live_numbers(job: TrainingJob) -> None:
    """Status and numbers: cheap, so they refresh a few times a second."""
    status(job)
    hist = job.history_frame()
    if not hist.empty:
        numbers(job, hist)


def live_curves(job: TrainingJob) -> None:
    """The curves students watch grow. A redrawn Plotly chart costs the server tens of milliseconds
    of Python (taken from the training thread: one GIL) and the browser a full re-layout, so charts
    refresh once a second, not a few times a second like the numbers (bench/README.md, "Session 10")."""
    hist = job.history_frame()
    if not hist.empty:
        curves(job, hist)


def live_inside(job: TrainingJob) -> None:
    """Attention and gradients change more slowly than the loss: refreshed less often still."""
    hist = job.history_frame()
    if hist.empty:
        return
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Attention")
        attention(job)
    with right:
        st.subheader("Gradients")
        gradients(hist)


def saved(status: str | None, more: int) -> None:
    """Continue a run saved on disk: after a reload, or one trained earlier, by anyone (as a copy)."""
    names = saved_runs.resumable()
    if not names:
        return
    active = status is not None and status not in ENDED
    with st.expander("Continue a saved run", expanded=status is None):
        row = st.container(horizontal=True, vertical_alignment="bottom")
        row.selectbox("Saved run", names, key=SAVED_RUN, width=380,
                      help="Runs saved on disk, yours first, newest first: a run a reload stopped is here too.")
        row.button("Resume saved run", key="train_resume_saved", icon=":material/resume:", disabled=active,
                   on_click=training_job.on_resume_saved, args=(SAVED_RUN, more),
                   help="Continue exactly where it stopped (a finished run: the steps above, more). It saves "
                        "as a new run; the saved one stays as it is.")


# ------------------------------------------------------------------------------------- page
st.title("Train")
st.markdown("Pick a task, a model and the training settings, then press **Train**: the run trains in the "
            "background while the curves, an attention head and the gradients update live. Every setting "
            "is in the page's address, so a link opens the same setup.")
with st.container(border=True):
    st.markdown("**Task and model** (the same widgets as the Architecture page)")
    top = st.columns([2, 4], vertical_alignment="bottom")
    with top[0]:
        task = widgets.task_picker(disabled=own_data.chosen())  # own data replaces the preset
    preset = links.state_value(model_config.TASK, model_config.DEFAULT_TASK)
    own = own_data.picker()  # drawn below the task row, read before its caption
    if own is not None:
        task, preset = own, own_data.current()[1]
    # The button as wide as its label and the caption beside it in the room left: in a column of its own
    # the label was cut to "Recommended rec…" at 1280 px.
    with top[1].container(horizontal=True, vertical_alignment="center"):
        st.button("Recommended recipe", key="train_recipe", icon=":material/auto_fix_high:", on_click=apply_recipe,
                  args=(preset,), disabled=own is not None,
                  help="A model size and training settings measured to learn this task fast on one CPU core "
                       "(see bench/README.md); the task presets have one, own data does not.")
        blurb = "your own data" if own is not None else widgets.task_blurb(preset)
        st.caption(f"{blurb.capitalize()} · {widgets.ARCH_LABELS[task.model_config().arch]} · "
                   f"vocabulary of {len(task.vocab)} tokens · sequences up to {task.longest} tokens", width="stretch")
    cfg, _ = widgets.config_widgets(model_config.CFG, task)
with st.container(border=True):
    st.markdown("**Training**")
    train_cfg, _ = train_settings.settings_widgets()
    name_error = run_name_field(preset, cfg, train_cfg) or own_data.refusal()

job = training_job.current_job()
drawn = job.status if job is not None else None  # read once: a job ending mid-run still reruns the page
controls(cfg, task, train_cfg, job, drawn, name_error)
saved(drawn, train_cfg.steps if train_cfg is not None else 0)
left = training_job.stopped_run() if job is None else None  # a closed tab's run: "Your run X stopped at ..."
if left is not None:
    training_job.stopped_pointer(left)
elif job is None:
    st.info("No run yet in this browser. Press **Train**: the default model learns to reverse digits in "
            "about half a minute; or continue a saved run above.", icon=":material/model_training:")
else:
    training_job.poll(job, live_numbers, drawn=drawn)
    training_job.poll(job, live_curves, training_job.CHART_POLL_S, drawn=drawn)
    training_job.poll(job, live_inside, training_job.INSIDE_POLL_S, drawn=drawn)
