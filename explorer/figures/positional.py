"""Positional-encoding figures: the encoding table, and the similarity of positions."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.figures.layout import COLORBAR, as_array, figure, pair_customdata, token_axis

PE_SCALE = "RdBu"
SIMILARITY_SCALE = "RdBu"


def pe_heatmap(table, title="", layout=None) -> go.Figure:
    """Positional encodings (positions, d_model): y = position (0 at the top), x = dimension."""
    z = as_array(table)  # (P, d_model)
    heatmap = go.Heatmap(
        z=z, zmin=-1.0, zmax=1.0, zmid=0.0, colorscale=PE_SCALE, colorbar=COLORBAR,
        hovertemplate="position %{y}<br>dimension %{x}<br>value %{z:.3f}<extra></extra>")
    return figure([heatmap], title, min(700, 100 + 6 * z.shape[0]), layout, xaxis=dict(title="dimension"),
                  yaxis=dict(title="position", autorange="reversed"))


def similarity_heatmap(matrix, labels=None, title="", zmin=None, zmax=None, layout=None) -> go.Figure:
    """Square similarity matrix (e.g. cosine of PE vectors); symmetric scale around 0 by default."""
    z = as_array(matrix)  # (N, N)
    n = z.shape[0]
    if zmin is None or zmax is None:
        m = float(np.nanmax(np.abs(z))) or 1.0
        zmin, zmax = (-m if zmin is None else zmin), (m if zmax is None else zmax)
    labels = [str(x) for x in labels] if labels is not None else [str(i) for i in range(n)]
    heatmap = go.Heatmap(
        z=z, x=list(range(n)), y=list(range(n)), zmin=zmin, zmax=zmax, colorscale=SIMILARITY_SCALE,
        customdata=pair_customdata(labels, labels), colorbar=COLORBAR,
        hovertemplate="%{customdata[0]} vs %{customdata[1]}<br>similarity %{z:.3f}<extra></extra>")
    return figure([heatmap], title, min(700, 120 + 12 * n), layout,
                  xaxis=dict(token_axis(labels, "", 16), constrain="domain"),
                  yaxis=dict(token_axis(labels, "", 16), autorange="reversed", scaleanchor="x",
                             constrain="domain"))


__all__ = ["PE_SCALE", "SIMILARITY_SCALE", "pe_heatmap", "similarity_heatmap"]
