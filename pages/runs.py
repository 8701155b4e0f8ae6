"""Runs: every run of this session and on disk, by study, tag and task; compare curves and configs, keep notes
and tags on your own, export, delete your own."""

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from explorer.figures.curves import training_curves
from explorer.quoting import md_text, shorten
from explorer.store import runs
from explorer.store.resume import can_resume
from explorer.store.subject import Subject, open_subject
from explorer.tasks import TASK_PRESETS
from explorer.tasks.base import shown
from ui import (
    exports,
    frame,
    model_config,
    models,
    owner,
    run_notes,
    saved_runs,
    state,
    train_settings,
    train_view,
    training_job,
    widgets,
)

frame.require_app()  # a deep link on a fresh server: rerun through app.py

HIGHLIGHT = "background-color: #fff4c2; font-weight: 600"
RESUMED = "_runs_resumed"  # the run "Resume on Train" just resumed: the page opens Train
METRICS = {"loss": "train loss", "val_loss": "validation loss", "token_acc": "train accuracy",
           "val_token_acc": "validation accuracy", "val_exact": "validation exact match", "lr": "learning rate",
           "grad_norm": "gradient norm", "entropy": "output entropy"}


@dataclass(frozen=True)
class Run:
    name: str
    where: str                   # "disk", "session" or "both"
    config: dict                 # {"task": {...}, "model": {...}, "train": {...}}
    info: runs.RunInfo | None    # None for a run that lives in this session only
    session: models.SelectedModel | None


def preset_of(task: dict) -> str:
    for name, preset in TASK_PRESETS.items():
        if preset.to_dict() == task:
            return name
    return task.get("name", "?")


def collect() -> list[Run]:
    """Runs on disk (newest first), then runs that live in this session only."""
    session = st.session_state.get(models.SESSION_RUNS, {})
    out = [Run(i.name, "both" if i.name in session else "disk", {"task": i.task, "model": i.model, "train": i.train},
               i, session.get(i.name)) for i in models.visible_runs()]
    on_disk = {r.name for r in out}
    for name, sel in session.items():
        if name not in on_disk:
            cfg = {"task": sel.task.cfg.to_dict(), "model": sel.config.to_dict(), "train": {}}
            out.append(Run(name, "session", cfg, None, sel))
    return out


@st.cache_data(show_spinner=False, max_entries=64)
def _disk_history(path: str, created: str) -> pd.DataFrame:
    """A saved run's metrics.csv (`created` tells apart a run saved again under the same name)."""
    try:
        return pd.read_csv(f"{path}/{runs.METRICS_FILE}")
    except (OSError, pd.errors.EmptyDataError):
        return pd.DataFrame()


def history(run: Run) -> pd.DataFrame:
    if run.session is not None and run.session.history is not None:
        return run.session.history
    return _disk_history(str(run.info.path), run.info.created) if run.info is not None else pd.DataFrame()


def table_row(run: Run) -> dict:
    m, t, i = run.config["model"], run.config["train"], run.info
    layers = {"encoder": f"{m['n_encoder_layers']}", "decoder": f"{m['n_decoder_layers']}"}.get(
        m["arch"], f"{m['n_encoder_layers']}+{m['n_decoder_layers']}")
    norm = model_config.NORM_LABELS.get(m["norm"], m["norm"])
    model = (f"d{m['d_model']} · {m['n_heads']} heads · {layers} layers · {norm} · "
             f"{model_config.PE_LABELS.get(m['pos_encoding'], '?')}")
    final = i.final if i is not None else {}
    who = owner.whose(i.owner) if i is not None else owner.YOURS
    return {"Run": run.name, "Owner": f"{who} (private)" if i is not None and i.private else who,
            "Study": run_notes.study_of(i), "Tags": ", ".join(i.tags) if i is not None else "",
            "Task": preset_of(run.config["task"]), "Model": model,
            "Steps": i.steps if i is not None else None, "lr": t.get("lr"), "Batch": t.get("batch_size"),
            "Loss": final.get("loss"), "Val loss": final.get("val_loss"), "Exact": final.get("val_exact"),
            "Steps/s": i.steps_per_second if i is not None else None,
            "Time (s)": round(i.duration, 1) if i is not None else None,
            "Wall (s)": round(i.wall_seconds, 1) if i is not None and i.wall_seconds is not None else None,
            "Notes": shorten(i.notes.replace("\n", " "), 60) if i is not None else "",
            "Saved": {"both": "disk + session", "disk": "disk", "session": "session only"}[run.where],
            "Created": i.created[:16].replace("T", " ") if i is not None else ""}


def show_table(all_runs: list[Run]):
    col = st.column_config
    table = pd.DataFrame([table_row(r) for r in all_runs])
    return st.dataframe(table, key=state.RUNS_TABLE, on_select="rerun", selection_mode="multi-row", hide_index=True,
                        width="stretch", column_config={
                            "Run": col.TextColumn(width="medium"), "Model": col.TextColumn(width="medium"),
                            "lr": col.NumberColumn(format="%.0e"), "Loss": col.NumberColumn(format="%.3f"),
                            "Val loss": col.NumberColumn(format="%.3f"),
                            "Owner": col.TextColumn(help=owner.WHOSE_HELP),
                            "Exact": col.ProgressColumn(min_value=0.0, max_value=1.0, format="percent",
                                                           help="Validation exact match at the last evaluation"),
                            "Study": col.TextColumn(help="The search study (and trial) that saved the run"),
                            "Steps/s": col.NumberColumn(format="%.1f", help="Training steps per second of the "
                                                        "trainer's own time"),
                            "Time (s)": col.NumberColumn(help="Seconds the trainer spent on the run's steps"),
                            "Wall (s)": col.NumberColumn(help="Seconds on the clock from start to save, waits "
                                                         "between steps included (empty: not recorded then)"),
                            "Created": col.TextColumn(help="UTC")})


def short(text: str) -> str:
    """A setting as a cell: a teacher's own data (task.text, up to MiBs) cut to its start and its size."""
    return text if len(text) <= 80 else shown(text, 40)


def differences(chosen: list[Run]) -> None:
    flat = {r.name: {f"{part}.{k}": short(str(v)) for part, d in r.config.items() for k, v in d.items()}
            for r in chosen}
    df = pd.DataFrame(flat).fillna("—")
    differ = df.nunique(axis=1) > 1
    config = {"_index": st.column_config.TextColumn("Setting", width="medium")}
    if len(chosen) < 2:
        with st.expander("This run's settings"):
            st.dataframe(df, width="stretch", column_config=config)
        return
    if st.toggle("Only the settings that differ", value=True, key=state.RUNS_ONLY_DIFF):
        df = df[differ]
        if df.empty:
            st.caption("These runs share every setting.")
            return
    styled = df.style.apply(lambda row: [HIGHLIGHT if differ[row.name] else ""] * len(row), axis=1)
    st.dataframe(styled, width="stretch", height=min(600, 38 + 35 * len(df)), column_config=config)


def compare(chosen: list[Run]) -> None:
    st.subheader("Compare")
    frames = {r.name: train_view.thin(history(r)).rename(columns=METRICS) for r in chosen}
    left, right = st.columns(2)
    with left:
        picked = st.multiselect("Curves", list(METRICS), default=["loss", "val_loss"], format_func=METRICS.get,
                                key=state.RUNS_METRICS)
        widgets.chart(training_curves(frames, metrics=[METRICS[m] for m in picked or ["loss"]],
                                      title="Training curves", layout=dict(yaxis=dict(title=None))),
                      key="runs_curves_chart")
    with right:
        st.caption("Validation exact match: whole sequences right (sequence tasks), accuracy (order), "
                   "next-character accuracy (char LM).")
        widgets.chart(training_curves(frames, metrics=[METRICS["val_exact"]], title="Validation exact match",
                                      layout=dict(yaxis=dict(title="right")), percent=True),
                      key="runs_exact_chart")
    st.markdown("**Configuration**" + (" (highlighted: differs between the selected runs)" if len(chosen) > 1 else ""))
    differences(chosen)


def export(chosen: list[Run]) -> None:
    st.subheader("Notes, export, resume or delete")
    names = [r.name for r in chosen]
    if st.session_state.get(state.RUNS_EXPORT) not in names:
        st.session_state.pop(state.RUNS_EXPORT, None)
    name = st.selectbox("Run", names, key=state.RUNS_EXPORT)
    run = next(r for r in chosen if r.name == name)
    row = st.container(horizontal=True)
    hist = history(run)
    row.download_button("Metrics (CSV)", lambda: hist.to_csv(index=False), file_name=f"{name}-metrics.csv",
                        mime="text/csv", key="runs_csv", icon=":material/download:", on_click="ignore",
                        disabled=hist.empty)
    if run.info is not None:
        path = run.info.path
        row.download_button("Checkpoint (zip)", lambda: saved_runs.run_archive(path), file_name=f"{name}.zip",
                            mime="application/zip", key="runs_zip", icon=":material/folder_zip:",
                            on_click="ignore", help="The run's folder: weights (safetensors), meta.json, metrics.")
    exports.report_button(row, lambda: report_subject(run), name, "runs_report")
    if run.info is not None and can_resume(run.info.path):
        row.button("Resume on Train", key="runs_resume", icon=":material/resume:", on_click=resume, args=(name,),
                   help="Continue this run exactly where it stopped, as a run of your own (the saved one stays).")
    sharing(run)
    run_notes.editor(run.info)
    refusal = saved_runs.delete_refusal(run.info)
    row.button("Delete…", key="runs_delete", icon=":material/delete:", on_click=ask_delete, args=(name,),
               disabled=refusal is not None, help=refusal or "Delete this run: only its owner can.")
    if refusal:
        row.caption(f":material/lock: {refusal} You can still open it in the sidebar and download it.")


def sharing(run: Run) -> None:
    """A run trained on own data carries it: private to its owner until they share it (explorer.store.runs)."""
    info = run.info
    if info is None or not info.own_data:
        return
    if owner.whose(info.owner) != owner.YOURS:
        st.caption(":material/group: Trained on another visitor's own data, which they shared with everyone.")
        return
    key = f"runs_share:{info.name}"
    st.session_state[key] = not info.private  # what the disk says, whoever changed it last
    st.toggle("Share with other visitors", key=key, on_change=share, args=(info.name, key),
              help="This run holds the data you uploaded or pasted (meta.json, the checkpoint zip, its report). "
                   "Private, only your browser lists, opens and downloads it; shared, every visitor can.")
    st.caption(":material/group: Shared: every visitor can open and download it, data included."
               if not info.private else ":material/lock: Private to you: other visitors do not see it.")


def share(name: str, key: str) -> None:
    error = saved_runs.share(name, st.session_state[key])
    if error:
        st.session_state[state.RUNS_ERROR] = error


def report_subject(run: Run) -> Subject:
    """What the run's report shows: the saved run (with its snapshots), or the run this session holds."""
    if run.info is not None:
        return open_subject(f"run:{run.name}")
    return Subject(run.name, "session", run.session.model, run.session.task,
                   history=run.session.history if run.session.history is not None else pd.DataFrame())


def resume(name: str) -> None:
    """Button callback: this tab's job continues the run; the page then opens Train, which shows it live."""
    error = training_job.resume_saved(name, train_settings.settings_values()["steps"])
    st.session_state[state.RUNS_ERROR if error else RESUMED] = error or name


def ask_delete(name: str) -> None:
    st.session_state[state.RUNS_DELETE] = name


def do_delete(name: str) -> None:
    st.session_state.pop(state.RUNS_DELETE, None)
    error = saved_runs.delete_run(name)
    if error:
        st.session_state[state.RUNS_ERROR] = error
    else:
        st.toast(f"Deleted run {md_text(name)}.", icon=":material/delete:")


def confirm_delete() -> None:
    error = st.session_state.pop(state.RUNS_ERROR, None)
    if error:
        st.error(error, icon=":material/error:")
    name = st.session_state.get(state.RUNS_DELETE)
    if name is None:
        return
    with st.container(border=True):
        st.warning(f"Delete run **{md_text(name)}**? Its folder on disk and its place in the sidebar go; this cannot "
                   "be undone.", icon=":material/delete:")
        row = st.container(horizontal=True)
        row.button("Yes, delete", key="runs_delete_yes", type="primary", on_click=do_delete, args=(name,))
        row.button("Cancel", key="runs_delete_no", on_click=lambda: st.session_state.pop(state.RUNS_DELETE, None))


if st.session_state.pop(RESUMED, None):
    st.switch_page(training_job.TRAIN_PAGE)
st.title("Runs")
st.markdown("Every run trained in this session or saved on disk. Tick rows to overlay their curves and "
            "see where their settings differ. Anyone can open and download any run, except one trained on a "
            "visitor's own data: it is private to them unless they share it. Only the browser that trained a run "
            "can delete it.")
confirm_delete()
every_run = collect()
job = training_job.current_job()
if job is not None and not job.ended:
    st.caption(f"Run **{md_text(job.name)}** is training now; it appears here when it stops.")
all_runs = run_notes.filtered(every_run, lambda r: r.info, lambda r: preset_of(r.config["task"]))
if not every_run:
    st.info("No runs yet: train one on the **Train** page.", icon=":material/model_training:")
elif not all_runs:
    st.info("No run matches these filters.", icon=":material/filter_alt_off:")
else:
    event = show_table(all_runs)
    rows = [i for i in event.selection.rows if i < len(all_runs)]
    chosen = [all_runs[i] for i in rows] or all_runs[:1]
    if not rows:
        st.caption(f"Showing the newest run, **{md_text(chosen[0].name)}**: tick rows in the table to compare several.")
    compare(chosen)
    export(chosen)
