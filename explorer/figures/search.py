"""A study's figures, from its trial rows (explorer/search/study.py, trial_rows): the optimisation history,
the trials in parallel coordinates, and each parameter's importance. Pure: rows in, figure out."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from explorer.figures.layout import BAR_LINE, EXPECTED_COLOUR, LEGEND_BELOW, PALETTE, figure
from explorer.quoting import hover

SEARCH_SCALE = "Viridis"   # the objective's colour in parallel coordinates, 0..1 for accuracies
STATE_COLOURS = {"COMPLETE": PALETTE[0], "PRUNED": "#9aa5b1", "FAIL": EXPECTED_COLOUR}


def _complete(rows) -> list[dict]:
    return [r for r in rows if r["state"] == "COMPLETE" and r["value"] is not None]


def _text(params: dict) -> str:
    return "<br>".join(hover(f"{k} = {v:.3g}" if isinstance(v, float) else f"{k} = {v}") for k, v in params.items())


def optimization_history(rows, metric: str, minimize: bool = False, title: str = "", layout=None) -> go.Figure:
    """Each trial's value by trial number (pruned trials at their last reported value, grey), and the
    best so far as a step line."""
    traces = []
    for state in ("COMPLETE", "PRUNED"):
        pick = [r for r in rows if r["state"] == state and r["value"] is not None]
        if pick:
            traces.append(go.Scatter(
                x=[r["number"] for r in pick], y=[r["value"] for r in pick], mode="markers", name=state.lower(),
                marker=dict(color=STATE_COLOURS[state], size=9), text=[_text(r["params"]) for r in pick],
                hovertemplate=f"trial %{{x}}<br>{metric} %{{y:.4g}}<br>%{{text}}<extra></extra>"))
    done = sorted(_complete(rows), key=lambda r: r["number"])
    xs, best, ys = [], math.inf if minimize else -math.inf, []
    for r in done:
        best = min(best, r["value"]) if minimize else max(best, r["value"])
        xs.append(r["number"])
        ys.append(best)
    if xs:
        traces.append(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=EXPECTED_COLOUR, width=2, shape="hv"),
                                 name="best so far", hovertemplate=f"best {metric} %{{y:.4g}}<extra></extra>"))
    return figure(traces, title or f"Optimisation history: {metric}", 340, layout,
                  xaxis=dict(title="trial", rangemode="tozero"), yaxis=dict(title=metric), legend=LEGEND_BELOW)


def _dimension(name: str, values: list) -> dict:
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return dict(label=name, values=[float(v) for v in values])
    levels = sorted({str(v) for v in values})
    return dict(label=name, values=[levels.index(str(v)) for v in values], tickvals=list(range(len(levels))),
                ticktext=[hover(v) for v in levels])


def parallel_coordinates(rows, params, metric: str, title: str = "", layout=None) -> go.Figure:
    """The complete trials as lines through one axis per parameter and the objective, coloured by it
    (Viridis, 0..1 for an accuracy)."""
    done = _complete(rows)
    dims = [_dimension(p, [r["params"].get(p) for r in done]) for p in params
            if all(p in r["params"] for r in done)]
    values = [r["value"] for r in done]
    accuracy = metric != "val_loss"
    dims.append(dict(label=metric, values=values, **(dict(range=[0, 1]) if accuracy else {})))
    # no colorbar: the last axis is the objective, which the colour repeats (a bar beside it crowded a phone)
    line = dict(color=values, colorscale=SEARCH_SCALE, showscale=False, **(dict(cmin=0, cmax=1) if accuracy else {}))
    trace = go.Parcoords(dimensions=dims, line=line, labelangle=0, labelside="top")
    return figure([trace], title or "Trials in parallel coordinates", 380, layout,
                  margin=dict(l=60, r=50, t=90, b=30))


def importance_bars(importances: dict, title: str = "", layout=None) -> go.Figure:
    """Each parameter's share of the objective's variation (Optuna's evaluator), largest on top."""
    items = sorted(importances.items(), key=lambda kv: kv[1])
    trace = go.Bar(x=[v for _, v in items], y=[k for k, _ in items], orientation="h",
                   marker=dict(color=PALETTE[0], line=BAR_LINE),
                   hovertemplate="%{y}: %{x:.1%} of the variation<extra></extra>")
    return figure([trace], title or "Parameter importance", max(250, 110 + 36 * len(items)), layout,
                  xaxis=dict(title="share of the objective's variation", tickformat=".0%", range=[0, 1]),
                  yaxis=dict(type="category", ticksuffix="  "))  # a gap between a name and its bar


__all__ = ["SEARCH_SCALE", "optimization_history", "parallel_coordinates", "importance_bars"]
