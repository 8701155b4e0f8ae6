"""Result figures: a two-parameter grid of values, and mean ± std bars beside what was predicted."""

from __future__ import annotations

import plotly.graph_objects as go

from explorer.figures.layout import (
    BAR_LINE,
    CATEGORY_AXIS,
    COLORBAR,
    EXPECTED_COLOUR,
    HOUSE,
    LEGEND_BELOW,
    PALETTE,
    as_array,
    as_list,
    figure,
)
from explorer.quoting import hover

SWEEP_SCALE = "Greens"


def sweep_heatmap(values, x_labels, y_labels, x_name, y_name, title="", zmin=0.0, zmax=1.0,
                  layout=None) -> go.Figure:
    """Result grid of a two-parameter sweep, values written in the cells (NaN = not run)."""
    z = as_array(values)  # (len(y_labels), len(x_labels))
    xs, ys = [hover(x) for x in x_labels], [hover(y) for y in y_labels]
    heatmap = go.Heatmap(
        z=z, x=xs, y=ys, zmin=zmin, zmax=zmax, colorscale=SWEEP_SCALE, texttemplate="%{z:.2f}",
        textfont=dict(size=13), hoverongaps=False, colorbar=COLORBAR,
        hovertemplate=f"{x_name} %{{x}}<br>{y_name} %{{y}}<br>value %{{z:.3f}}<extra></extra>")
    return figure([heatmap], title, 120 + 44 * len(ys), layout, xaxis=dict(title=x_name, type="category"),
                  yaxis=dict(title=y_name, type="category"))


def bar_with_error(names, means, stds, title="", y_title="", reference=None, layout=None) -> go.Figure:
    """Experiment results as mean ± std bars; `reference` name -> value marks what the seed predicts."""
    names = [hover(n) for n in names]
    traces = [go.Bar(
        x=names, y=as_list(means),
        error_y=dict(type="data", array=as_list(stds), visible=True, color=HOUSE["font"]["color"]),
        marker=dict(color=PALETTE[0], line=BAR_LINE), name="measured", customdata=as_list(stds),
        hovertemplate=f"%{{x}}<br>{y_title or 'value'} %{{y:.4g}} ± %{{customdata:.3g}}<extra></extra>")]
    if reference:
        traces.append(go.Scatter(
            x=[hover(k) for k in reference], y=list(reference.values()), mode="markers",
            name="the seed predicts", marker=dict(symbol="diamond", size=13, color=EXPECTED_COLOUR),
            hovertemplate="%{x}<br>expected %{y:.4g}<extra></extra>"))
    return figure(traces, title, 380, layout, xaxis=CATEGORY_AXIS, yaxis=dict(title=y_title),
                  legend=LEGEND_BELOW)


__all__ = ["SWEEP_SCALE", "sweep_heatmap", "bar_with_error"]
