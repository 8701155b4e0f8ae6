"""Figures that look deeper than attention (explorer.interpret): what knocking out a head costs, what each layer
already predicts, how much a patch restores, where the embeddings sit, and how heads change over training.

Fixed colour scales per family: a drop in a metric ABLATION_SCALE from 0; probabilities the outputs' scale
(0..1); a restored share and a cosine a diverging scale from -1 to 1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.figures import layout as house
from explorer.figures.layout import COLORBAR, PALETTE, as_array, as_list, figure, pair_customdata, token_axis
from explorer.figures.outputs import OUTPUT_SCALE
from explorer.quoting import hover, label

ABLATION_SCALE = "Reds"
DIVERGING_SCALE = "RdBu"
METRIC_LABELS = {"exact_drop": "drop in exact match", "token_acc_drop": "drop in token accuracy",
                 "loss_rise": "rise in loss (nats)"}
WHOLE = "all"   # the column of a whole sublayer beside its heads


def _click_grid(n_rows: int, cols: list[str], custom: list) -> go.Scatter:
    """Transparent markers over every cell: a heatmap reports no clicks, a scatter does (ARCHITECTURE.md)."""
    xs = [c for _ in range(n_rows) for c in cols]
    ys = [r for r in range(n_rows) for _ in cols]
    return go.Scatter(x=xs, y=ys, mode="markers", marker=dict(size=30, symbol="square", opacity=0),
                      customdata=custom, showlegend=False, name="cells", hoverinfo="skip")


def ablation_heatmap(table: pd.DataFrame, kinds, metric: str = "exact_drop", title: str = "",
                     focus: tuple[str, int, int] | None = None, names: dict | None = None,
                     label: str | None = None, layout: dict | None = None) -> go.Figure:
    """The heads of one attention kind, or of several stacked (rows: kind and layer, columns: heads, then "all"
    for the whole sublayer), coloured by what knocking each out costs (`metric`). Clickable: each cell's
    customdata is [kind, layer, head] (head -1 = all); `focus` (kind, layer, head) is outlined; `label` names
    the metric (METRIC_LABELS by default)."""
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    rows = table[table["kind"].isin(kinds)]
    keys = [(k, int(la)) for k in kinds for la in sorted(rows.loc[rows["kind"] == k, "layer"].unique())]
    heads = sorted(int(h) for h in rows["head"].dropna().unique())
    cols = [f"H{h}" for h in heads] + [WHOLE]
    z = np.full((len(keys), len(cols)), np.nan)
    for kind, layer, head, value in zip(rows["kind"], rows["layer"], rows["head"], rows[metric]):
        z[keys.index((kind, int(layer))), cols.index(WHOLE if pd.isna(head) else f"H{int(head)}")] = value
    zmax = 1.0 if metric != "loss_rise" else max(1.0, float(np.nanmax(z)) if np.isfinite(z).any() else 1.0)
    label = label or METRIC_LABELS.get(metric, metric)
    ticks = [(f"{(names or {}).get(k, k)} " if len(kinds) > 1 else "") + f"L{la}" for k, la in keys]
    heat = go.Heatmap(z=z, x=cols, y=list(range(len(keys))), zmin=0.0, zmax=zmax, colorscale=ABLATION_SCALE,
                      texttemplate="%{z:.2f}", textfont=dict(size=13), hoverongaps=False,
                      customdata=[[t] * len(cols) for t in ticks], showscale=False,   # the cells say it
                      hovertemplate=f"%{{customdata}}, %{{x}}<br>{label} %{{z:.3f}}<extra></extra>")
    custom = [[k, la, h] for k, la in keys for h in heads + [-1]]
    shapes = []
    if focus is not None and (focus[0], focus[1]) in keys:
        c, r = cols.index(WHOLE if focus[2] < 0 else f"H{focus[2]}"), keys.index((focus[0], focus[1]))
        shapes = [dict(type="rect", x0=c - 0.5, x1=c + 0.5, y0=r - 0.5, y1=r + 0.5, line=dict(color="black", width=3))]
    return figure([heat, _click_grid(len(keys), cols, custom)], title, 110 + 40 * len(keys), layout,
                  shapes=shapes, clickmode="event+select", xaxis=dict(house.CATEGORY_AXIS, title=f"head · {label}"),
                  yaxis=dict(tickmode="array", tickvals=list(range(len(keys))), ticktext=ticks, autorange="reversed"))


def parts_bars(table: pd.DataFrame, metric: str = "exact_drop", names: dict | None = None, title: str = "",
               label: str | None = None, layout: dict | None = None) -> go.Figure:
    """What knocking out each whole sublayer and each FFN costs, in forward order."""
    whole = table[table["head"].isna()]
    labels = [f"{(names or {}).get(k, k)} L{la}" for k, la in zip(whole["kind"], whole["layer"])]
    label = label or METRIC_LABELS.get(metric, metric)
    bar = go.Bar(x=labels, y=as_list(whole[metric]), marker=dict(color=PALETTE[1]),
                 hovertemplate=f"%{{x}}<br>{label} %{{y:.3f}}<extra></extra>")
    return figure([bar], title, 340, layout, xaxis=dict(house.CATEGORY_AXIS, tickangle=-30), yaxis=dict(title=label))


def lens_heatmap(p_correct, top_tokens, layer_names, position_labels, title: str = "",
                 layout: dict | None = None) -> go.Figure:
    """Layer x position: the probability each layer's residual gives the correct token (colour) and its
    likeliest token (text). top_tokens (L, T) strings."""
    z = as_array(p_correct)                                             # (L, T)
    tokens = np.asarray(top_tokens, dtype=object)
    text = np.vectorize(label, otypes=[object])(tokens) if tokens.size else tokens      # in the cells: short
    custom = np.dstack([pair_customdata(layer_names, position_labels),
                        np.vectorize(hover, otypes=[object])(tokens) if tokens.size else tokens])
    heat = go.Heatmap(z=z, x=list(range(z.shape[1])), y=list(range(z.shape[0])), zmin=0.0, zmax=1.0,
                      colorscale=OUTPUT_SCALE, text=text, texttemplate="%{text}",
                      textfont=dict(size=12 if z.shape[1] <= 16 else 9),   # a phone still fits 32 positions
                      customdata=custom, colorbar=dict(COLORBAR, title="p correct"),
                      hovertemplate="%{customdata[0]}, position %{x} (%{customdata[1]})<br>likeliest "
                                    "%{customdata[2]}<br>p(correct) %{z:.3f}<extra></extra>")
    return figure([heat], title, 130 + 52 * z.shape[0], layout, xaxis=token_axis(position_labels, "reads"),
                  yaxis=dict(title="layer", tickmode="array", tickvals=list(range(z.shape[0])),
                             ticktext=list(layer_names), autorange="reversed"))


def patching_heatmap(grid, x_labels, y_labels, x_name: str, title: str = "", layout: dict | None = None) -> go.Figure:
    """The share of the clean answer a patch restores, per (row, column): 1 = all of it, 0 = none, below 0 =
    it pushes the other way."""
    z = as_array(grid)
    xs = [str(x) for x in x_labels]
    heat = go.Heatmap(z=z, x=list(range(len(xs))), y=list(range(len(y_labels))), zmin=-1.0, zmax=1.0,
                      colorscale=DIVERGING_SCALE, texttemplate="%{z:.2f}", textfont=dict(size=12),
                      customdata=pair_customdata(y_labels, xs), showscale=False, hoverongaps=False,   # cells say it
                      hovertemplate=f"%{{customdata[0]}}, {x_name} %{{customdata[1]}}<br>restored %{{z:.2f}}"
                                    "<extra></extra>")
    return figure([heat], title, 130 + 46 * len(y_labels), layout, xaxis=token_axis(xs, x_name),
                  yaxis=dict(title="layer", tickmode="array", tickvals=list(range(len(y_labels))),
                             ticktext=[str(y) for y in y_labels], autorange="reversed"))


def embedding_scatter(coords, labels, explained=None, title: str = "", layout: dict | None = None) -> go.Figure:
    """Rows projected to 2-D or 3-D (N, 2|3), each labelled with its token; hover names it."""
    c = as_array(coords)
    labels, whole = [label(t) for t in labels], [hover(t) for t in labels]
    axes = [f"PC{i + 1}" + ("" if explained is None else f" ({explained[i]:.0%})") for i in range(c.shape[1])]
    common = dict(text=labels, customdata=whole, hovertemplate="%{customdata}<extra></extra>",
                  marker=dict(size=7 if c.shape[1] == 3 else 10, color=PALETTE[0]))
    if c.shape[1] == 3:
        trace = go.Scatter3d(x=as_list(c[:, 0]), y=as_list(c[:, 1]), z=as_list(c[:, 2]), mode="markers+text",
                             **common)
        scene = dict(xaxis=dict(title=axes[0]), yaxis=dict(title=axes[1]), zaxis=dict(title=axes[2]))
        return figure([trace], title, 520, layout, scene=scene, margin=dict(l=0, r=0, b=0))
    trace = go.Scatter(x=as_list(c[:, 0]), y=as_list(c[:, 1]), mode="markers+text", textposition="top center",
                       **common)
    return figure([trace], title, 460, layout, xaxis=dict(title=axes[0]), yaxis=dict(title=axes[1]))


def cosine_heatmap(cos, labels, title: str = "", layout: dict | None = None) -> go.Figure:
    """Cosine similarity of every pair of rows (N, N), from -1 to 1."""
    z = as_array(cos)
    labels = [str(t) for t in labels]
    heat = go.Heatmap(z=z, x=list(range(len(labels))), y=list(range(len(labels))), zmin=-1.0, zmax=1.0,
                      colorscale=DIVERGING_SCALE, customdata=pair_customdata(labels, labels),
                      colorbar=dict(COLORBAR, title="cosine"),
                      hovertemplate="%{customdata[0]} · %{customdata[1]}<br>cosine %{z:.2f}<extra></extra>")
    return figure([heat], title, 110 + max(10, min(36, 440 // max(1, len(labels)))) * len(labels), layout,
                  xaxis=dict(token_axis(labels, ""), constrain="domain"),
                  yaxis=dict(token_axis(labels, ""), autorange="reversed", scaleanchor="x", constrain="domain"))


def heads_over_training_lines(table: pd.DataFrame, metric: str = "match", uniform: float | None = None,
                              title: str = "", layout: dict | None = None) -> go.Figure:
    """Each head's `metric` (match or entropy) against the training step: colour per head, dash per layer."""
    traces = []
    for (layer, head), rows in table.sort_values("step").groupby(["layer", "head"]):
        traces.append(go.Scatter(
            x=as_list(rows["step"]), y=as_list(rows[metric]), mode="lines", name=f"L{layer} H{head}",
            line=dict(color=PALETTE[int(head) % len(PALETTE)], dash=("solid", "dash", "dot", "dashdot")[int(layer) % 4],
                      width=2),
            hovertemplate=f"L{layer} H{head}<br>step %{{x}}<br>{metric} %{{y:.3f}}<extra></extra>"))
    line = house.hline(uniform, f"uniform = {uniform:.2f}") if metric == "entropy" and uniform is not None else {}
    y = dict(title="match with the expected pattern", range=[0, 1.02]) if metric == "match" else dict(
        title="entropy (nats)")
    return figure(traces, title, 420, layout, **line, legend=house.LEGEND_BELOW, xaxis=dict(title="step"), yaxis=y)


__all__ = ["ABLATION_SCALE", "DIVERGING_SCALE", "METRIC_LABELS", "WHOLE", "ablation_heatmap", "cosine_heatmap",
           "embedding_scatter", "heads_over_training_lines", "lens_heatmap", "parts_bars", "patching_heatmap"]
