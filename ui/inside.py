"""The Inside the model page: its session keys and cached wrappers of explorer.interpret.

Caches are keyed on `inspecting.version(sel)` (the model's name and a digest of its weights); the model goes in
as an `_underscored` argument. The focused head (kind, layer, head) is in the page's link, so the Attention page
can link a head to its ablation result (`ablation_link`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from explorer import interpret
from explorer.analysis import views
from explorer.interpret import learning
from explorer.interpret.parts import inputs
from explorer.interpret.stored import STORED_N, ablation_table
from explorer.store import checkpoints, runs, snapshots
from explorer.store.snapshots import SNAPSHOTS_FILE
from explorer.tasks import Task
from ui import models, training_job

PAGE = "pages/inside.py"
VIEW = "inside_view"                      # which figure family (in the link)
MODE, METRIC = "inside_mode", "inside_metric"     # ablation: zero or mean; the drop shown
KIND, LAYER, HEAD = "inside_kind", "inside_layer", "inside_head"   # the focused head (in the link; head -1 = all)
LINKED = "_inside_linked"                 # the focus the page last wrote into the link (another is a link followed)
POSITION = "inside_position"              # patching: the input position changed
TABLE, DIMS = "inside_table", "inside_dims"       # embeddings: which table, 2-D or 3-D
RUN, LINES = "inside_run", "inside_lines"         # over training: the run, match or entropy
CHART = "inside_ablation"                 # the clickable ablation heatmap
N_EXAMPLES = STORED_N  # validation examples an ablation measures: the Attention page's count (evaluate's default)
THIS_JOB = "this session's run"

VIEWS = {"ablation": "Head ablation", "lens": "Logit lens", "patching": "Patching", "embeddings": "Embeddings",
         "training": "Over training", "learning": "How it learned"}


def ablation_link(kind: str, layer: int, head: int) -> dict:
    """The query of the page's link that opens head (kind, layer, head)'s ablation."""
    return {VIEW: VIEWS["ablation"], KIND: kind, LAYER: str(layer), HEAD: str(head)}


def linked_focus(kinds: list[str]) -> tuple[str, int, int] | None:
    """The head a link names, if it is one of these kinds."""
    try:
        kind, layer, head = st.query_params[KIND], int(st.query_params[LAYER]), int(st.query_params[HEAD])
    except (KeyError, ValueError):
        return None
    return (kind, layer, head) if kind in kinds else None


# ------------------------------------------------------------------------------------ caches
@st.cache_data(max_entries=32, show_spinner="Knocking out every head in turn…")
def ablation(version: str, _model, _task: Task, mode: str) -> tuple[pd.DataFrame, dict]:
    """A shipped model's stored table (interpret.stored) if it is of these weights, else computed."""
    name = version.split("@")[0].removeprefix("pretrained:") if version.startswith("pretrained:") else None
    table = ablation_table(name, _model, _task, mode, N_EXAMPLES)
    return table, dict(table.attrs["baseline"])


@st.cache_data(max_entries=128, show_spinner=False)
def answer_without(version: str, _model, _task: Task, part: tuple, mode: str, src: tuple):
    """What the model says for src with `part` (kind, layer, head or None) knocked out: the greedy output
    (seq2seq) or the output distribution."""
    model = interpret.without(_model, _task, interpret.Part(*part), mode)
    if _task.kind == "seq2seq":
        return views.greedy_output(model, _task, src)
    return views.output_distribution(model, _task, src)


@st.cache_data(max_entries=128, show_spinner=False)
def lens(version: str, _model, _task: Task, src: tuple, target: tuple) -> interpret.Lens:
    vocab = tuple(_task.class_names) if _task.kind == "classify" else tuple(_task.vocab)
    return interpret.lens_of(_model, _task, inputs(_task, src, target), vocab)


@st.cache_data(max_entries=64, show_spinner="Patching every head and position…")
def patching(version: str, _model, _task: Task, src: tuple, position: int | None) -> tuple[pd.DataFrame, dict, str]:
    pair = interpret.make_pair(_task, src=src, position=position)
    table = interpret.patch(_model, _task, pair)
    return table, dict(table.attrs), pair.text


@st.cache_data(max_entries=64, show_spinner=False)
def geometry(version: str, _model, _task: Task, dims: int) -> dict:
    return interpret.embedding_geometry(_model, _task, k=dims)


# ----------------------------------------------------------------------------- over training
def runs_with_snapshots() -> list[str]:
    """Saved runs that recorded attention snapshots, newest first."""
    return [r.name for r in models.visible_runs() if (r.path / SNAPSHOTS_FILE).is_file()]


def shipped_with_snapshots() -> list[str]:
    """Shipped models whose training was replayed to record snapshots (interpret.replay_snapshots)."""
    return [e["name"] for e in checkpoints.pretrained_manifest()
            if (snapshots.shipped_folder() / e["name"] / SNAPSHOTS_FILE).is_file()]


def snapshot_sources() -> list[str]:
    """This session's run (if it recorded snapshots), the shipped models and the saved runs that did."""
    job = training_job.current_job()
    mine = [THIS_JOB] if job is not None and job.snapshots() else []
    return mine + shipped_with_snapshots() + runs_with_snapshots()


@st.cache_data(max_entries=32, show_spinner=False)
def saved_heads(name: str, mtime: float) -> tuple[pd.DataFrame, float]:
    table = interpret.heads_over_training(name)
    return table, table.attrs["uniform"]


def heads_table(source: str) -> tuple[pd.DataFrame, float]:
    """(heads over training, the uniform entropy) of a source of `snapshot_sources`."""
    if source == THIS_JOB:
        job = training_job.current_job()
        table = interpret.heads_over_training(job.snapshots(), job.task)
        return table, table.attrs["uniform"]
    shipped = snapshots.shipped_folder() / source / SNAPSHOTS_FILE
    path = shipped if source in shipped_with_snapshots() else runs.run_folder(source) / SNAPSHOTS_FILE
    return saved_heads(source, path.stat().st_mtime)


# ---------------------------------------------------------------------------- how it learned
def learning_source(sel) -> str | None:
    """The sidebar's model when it is a shipped model of explorer.interpret.learning.LEARNING_TASKS."""
    kind, _, name = sel.key.partition(":")
    shipped = {e["name"]: e["task"]["name"] for e in checkpoints.pretrained_manifest()}
    return name if kind == "pretrained" and shipped.get(name) in learning.LEARNING_TASKS else None


@st.cache_data(max_entries=8, show_spinner="Reading how it learned…")
def learned(name: str, version: str) -> dict:
    return learning.how_it_learned(name)


def top_labels(lens_view: interpret.Lens) -> np.ndarray:
    """The likeliest token of each (layer, position) as text."""
    return np.array(lens_view.vocab, dtype=object)[lens_view.top(1)[..., 0]]


__all__ = ["CHART", "DIMS", "HEAD", "KIND", "LAYER", "LINES", "LINKED", "METRIC", "MODE", "N_EXAMPLES", "PAGE",
           "POSITION", "RUN", "TABLE", "THIS_JOB", "VIEW", "VIEWS", "ablation", "ablation_link", "answer_without",
           "geometry", "heads_table", "learned", "learning_source", "lens", "linked_focus", "patching",
           "runs_with_snapshots", "shipped_with_snapshots", "snapshot_sources", "top_labels"]
