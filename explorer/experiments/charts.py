"""What an experiment's result shows: one table row's mean ± std in words, and the usual figures (mean ±
std bars beside the seed's expectation, curves with bands over seeds)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go

from explorer.figures.curves import line_chart
from explorer.figures.results import bar_with_error

if TYPE_CHECKING:
    from explorer.experiments.base import Result


def stat(table: pd.DataFrame, condition: str, metric: str) -> tuple[float, float, int]:
    """(mean, std, n) of one table row; (nan, nan, 0) when that condition was not measured."""
    row = table[(table["condition"] == condition) & (table["metric"] == metric)]
    if row.empty or int(row["n"].iloc[0]) == 0:
        return math.nan, math.nan, 0
    r = row.iloc[0]
    return float(r["mean"]), float(r["std"]), int(r["n"])


def pct(mean: float, std: float) -> str:
    return "not measured" if math.isnan(mean) else f"{100 * mean:.1f}% ± {100 * std:.1f}"


def num(mean: float, std: float, digits: int = 3) -> str:
    return "not measured" if math.isnan(mean) else f"{mean:.{digits}g} ± {std:.2g}"


def curve_bands(curves: pd.DataFrame, metric: str, conditions: Iterable[str] | None = None,
                x: str = "step") -> tuple[dict, dict]:
    """(series, bands) for `explorer.figures.curves.line_chart`: mean over seeds per x, band = mean ± std."""
    data = curves[curves["metric"] == metric]
    conditions = list(dict.fromkeys(data["condition"])) if conditions is None else list(conditions)
    series, bands = {}, {}
    for cond in conditions:
        g = data[data["condition"] == cond].groupby(x)["value"]
        if not len(g):
            continue
        mean, std = g.mean(), g.std(ddof=1).fillna(0.0)
        series[cond] = (mean.index.to_numpy(), mean.to_numpy())
        bands[cond] = (mean.index.to_numpy(), (mean - std).to_numpy(), (mean + std).to_numpy())
    return series, bands


def bars(table: pd.DataFrame, metric: str, title: str, y_title: str, scale: float = 1.0) -> go.Figure:
    """Mean ± std bars of one metric per condition, with the seed's expected values as markers."""
    rows = table[table["metric"] == metric]
    reference = {c: e * scale for c, e in zip(rows["condition"], rows["expected"]) if not math.isnan(e)}
    return bar_with_error(list(rows["condition"]), rows["mean"] * scale, rows["std"] * scale,
                          title=title, y_title=y_title, reference=reference or None)


def bars_and_curves(r: Result, metric: str, title: str, y_title: str, curve_title: str) -> list[go.Figure]:
    """The usual pair: mean ± std bars of `metric` (a share, in %) and the val_exact curves with bands."""
    series, bands = curve_bands(r.curves, "val_exact")
    return [bars(r.table, metric, title, y_title, 100.0),
            line_chart(series, curve_title, "step", y_title.split(" (")[0], bands=bands)]


__all__ = ["stat", "pct", "num", "curve_bands", "bars", "bars_and_curves"]
