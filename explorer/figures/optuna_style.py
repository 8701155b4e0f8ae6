"""Optuna's own figures (`optuna.visualization`) made into the house style, and the few questions every
study figure asks of a study: its completed trials, a figure's minimum of them, one objective's target, a
trial's parameters as hover text. explorer/figures/studies.py draws the figures with these."""

from __future__ import annotations

import base64
import math
import warnings

import numpy as np
import optuna
import plotly.graph_objects as go
from optuna.trial import TrialState

from explorer.figures.layout import COLORBAR, figure, merge
from explorer.quoting import hover


def plain(value):
    """numpy arrays and scalars as plain lists and numbers (a typed array Plotly cannot compare: layout.py)."""
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict) and "bdata" in value and "dtype" in value:   # plotly's typed array
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return plain(array.reshape([int(n) for n in str(shape).split(",")]) if shape else array)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def house(fig: go.Figure, title: str, height: float, **style) -> go.Figure:
    """Optuna's figure in the house style: its traces and axes kept, its template, title and size dropped."""
    spec = plain(fig.to_plotly_json())
    layout = {k: v for k, v in spec["layout"].items() if k not in ("template", "title", "width", "height", "legend")}
    for name, axis in layout.items():   # a category axis's labels are its categories (layout.py sizes them)
        if name.startswith(("xaxis", "yaxis")) and axis.get("categoryarray") and "ticktext" not in axis:
            axis.update(tickmode="array", tickvals=axis["categoryarray"], ticktext=axis["categoryarray"])
    for trace in spec["data"]:   # colorbars at the plot's edge, as every figure's (layout.py, COLORBAR)
        if trace.get("type") in ("contour", "heatmap"):   # a colorbar whether Optuna styled one or not
            trace.setdefault("colorbar", {})
        for part in (trace, trace.get("marker") or {}):
            if "colorbar" in part:
                part["colorbar"] = {**(part["colorbar"] or {}), **COLORBAR}
    return figure([go.Figure(data=[t]).data[0] for t in spec["data"]], title, height, merge(layout, style))


def quiet(draw, *args, **kwargs) -> go.Figure:
    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.ERROR)   # "unique value length is less than 2" and such
    try:
        with warnings.catch_warnings():   # "experimental", "no completed trials": the page says so in words
            warnings.simplefilter("ignore")
            return draw(*args, **kwargs)
    finally:
        optuna.logging.set_verbosity(level)


def complete(study) -> list:
    return [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if t.values and all(math.isfinite(v) for v in t.values)]


def need(study, n: int = 1) -> list:
    done = complete(study)
    if len(done) < n:
        raise ValueError(f"this figure needs {n} completed trial{'s' * (n > 1)}; the study has {len(done)}")
    return done


def objective_target(study, names: list[str], objective: int):
    """Optuna's `target` and its name for one objective of a multi-objective study (None for one objective)."""
    if len(study.directions) == 1:
        return None, names[0]
    return (lambda t: t.values[objective]), names[objective]


def trial_text(t) -> str:
    params = "<br>".join(hover(f"{k} = {v:.3g}" if isinstance(v, float) else f"{k} = {v}")
                         for k, v in t.params.items())
    return f"trial {t.number}<br>{params}"


__all__ = ["plain", "house", "quiet", "complete", "need", "objective_target", "trial_text"]
