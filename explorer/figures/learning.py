"""How a model learned (issue 38): each head's induction score over training beside the repeated half's loss,
grokking's accuracies and weight norm by step (log axis), and the Fourier spectrum of the embeddings."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from explorer.figures.layout import COLORBAR, LEGEND_BELOW, PALETTE, as_list, figure

SHARE_SCALE = "Viridis"   # a frequency's share of the embeddings' norm, 0..1


def induction_over_training(table: pd.DataFrame, history: pd.DataFrame | None = None, metric: str = "induction",
                            title: str = "", layout: dict | None = None) -> go.Figure:
    """One line per head (`metric` of explorer.interpret.learning.induction_over_training, 0..1), and the loss on
    the repeated half (`repeat_loss` of the history) on the right axis: the phase change is where both bend."""
    traces = []
    for i, ((layer, head), rows) in enumerate(table.groupby(["layer", "head"])):
        name = f"layer {layer} head {head}"
        traces.append(go.Scatter(x=as_list(rows["step"]), y=as_list(rows[metric]), mode="lines", name=name,
                                 line=dict(color=PALETTE[i % len(PALETTE)], width=2, dash="solid" if layer else "dot"),
                                 hovertemplate=f"{name}<br>step %{{x}}<br>{metric} %{{y:.2f}}<extra></extra>"))
    style = dict(xaxis=dict(title="step"), yaxis=dict(title=f"{metric.replace('_', '-')} score", range=[0, 1]),
                 legend=LEGEND_BELOW)
    if history is not None and "repeat_loss" in history:
        rows = history[["step", "repeat_loss"]].dropna()
        traces.append(go.Scatter(x=as_list(rows["step"]), y=as_list(rows["repeat_loss"]), mode="lines", yaxis="y2",
                                 name="loss on the repeated half", line=dict(color="black", width=3),
                                 hovertemplate="step %{x}<br>repeat loss %{y:.3f}<extra></extra>"))
        style["yaxis2"] = dict(title="loss on the repeated half (nats)", overlaying="y", side="right",
                               showgrid=False, rangemode="tozero")
    return figure(traces, title, 420, layout, **style)


def grokking_curves(frame: pd.DataFrame, title: str = "", layout: dict | None = None) -> go.Figure:
    """Training and validation accuracy by step on a log axis, the total weight norm on the right axis
    (columns of explorer.interpret.learning.grokking_curves)."""
    traces = []
    for i, (column, name) in enumerate((("train_acc", "training accuracy"), ("val_acc", "validation accuracy"))):
        rows = frame[["step", column]].dropna()
        traces.append(go.Scatter(x=as_list(rows["step"]), y=as_list(rows[column]), mode="lines", name=name,
                                 line=dict(color=PALETTE[i], width=2),
                                 hovertemplate=f"{name}<br>step %{{x}}<br>%{{y:.1%}}<extra></extra>"))
    style = dict(xaxis=dict(title="step (log)", type="log"), yaxis=dict(title="accuracy", tickformat=".0%",
                                                                        range=[0, 1.02]), legend=LEGEND_BELOW)
    if "weight_norm" in frame:
        rows = frame[["step", "weight_norm"]].dropna()
        traces.append(go.Scatter(x=as_list(rows["step"]), y=as_list(rows["weight_norm"]), mode="lines", yaxis="y2",
                                 name="weight norm", line=dict(color="black", width=2, dash="dot"),
                                 hovertemplate="step %{x}<br>weight norm %{y:.1f}<extra></extra>"))
        style["yaxis2"] = dict(title="weight norm", overlaying="y", side="right", showgrid=False, rangemode="tozero")
    return figure(traces, title, 420, layout, **style)


def fourier_spectrum(spectrum: pd.DataFrame, title: str = "", layout: dict | None = None) -> go.Figure:
    """Step x frequency: the share of the token embeddings' norm each frequency carries (0..1, fixed scale;
    columns of explorer.interpret.learning.spectrum_over_training)."""
    grid = spectrum.pivot(index="frequency", columns="step", values="share")
    heat = go.Heatmap(z=grid.to_numpy().tolist(), x=[str(s) for s in grid.columns], y=as_list(grid.index),
                      zmin=0.0, zmax=1.0, colorscale=SHARE_SCALE, colorbar=dict(COLORBAR, title="share"),
                      hovertemplate="step %{x}<br>frequency %{y}<br>share %{z:.1%}<extra></extra>")
    return figure([heat], title, 460, layout, xaxis=dict(title="step", type="category", nticks=12),
                  yaxis=dict(title="frequency k (cos and sin of 2πka/p)"))


__all__ = ["SHARE_SCALE", "induction_over_training", "grokking_curves", "fourier_spectrum"]
