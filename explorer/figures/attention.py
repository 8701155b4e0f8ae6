"""Attention figures: one head's weights, the mosaic of every head, the head slider, entropy per head."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from explorer.figures.layout import (
    BAR_LINE,
    CATEGORY_AXIS,
    COLORBAR,
    LEGEND_BELOW,
    PALETTE,
    as_array,
    as_list,
    cell_outlines,
    copy_figure,
    figure,
    hline,
    merge,
    pair_customdata,
    token_axis,
)
from explorer.quoting import hover

ATTENTION_SCALE = "Viridis"
MASK_GREY = "rgb(200,200,200)"
SLIDER_PX = 65  # a slider's rail and labels between a figure's title and its plot


def attention_heatmap(pattern, q_labels, k_labels, title="", expected=None, mask=None, zmax=1.0,
                      click_grid=False, slider=None, play=False, layout=None, size_px: float = 520) -> go.Figure:
    """One head's weights (Q, K): y = query in reading order, x = key.

    `expected` (Q, K) one-hot draws outlined squares over the cells the task calls right; `mask`
    (Q, K) bool, True = allowed, greys out the cells attention may not use (e.g. the future).
    `click_grid` lays a transparent scatter over the cells so `on_select` returns a cell.
    `slider` (`z_slider`) goes between the title and the heatmap, in a taller top margin; `play` puts
    a Play button left of it. `size_px`: the plot's longer side as the cells are sized (12 to 40 px each),
    for a narrow column.
    """
    z = as_array(pattern)  # (Q, K)
    q, k = z.shape
    traces = [go.Heatmap(
        z=z, x=list(range(k)), y=list(range(q)), zmin=0.0, zmax=zmax, colorscale=ATTENTION_SCALE,
        customdata=pair_customdata(q_labels, k_labels), name="attention",
        colorbar=dict(COLORBAR, title="weight"),
        hovertemplate="query %{customdata[0]} (pos %{y})<br>key %{customdata[1]} (pos %{x})"
                      "<br>weight %{z:.3f}<extra></extra>")]
    if mask is not None:
        blocked = ~np.asarray(mask, dtype=bool)
        traces.append(go.Heatmap(
            z=np.where(blocked, 1.0, np.nan), x=list(range(k)), y=list(range(q)), name="masked",
            colorscale=[[0, MASK_GREY], [1, MASK_GREY]], showscale=False, hoverongaps=False,
            hovertemplate="masked: query pos %{y} may not see key pos %{x}<extra></extra>"))
    if expected is not None:
        rows, cols = np.nonzero(as_array(expected) > 0.5)
        traces.append(cell_outlines(zip(rows, cols), "expected"))
    if click_grid:
        yy, xx = np.mgrid[0:q, 0:k]
        traces.append(go.Scatter(x=xx.ravel(), y=yy.ravel(), mode="markers", name="cells",
                                 marker=dict(size=18, symbol="square", opacity=0), showlegend=False,
                                 hoverinfo="skip"))
    cell = min(40, max(12, size_px // max(q, k)))
    height = 90 + q * cell + (30 if max(len(str(t)) for t in k_labels) > 3 else 0)
    if slider is not None:
        menus = [_PLAY_BUTTON] if play else []
        slider = {**slider, "x": 0.2, "len": 0.8} if play else slider
        layout = merge(dict(sliders=[slider], updatemenus=menus, margin=dict(t=60 + SLIDER_PX),
                            title=dict(yref="container", y=1.0, yanchor="top", pad=dict(t=12))), layout)
        height += SLIDER_PX
    return figure(traces, title, height, layout,
                  xaxis=dict(token_axis(k_labels, "key"), constrain="domain"), legend=LEGEND_BELOW,
                  yaxis=dict(token_axis(q_labels, "query"), autorange="reversed", scaleanchor="x",
                             constrain="domain"))


def z_slider(labels, zs, titles, active: int = 0) -> dict:
    """A slider (a layout `sliders` entry) whose steps swap trace 0's z and the figure's title in the
    browser: flipping through heads redraws one heatmap, with no rerun of the page. Step i's value is
    "i"; its label is its tick's text (blank ones keep many steps legible) and each title names its step."""
    steps = [dict(label=label, value=str(i), method="update",
                  args=[{"z": [np.round(as_array(z), 4).tolist()]}, {"title.text": title}, [0]])
             for i, (label, z, title) in enumerate(zip(labels, zs, titles))]
    return dict(active=active, steps=steps, currentvalue=dict(visible=False), transition=dict(duration=0),
                x=0.0, len=1.0, y=1.0, yanchor="bottom", pad=dict(t=0, b=10), font=dict(size=11))


# A button that does nothing in Plotly itself ("skip"): the page's slider component hears its click and
# walks the figure's slider to its end, in a few seconds (pages/slider_events.py).
_PLAY_BUTTON = dict(type="buttons", showactive=False, x=0.0, xanchor="left", y=1.0, yanchor="bottom",
                    pad=dict(t=0, b=22), buttons=[dict(label="▶ Play", method="skip", args=[None])])


def _slider_states(fig: go.Figure) -> list[tuple[str, list, str]]:
    """(value, z, title) of each step of a `z_slider` figure: what the browser swaps in."""
    steps = fig.layout.sliders[0].steps if fig.layout.sliders else ()
    return [(s.value, s.args[0]["z"][0], s.args[1]["title.text"]) for s in steps]


def slider_frames(fig: go.Figure) -> list[go.Figure]:
    """A `z_slider` figure as one still figure per step (the slider shows where it is; no Play), e.g. the
    frames of an animated GIF."""
    out = []
    for i, (_, z, title) in enumerate(_slider_states(fig)):
        still = copy_figure(fig)
        still.data[0].z = z
        still.layout.title.text = title
        still.layout.sliders[0].active = i
        still.layout.updatemenus = []
        out.append(still)
    return out


def playable(fig: go.Figure, frame_ms: int = 400) -> go.Figure:
    """A `z_slider` figure whose Play button and slider animate in Plotly itself, with no server behind
    the page (a standalone HTML report): the slider's steps become Plotly frames."""
    states = _slider_states(fig)
    out = copy_figure(fig)
    out.frames = [go.Frame(name=value, data=[go.Heatmap(z=z)], traces=[0], layout=dict(title=dict(text=title)))
                  for value, z, title in states]
    jump = dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0))
    out.layout.sliders[0].steps = [dict(s, method="animate", args=[[s["value"]], jump])
                                   for s in fig.layout.sliders[0].to_plotly_json()["steps"]]
    play = dict(mode="immediate", fromcurrent=False, frame=dict(duration=frame_ms, redraw=True),
                transition=dict(duration=0))
    if out.layout.updatemenus:
        out.layout.updatemenus[0].buttons[0].update(method="animate", args=[None, play])
    return out


def mosaic_layout(n_heads: int, n_query: int, n_key: int) -> dict:
    """Where the tiles of `attention_mosaic` sit: tile (l, h) covers rows l*row_stride + (0..Q-1)
    and columns h*col_stride + (0..K-1). Row gaps leave ~20 px for the tile titles."""
    tile_px = min(220.0, max(60.0, 640 / n_heads * n_query / n_key))  # drawn tile height
    row_gap = max(1, math.ceil(20 * n_query / tile_px))
    col_gap = max(1, round(0.15 * n_key))
    return dict(row_gap=row_gap, col_gap=col_gap, row_stride=n_query + row_gap, col_stride=n_key + col_gap,
                tile_px=tile_px)


def mosaic_grid(m: dict, n_layers: int, n_heads: int) -> tuple[int, int]:
    """Rows and columns of cells of the whole mosaic laid out by `m` (mosaic_layout), gaps included."""
    return n_layers * m["row_stride"] - m["row_gap"], n_heads * m["col_stride"] - m["col_gap"]


def attention_mosaic(patterns, q_labels, k_labels, title="", layer_names=None, layout=None,
                     mask=None) -> go.Figure:
    """Every head of every layer (L, H, Q, K) as one heatmap: rows = layers, columns = heads.

    One trace with NaN gaps, not a subplot a head: far quicker to draw (bench/README.md, "Attention mosaic").
    A row's first tile carries the layer's name, the others their head alone: on a phone's narrow tiles
    full names ran together ("layer 0 H0layer 0 H1").
    `mask` (Q, K) bool, True = allowed: the cells attention may not use are grey in every tile, as in
    `attention_heatmap`.
    """
    p = as_array(patterns)  # (L, H, Q, K)
    n_l, n_h, q, k = p.shape
    m = mosaic_layout(n_h, q, k)
    rs, cs = m["row_stride"], m["col_stride"]
    names = list(layer_names) if layer_names is not None else [f"L{i}" for i in range(n_l)]
    grid = np.full(mosaic_grid(m, n_l, n_h), np.nan)
    custom = np.full(grid.shape + (4,), "", dtype=object)
    tokens = pair_customdata([f"{t} (pos {i})" for i, t in enumerate(q_labels)],
                             [f"{t} (pos {j})" for j, t in enumerate(k_labels)])
    annotations = []
    for li in range(n_l):
        for hi in range(n_h):
            r0, c0 = li * rs, hi * cs
            grid[r0:r0 + q, c0:c0 + k] = p[li, hi]
            tile = custom[r0:r0 + q, c0:c0 + k]
            tile[..., 0], tile[..., 1], tile[..., 2:] = names[li], str(hi), tokens
            name = f"{names[li]} H{hi}".strip() if hi == 0 else f"H{hi}"
            annotations.append(dict(x=c0 - 0.5, y=r0 - 0.5, xref="x", yref="y", text=name,
                                    showarrow=False, xanchor="left", yanchor="bottom", font=dict(size=12)))
    heatmap = go.Heatmap(
        z=grid, customdata=custom, zmin=0.0, zmax=1.0, colorscale=ATTENTION_SCALE, hoverongaps=False,
        colorbar=dict(COLORBAR, title="weight"),
        hovertemplate="layer %{customdata[0]}, head %{customdata[1]}<br>query %{customdata[2]}"
                      "<br>key %{customdata[3]}<br>weight %{z:.3f}<extra></extra>")
    traces = [heatmap]
    blocked = None if mask is None else ~np.asarray(mask, dtype=bool)
    if blocked is not None and blocked.any():
        grey = np.full(grid.shape, np.nan)
        for li in range(n_l):
            for hi in range(n_h):
                grey[li * rs:li * rs + q, hi * cs:hi * cs + k][blocked] = 1.0
        traces.append(go.Heatmap(z=grey, colorscale=[[0, MASK_GREY], [1, MASK_GREY]], showscale=False,
                                 hoverongaps=False, name="masked", hoverinfo="skip"))
    axis = dict(showticklabels=False, showgrid=False, zeroline=False, ticks="")
    sharp = np.nan_to_num(p.max(axis=-1)).mean(axis=-1)                  # (L, H) each query's top weight, averaged
    li, hi = np.unravel_index(int(np.argmax(sharp)), sharp.shape)
    qi, ki = np.unravel_index(int(np.nanargmax(p[li, hi])), (q, k))
    summary = (f"{n_l} layers by {n_h} heads; the sharpest head is {names[li]} H{hi} (its queries' top weight "
               f"{sharp[li, hi]:.2f} on average), most of all from {hover(q_labels[qi])} (position {qi}) to "
               f"{hover(k_labels[ki])} (position {ki}) at {p[li, hi, qi, ki]:.2f}")   # describe.py reads it
    return figure(traces, title, 70 + n_l * m["tile_px"] * rs / q, layout, annotations=annotations,
                  meta=dict(m, summary=summary),
                  margin=dict(l=20, r=20), xaxis=dict(axis, range=[-0.5, grid.shape[1] - 0.5], constrain="domain"),
                  yaxis=dict(axis, range=[grid.shape[0] - 0.5, -m["row_gap"] - 0.5], scaleanchor="x",
                             constrain="domain"))


def attention_entropy_bars(entropy, layer_names=None, max_entropy=None, title="", layout=None) -> go.Figure:
    """Mean attention entropy per head (L, H), grouped by layer; low = focused, high = spread out."""
    e = as_array(entropy)  # (L, H)
    names = list(layer_names) if layer_names is not None else [f"L{i}" for i in range(e.shape[0])]
    bars = [go.Bar(x=names, y=as_list(e[:, h]), name=f"H{h}",
                   marker=dict(color=PALETTE[h % len(PALETTE)], line=BAR_LINE),
                   hovertemplate=f"layer %{{x}}, head {h}<br>entropy %{{y:.3f}} nats<extra></extra>")
            for h in range(e.shape[1])]
    line = {} if max_entropy is None else hline(max_entropy, f"uniform = {max_entropy:.2f}")
    return figure(bars, title or "Attention entropy per head", 360, layout, barmode="group", **line,
                  xaxis=dict(CATEGORY_AXIS, title="layer"), yaxis=dict(title="entropy (nats)"))


__all__ = ["ATTENTION_SCALE", "MASK_GREY", "SLIDER_PX", "attention_heatmap", "z_slider", "slider_frames", "playable",
           "mosaic_layout",
           "mosaic_grid", "attention_mosaic", "attention_entropy_bars"]
