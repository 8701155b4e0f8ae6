"""The Train page's live view: which head to show, figures reused while nothing changed, and curves
thinned so that redrawing them a few times a second stays cheap."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from explorer.figures.timelapse import focus_head as best_head  # noqa: F401  (moved to the library; old name kept)

TRAIN_HEAD = "train_head"          # live attention: (layer, head) or "best"
TRAIN_ATTENTION = "train_attention_chart"  # its chart, whose own slider replays the snapshots of a run that ended
TRAIN_FIGS = "_train_figs"        # figure name -> (what it shows, figure): the live view redraws only changes


def reuse_figure(name: str, what: tuple, build: Callable[[], object]):
    """The figure drawn last time if it shows the same thing, else build(): a Plotly figure costs
    tens of milliseconds to build, taken from the training thread, and an attention snapshot
    changes only every few dozen steps."""
    figs = st.session_state.setdefault(TRAIN_FIGS, {})
    if name not in figs or figs[name][0] != what:
        figs[name] = (what, build())
    return figs[name][1]


def thin(history: pd.DataFrame, max_rows: int = 400) -> pd.DataFrame:
    """Evenly spaced rows of a long history, keeping every evaluated row and the last one, so a
    curve redrawn a few times a second stays cheap."""
    if len(history) <= max_rows:
        return history
    stride = math.ceil(len(history) / max_rows)
    keep = np.arange(len(history)) % stride == 0
    if "val_loss" in history.columns:
        keep |= history["val_loss"].notna().to_numpy()  # pandas 3 hands out read-only arrays: keep is ours
    keep[-1] = True
    return history[keep]
