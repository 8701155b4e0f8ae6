"""A multi-objective study's Pareto front: every complete trial at its first two metrics, the front (no
trial better on every metric) joined and marked, each point carrying its trial number (`customdata`) so a
click picks the trial. Pure: rows in (explorer/search/study.py, trial_rows with `values`), figure out."""

from __future__ import annotations

import plotly.graph_objects as go

from explorer.figures.layout import LEGEND_BELOW, PALETTE, figure
from explorer.quoting import hover

OTHERS_COLOUR = "#8a96a3"
LOG_METRICS = ("params",)   # counts over orders of magnitude: a log axis


def _text(params: dict) -> str:
    return "<br>".join(hover(f"{k} = {v:.3g}" if isinstance(v, float) else f"{k} = {v}") for k, v in params.items())


def pareto_front(rows, names, front_numbers, title: str = "", layout=None) -> go.Figure:
    """`names[0]` (up) against `names[1]` (across) for every complete trial; `front_numbers` the trials on
    the front, joined in order along the x axis and drawn larger."""
    y_name, x_name = names[0], names[1]
    done = [r for r in rows if r["state"] == "COMPLETE" and r.get("values")
            and r["values"].get(x_name) is not None and r["values"].get(y_name) is not None]
    on = sorted((r for r in done if r["number"] in set(front_numbers)), key=lambda r: r["values"][x_name])
    off = [r for r in done if r["number"] not in set(front_numbers)]
    template = (f"trial %{{customdata}}<br>{hover(y_name)} %{{y:.4g}}<br>{hover(x_name)} %{{x:.4g}}"
                "<br>%{text}<extra></extra>")
    traces = []
    for pick, name, style in ((off, "other trials", dict(color=OTHERS_COLOUR, size=9)),
                              (on, "Pareto front", dict(color=PALETTE[0], size=13, line=dict(width=1, color="white")))):
        traces.append(go.Scatter(
            x=[r["values"][x_name] for r in pick], y=[r["values"][y_name] for r in pick], name=name,
            mode="lines+markers" if pick is on else "markers", marker=style,
            line=dict(color=PALETTE[0], width=1.5, shape="hv") if pick is on else None,
            customdata=[r["number"] for r in pick], text=[_text(r["params"]) for r in pick],
            hovertemplate=template))
    return figure(traces, title or f"Pareto front: {y_name} against {x_name}", 360, layout,
                  xaxis=dict(title=x_name, type="log" if x_name in LOG_METRICS else "linear"),
                  yaxis=dict(title=y_name, type="log" if y_name in LOG_METRICS else "linear"),
                  legend=LEGEND_BELOW, clickmode="event+select")


__all__ = ["pareto_front"]
