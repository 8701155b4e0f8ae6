"""Gradient figures: norms per layer over training steps, and per layer across variants."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from explorer.figures.layout import COLORBAR, PALETTE, as_array, as_list, figure, token_axis

GRAD_SCALE = "Plasma"


def grad_norm_heatmap(norms, layer_labels, steps=None, title="", log_range=None, layout=None) -> go.Figure:
    """Gradient norm per layer (n_layers, n_steps) on a log10 colour scale; first layer at the
    bottom, real values in the hover. `log_range` = (lo, hi) in log10 units fixes the scale."""
    g = as_array(norms)  # (n_layers, n_steps)
    steps = list(range(g.shape[1])) if steps is None else [int(s) for s in steps]
    z = np.log10(np.clip(g, 1e-12, None))
    lo, hi = log_range or (math.floor(np.nanmin(z)), math.ceil(np.nanmax(z)))
    hi = max(hi, lo + 1)
    ticks = list(range(int(lo), int(hi) + 1))
    heatmap = go.Heatmap(
        z=z, x=steps, y=list(range(g.shape[0])), zmin=lo, zmax=hi, colorscale=GRAD_SCALE,
        customdata=np.stack([g, np.broadcast_to(np.array(layer_labels, dtype=object)[:, None], g.shape)],
                            axis=-1),
        colorbar=dict(COLORBAR, title="‖grad‖", tickvals=ticks, ticktext=[f"1e{t}" for t in ticks]),
        hovertemplate="layer %{customdata[1]}<br>step %{x}<br>‖grad‖ %{customdata[0]:.3g}<extra></extra>")
    return figure([heatmap], title, 100 + g.shape[0] * min(40, max(14, 500 // g.shape[0])), layout,
                  xaxis=dict(title="step"), yaxis=token_axis(layer_labels, "layer"))


def grad_norm_profile(profiles, title="", layout=None, labels=None) -> go.Figure:
    """Per-layer gradient norms of several variants ("Pre-LN", "Post-LN"), log y; `labels` names the
    layers on the x axis ("enc 0", "dec 0", ...), else they are numbered from 0."""
    lines = []
    for i, (name, v) in enumerate(profiles.items()):
        y = as_list(v)
        names = [str(t) for t in labels] if labels is not None else list(range(len(y)))
        lines.append(go.Scatter(
            x=list(range(len(y))), y=y, mode="lines+markers", name=name, line=dict(color=PALETTE[i % len(PALETTE)]),
            customdata=names, hovertemplate=f"{name}<br>layer %{{customdata}}<br>‖grad‖ %{{y:.3g}}<extra></extra>"))
    xaxis = dict(title="layer (0 = first)", dtick=1)
    if labels is not None:
        xaxis = dict(title="layer, first to last", tickmode="array", tickvals=list(range(len(labels))),
                     ticktext=[str(t) for t in labels])
    return figure(lines, title, 380, layout, xaxis=xaxis, yaxis=dict(title="gradient norm", type="log"))


__all__ = ["GRAD_SCALE", "grad_norm_heatmap", "grad_norm_profile"]
