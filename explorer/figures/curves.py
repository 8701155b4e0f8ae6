"""Curves: lines with optional bands (mean ± std over seeds), and metrics of runs against the step."""

from __future__ import annotations

import plotly.graph_objects as go

from explorer.figures.layout import LEGEND_BELOW, PALETTE, as_list, figure
from explorer.quoting import hover

_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def line_chart(series, title="", x_title="", y_title="", log_y=False, bands=None, layout=None,
               dashed=False) -> go.Figure:
    """Lines `name -> (x, y)`; `bands` `name -> (x, lo, hi)` shade a range (mean ± std over seeds)
    in the colour of the line with the same name. `dashed` keeps lines that coincide visible: each
    one dashed differently and a little thinner than the one before."""
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(list(series) + list(bands or {}))}
    traces = []
    for name, (x, lo, hi) in (bands or {}).items():
        x = as_list(x)
        traces.append(go.Scatter(
            x=x + x[::-1], y=as_list(hi) + as_list(lo)[::-1], fill="toself", mode="lines",
            line=dict(width=0), fillcolor=colours[name], opacity=0.2, name=f"{name} band",
            showlegend=False, hoverinfo="skip"))
    for i, (key, (x, y)) in enumerate(series.items()):
        x, y, name = as_list(x), as_list(y), hover(key)
        few = len(x) < 4  # a line through one point draws nothing: mark the points
        line = dict(dash=_DASHES[i % len(_DASHES)], width=4 - 0.7 * i) if dashed else dict(width=2)
        traces.append(go.Scatter(x=x, y=y, mode="lines+markers" if few else "lines", name=str(name),
                                 connectgaps=True,
                                 line=dict(color=colours[key], **line),
                                 hovertemplate=f"{name}<br>{x_title or 'x'} %{{x}}<br>"
                                               f"{y_title or 'y'} %{{y:.4g}}<extra></extra>"))
    return figure(traces, title, 380, layout, xaxis=dict(title=x_title),
                  yaxis=dict(title=y_title, type="log" if log_y else "linear"))


def training_curves(history, metrics=("loss",), title="", log_y=False, layout=None, percent=False) -> go.Figure:
    """Metric columns of a history DataFrame against its "step" column (NaN = not measured that
    step). A dict run name -> DataFrame overlays runs: colour per run, dash per metric; a single
    run gets a colour per metric. "lr" goes on a second axis on the right. `percent`: the metrics are
    shares (0..1), shown as percentages like every other accuracy in the app."""
    runs = history if isinstance(history, dict) else {"": history}
    traces = []
    for ri, (run, df) in enumerate(runs.items()):
        for mi, metric in enumerate(metrics):
            if metric not in df.columns:
                continue
            rows = df[["step", metric]].dropna()
            colour = PALETTE[(ri if len(runs) > 1 else mi) % len(PALETTE)]
            name = hover(f"{run} · {metric}" if run else metric)
            traces.append(go.Scatter(
                x=as_list(rows["step"]), y=as_list(rows[metric]), mode="lines", name=name, connectgaps=True,
                yaxis="y2" if metric == "lr" else "y",
                line=dict(color=colour, width=2, dash=_DASHES[mi % len(_DASHES)] if len(runs) > 1 else None),
                hovertemplate=f"{name}<br>step %{{x}}<br>%{{y:{'.1%' if percent else '.4g'}}}<extra></extra>"))
    style = dict(xaxis=dict(title="step"), hovermode="closest",
                 yaxis=dict(title=", ".join(m for m in metrics if m != "lr"), type="log" if log_y else "linear",
                            **(dict(tickformat=".0%", range=[0, 1.02]) if percent else {})),
                 legend=LEGEND_BELOW)
    if "lr" in metrics:
        style["yaxis2"] = dict(title="lr", overlaying="y", side="right", showgrid=False, tickformat=".1e")
    return figure(traces, title, 400, layout, **style)


__all__ = ["line_chart", "training_curves"]
