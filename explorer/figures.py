"""Pure figure builders: numpy / pandas data in, `plotly.graph_objects.Figure` out.

Nothing here trains, builds a model or imports Streamlit. Colour scales are fixed per figure
family (attention 0..1, positional encodings -1..1) so that heads, layers and runs compare by eye.
Token axes are positional (0..n-1) with the tokens as tick text, so repeated tokens stay distinct.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import qualitative

from explorer import diagram
from explorer.config import human

ATTENTION_SCALE = "Viridis"
OUTPUT_SCALE = "Blues"
PE_SCALE = "RdBu"
SIMILARITY_SCALE = "RdBu"
GRAD_SCALE = "Plasma"
SWEEP_SCALE = "Greens"
PALETTE = qualitative.Plotly
MASK_GREY = "rgb(200,200,200)"
EXPECTED_COLOUR = "#ff2d55"
MIN_HEIGHT = 250
SLIDER_PX = 65  # a slider's rail and labels between a figure's title and its plot
# plotly_white's look (the parts a 2-D chart uses), written into each figure's layout rather than attached
# as a template. Streamlit's chart hands Plotly a fresh copy of every new figure right after drawing it;
# a template is an object Plotly cannot compare, so a copy with one is recalculated and redrawn in full,
# while a copy without one, with a fixed `datarevision` (below), is seen as unchanged (bench/README.md,
# session 9: "Every new chart was drawn twice"). Also faster to build: assigning a template deep-copies it.
HOUSE = dict(autotypenumbers="strict", colorway=PALETTE, font=dict(color="#2a3f5f"), hovermode="closest",
             hoverlabel=dict(align="left"), paper_bgcolor="white", plot_bgcolor="white",
             shapedefaults=dict(line=dict(color="#2a3f5f")),
             annotationdefaults=dict(arrowcolor="#2a3f5f", arrowhead=0, arrowwidth=1))
# ticklabeloverflow "allow": automargin already makes room for every label, and Plotly's default for a
# linear axis measures each label again to hide any past the div (bench/README.md, session 9: "the overflow pass").
AXIS = dict(gridcolor="#EBF0F8", ticks="", zerolinecolor="#EBF0F8", zerolinewidth=2, ticklabeloverflow="allow",
            automargin=True)
# Plotly draws no grid or zero line along a category axis, unless their colours are given, as AXIS does.
CATEGORY_AXIS = dict(type="category", showgrid=False, zeroline=False)
# Colorbars sit at the plot's right edge (x=1, not Plotly's 1.02 of the plot's width), padded COLORBAR_PAD
# px each side, so the room one takes does not depend on the chart's width, unknown until it is drawn.
COLORBAR_PAD = 14
COLORBAR = dict(thickness=14, outlinewidth=0, x=1.0, xpad=COLORBAR_PAD)
BAR_LINE = dict(color="white", width=0.5)
# No template at all: plotly's default is one, and importing Streamlit's plotly module makes "streamlit" it.
pio.templates.default = None


def _arr(x) -> np.ndarray:
    if hasattr(x, "detach"):  # a torch tensor: no torch import needed here
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=float)


def _list(x) -> list:
    """A 1-D series as a plain list. plotly sends a numpy array as a typed array, which Plotly cannot
    compare: every copy Streamlit hands it would be recalculated and drawn again (see HOUSE)."""
    return _arr(x).tolist()


def _no_template() -> None:
    if pio.templates.default is not None:
        pio.templates.default = None


def _merge(base: dict, extra: dict | None) -> dict:
    """base updated by extra; a dict value (an axis, the margin) is merged one level down, so a page
    that sets an axis's title keeps the builder's tick labels."""
    out = dict(base)
    for key, value in (extra or {}).items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = {**out[key], **value} if both else value
    return out


def _house(layout: dict) -> dict:
    """layout over HOUSE, and every axis it names (x and y at least) over AXIS, with a title standoff."""
    out = _merge(HOUSE, layout)
    for name in {"xaxis", "yaxis", *(k for k in layout if k.startswith(("xaxis", "yaxis")))}:
        axis = dict(out.get(name) or {})
        title = axis.get("title")
        title = {"text": title} if isinstance(title, str) else dict(title or {})
        if title.get("text"):  # (Plotly 4 keeps room for the standoff of an empty title too)
            axis["title"] = {"standoff": 15, **title}
        out[name] = {**AXIS, **axis}
    return out


# Plotly makes room for colorbars, legends and axis labels by growing the margins, and a margin that grows
# makes it draw the whole chart again (bench/README.md, session 10: "Charts still drew twice").
# So each figure starts with margins that already hold what it puts in them (`_make_room`), from its
# text measured erring wide (`_text_px`); a wider font still only costs the second draw. Sizes in px, Plotly's
# own (12 px labels, 14 px titles), measured in Chromium with a little to spare.
X_LABELS_PX = 28    # an x axis's tick labels, under the plot
AXIS_TITLE_PX = 27  # an axis title and its standoff
Y_LABELS_GAP = 12   # a y axis's labels: their width and this
LEGEND_ROW_PX = 32  # a horizontal legend of one row, and LEGEND_LINE_PX more for each further row
LEGEND_LINE_PX = 20
LEGEND_ITEM_PX = 58  # a legend's item: its name and this (symbol, gaps)
# The plot's width is unknown until drawn; where it matters (a horizontal legend wraps at it, x labels too
# wide for their spacing are turned upright) assume a chart half a laptop's page wide.
PLOT_PX = 380
# A legend under the plot sits at the figure's bottom edge, under the axis title: placed a fraction of the
# plot's height below the plot, it ran into the axis's labels when a narrow chart turned them upright.
LEGEND_BELOW = dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0)


def _text_px(text: str, size: float = 12) -> float:
    """Width of `text` in Plotly's default font ("Open Sans", verdana, arial), erring wide: Verdana's
    widths, the widest of the three and what Windows and macOS draw, by kind of character."""
    narrow = sum(c in " .,:;'|!()-ijlftr" for c in text)
    caps = sum(c.isupper() for c in text)
    return size * (0.36 * narrow + 0.78 * caps + 0.66 * (len(text) - narrow - caps))


def _tick_labels(axis: dict, traces, letter: str) -> list[str]:
    """The labels an axis writes: its tick text, its categories, or for numbers a wide guess."""
    if axis.get("showticklabels") is False or axis.get("visible") is False:
        return []
    if axis.get("ticktext") is not None:
        return [str(t) for t in axis["ticktext"]]
    if axis.get("type") == "category":
        return [str(v) for t in traces for v in (getattr(t, letter, None) or ())]
    return ["0.001" if axis.get("type") == "log" else "0.5"]


def _x_labels_px(labels: list[str], angle) -> float:
    """The height an x axis's labels take under the plot. Labels too wide for their spacing Plotly turns
    30 degrees, or upright when even that overlaps (their spacing, turned, under the 12 px font), unless
    `angle` is set."""
    if not labels:
        return 0.0
    widest, spacing = max(map(_text_px, labels)), PLOT_PX / len(labels)
    if angle is None:
        angle = 0 if widest < spacing else 30 if spacing * math.sin(math.radians(30)) >= 12 else 90
    turn = math.radians(abs(angle))
    return max(X_LABELS_PX, widest * math.sin(turn) + 15 * math.cos(turn) + 13)


def _y_labels_px(labels: list[str]) -> float:
    """The width a y axis's labels take beside the plot."""
    return max(map(_text_px, labels)) + Y_LABELS_GAP if labels else 0.0


def _colorbar_px(trace) -> float:
    """The width a trace's colorbar takes right of the plot, paddings included (0 without one)."""
    if getattr(trace, "colorbar", None) is None or trace.showscale is False:
        return 0.0
    bar = trace.colorbar
    if bar.ticktext is not None:
        labels = list(bar.ticktext)
    else:
        labels = ["−0.5" if (trace.zmin or 0) < 0 else "0.5", f"{trace.zmax or 1:g}", f"{trace.zmin or 0:g}"]
    title = bar.title.text or ""
    inner = max(bar.thickness + 11 + max(_text_px(t) for t in labels), _text_px(title, 14) + 11)
    return 2 * (bar.xpad if bar.xpad is not None else 10) + inner


def _make_room(layout: dict, traces) -> None:
    """Grow each side of layout["margin"] to hold what Plotly would grow it for (see X_LABELS_PX); a legend
    beside the plot goes at its edge, as colorbars do (COLORBAR_PAD)."""
    margin = layout["margin"]
    need = dict(l=0.0, r=0.0, t=0.0, b=0.0)
    for name, axis in layout.items():
        if not name.startswith(("xaxis", "yaxis")):
            continue
        labels = _tick_labels(axis, traces, name[0])
        title = AXIS_TITLE_PX if (axis.get("title") or {}).get("text") else 0
        if name[0] == "x":
            side, block = "t" if axis.get("side") == "top" else "b", _x_labels_px(labels, axis.get("tickangle"))
        else:
            side, block = "r" if axis.get("side") == "right" else "l", _y_labels_px(labels)
        need[side] = max(need[side], block + title)
    need["r"] = max([need["r"], *(_colorbar_px(t) for t in traces)])
    legend = layout.get("legend") or {}
    items = [t for t in traces if t.showlegend or (t.showlegend is None and t.type in ("scatter", "bar"))]
    if items and layout.get("showlegend", len(items) >= 2 or any(t.showlegend for t in items)):
        widths = [LEGEND_ITEM_PX + _text_px(str(t.name or "")) for t in items]
        if legend.get("yref") == "container" and legend.get("y") == 0:  # LEGEND_BELOW, under the axis
            rows = math.ceil(sum(widths) / PLOT_PX)
            need["b"] += LEGEND_ROW_PX + LEGEND_LINE_PX * (rows - 1)
        elif legend.get("orientation") != "h" and "x" not in legend:  # Plotly's place: beside the plot
            layout["legend"] = {"x": 1.0, "xanchor": "left", **legend}
            need["r"] = max(need["r"], max(widths))
    layout["margin"] = {side: max(margin[side], math.ceil(need[side])) for side in margin}


def _figure(traces, title: str, height: float, layout: dict | None = None, **style) -> go.Figure:
    """The figure in one constructor call: the house style, the builder's `style`, then the caller's
    `layout` on top. Plotly validates a layout given up front once; `update_layout` / `add_hline` on a
    built figure go through its relayout machinery, milliseconds a call (bench/README.md, "The app": where
    a view change goes), and a page redraws several. `datarevision` stays 0: a figure's data never changes
    in place (a new figure is a new chart), so Plotly need not compare the arrays of the copy Streamlit
    hands it (see HOUSE)."""
    _no_template()
    base = dict(title=dict(text=title, x=0.0, xanchor="left"), height=max(MIN_HEIGHT, int(height)),
                margin=dict(l=60, r=30, t=60 if title else 30, b=50), datarevision=0)
    full = _house(_merge(_merge(base, style), layout))
    _make_room(full, traces)
    return go.Figure(data=traces, layout=full)


def _hline(y: float, text: str, left: bool = False) -> dict:
    """A dashed horizontal reference line across the plot with its label, as layout entries."""
    line = dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=y, y1=y,
                line=dict(dash="dash", color="grey"))
    label = dict(xref="x domain", x=0 if left else 1, xanchor="left" if left else "right", yref="y", y=y,
                 yanchor="bottom", text=text, showarrow=False)
    return dict(shapes=[line], annotations=[label])


def _token_axis(labels, title: str, max_ticks: int = 30) -> dict:
    """Positional axis with the tokens as tick text; thinned when there are too many to read."""
    labels = [str(t) for t in labels]
    step = max(1, math.ceil(len(labels) / max_ticks))
    idx = list(range(0, len(labels), step))
    return dict(title=title, tickmode="array", tickvals=idx, ticktext=[labels[i] for i in idx],
                showgrid=False, zeroline=False)


def _cell_outlines(cells, name: str, colour: str = EXPECTED_COLOUR) -> go.Scatter:
    """Square outlines around (row, col) cells, in data units so they scale with the heatmap."""
    xs, ys = [], []
    for r, c in cells:
        xs += [c - 0.45, c + 0.45, c + 0.45, c - 0.45, c - 0.45, None]
        ys += [r - 0.45, r - 0.45, r + 0.45, r + 0.45, r - 0.45, None]
    return go.Scatter(x=xs, y=ys, mode="lines", name=name, hoverinfo="skip",
                      line=dict(color=colour, width=2.5), showlegend=True)


def _pair_customdata(rows, cols) -> np.ndarray:
    rows, cols = [str(t) for t in rows], [str(t) for t in cols]
    data = np.empty((len(rows), len(cols), 2), dtype=object)
    data[:, :, 0] = np.array(rows, dtype=object)[:, None]
    data[:, :, 1] = np.array(cols, dtype=object)[None, :]
    return data


def architecture_diagram(cfg, **kwargs) -> go.Figure:
    """The block diagram of a config (explorer/diagram.py); it sets every colour itself."""
    _no_template()
    return diagram.architecture_diagram(cfg, **kwargs)


# ----------------------------------------------------------------------------------- attention

def attention_heatmap(pattern, q_labels, k_labels, title="", expected=None, mask=None, zmax=1.0,
                      click_grid=False, slider=None, play=False, layout=None) -> go.Figure:
    """One head's weights (Q, K): y = query in reading order, x = key.

    `expected` (Q, K) one-hot draws outlined squares over the cells the task calls right; `mask`
    (Q, K) bool, True = allowed, greys out the cells attention may not use (e.g. the future).
    `click_grid` lays a transparent scatter over the cells so `on_select` returns a cell.
    `slider` (`z_slider`) goes between the title and the heatmap, in a taller top margin; `play` puts
    a Play button left of it.
    """
    z = _arr(pattern)  # (Q, K)
    q, k = z.shape
    traces = [go.Heatmap(
        z=z, x=list(range(k)), y=list(range(q)), zmin=0.0, zmax=zmax, colorscale=ATTENTION_SCALE,
        customdata=_pair_customdata(q_labels, k_labels), name="attention",
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
        rows, cols = np.nonzero(_arr(expected) > 0.5)
        traces.append(_cell_outlines(zip(rows, cols), "expected"))
    if click_grid:
        yy, xx = np.mgrid[0:q, 0:k]
        traces.append(go.Scatter(x=xx.ravel(), y=yy.ravel(), mode="markers", name="cells",
                                 marker=dict(size=18, symbol="square", opacity=0), showlegend=False,
                                 hoverinfo="skip"))
    cell = min(40, max(12, 520 // max(q, k)))
    height = 90 + q * cell + (30 if max(len(str(t)) for t in k_labels) > 3 else 0)
    if slider is not None:
        menus = [_PLAY_BUTTON] if play else []
        slider = {**slider, "x": 0.2, "len": 0.8} if play else slider
        layout = _merge(dict(sliders=[slider], updatemenus=menus, margin=dict(t=60 + SLIDER_PX),
                             title=dict(yref="container", y=1.0, yanchor="top", pad=dict(t=12))), layout)
        height += SLIDER_PX
    return _figure(traces, title, height, layout,
                   xaxis=dict(_token_axis(k_labels, "key"), constrain="domain"), legend=LEGEND_BELOW,
                   yaxis=dict(_token_axis(q_labels, "query"), autorange="reversed", scaleanchor="x",
                              constrain="domain"))


def z_slider(labels, zs, titles, active: int = 0) -> dict:
    """A slider (a layout `sliders` entry) whose steps swap trace 0's z and the figure's title in the
    browser: flipping through heads redraws one heatmap, with no rerun of the page. Step i's value is
    "i"; its label is its tick's text (blank ones keep many steps legible) and each title names its step."""
    steps = [dict(label=label, value=str(i), method="update",
                  args=[{"z": [np.round(_arr(z), 4).tolist()]}, {"title.text": title}, [0]])
             for i, (label, z, title) in enumerate(zip(labels, zs, titles))]
    return dict(active=active, steps=steps, currentvalue=dict(visible=False), transition=dict(duration=0),
                x=0.0, len=1.0, y=1.0, yanchor="bottom", pad=dict(t=0, b=10), font=dict(size=11))


# A button that does nothing in Plotly itself ("skip"): the page's slider component hears its click and
# walks the figure's slider to its end, in a few seconds (pages/slider_events.py).
_PLAY_BUTTON = dict(type="buttons", showactive=False, x=0.0, xanchor="left", y=1.0, yanchor="bottom",
                   pad=dict(t=0, b=22), buttons=[dict(label="▶ Play", method="skip", args=[None])])


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


def attention_mosaic(patterns, q_labels, k_labels, title="", layer_names=None, layout=None) -> go.Figure:
    """Every head of every layer (L, H, Q, K) as one heatmap: rows = layers, columns = heads.

    One trace with NaN gaps, not a subplot a head: far quicker to draw (bench/README.md, "Attention mosaic").
    """
    p = _arr(patterns)  # (L, H, Q, K)
    n_l, n_h, q, k = p.shape
    m = mosaic_layout(n_h, q, k)
    rs, cs = m["row_stride"], m["col_stride"]
    names = list(layer_names) if layer_names is not None else [f"L{i}" for i in range(n_l)]
    grid = np.full(mosaic_grid(m, n_l, n_h), np.nan)
    custom = np.full(grid.shape + (4,), "", dtype=object)
    tokens = _pair_customdata([f"{t} (pos {i})" for i, t in enumerate(q_labels)],
                              [f"{t} (pos {j})" for j, t in enumerate(k_labels)])
    annotations = []
    for li in range(n_l):
        for hi in range(n_h):
            r0, c0 = li * rs, hi * cs
            grid[r0:r0 + q, c0:c0 + k] = p[li, hi]
            tile = custom[r0:r0 + q, c0:c0 + k]
            tile[..., 0], tile[..., 1], tile[..., 2:] = names[li], str(hi), tokens
            annotations.append(dict(x=c0 - 0.5, y=r0 - 0.5, xref="x", yref="y", text=f"{names[li]} H{hi}",
                                    showarrow=False, xanchor="left", yanchor="bottom", font=dict(size=12)))
    heatmap = go.Heatmap(
        z=grid, customdata=custom, zmin=0.0, zmax=1.0, colorscale=ATTENTION_SCALE, hoverongaps=False,
        colorbar=dict(COLORBAR, title="weight"),
        hovertemplate="layer %{customdata[0]}, head %{customdata[1]}<br>query %{customdata[2]}"
                      "<br>key %{customdata[3]}<br>weight %{z:.3f}<extra></extra>")
    axis = dict(showticklabels=False, showgrid=False, zeroline=False, ticks="")
    return _figure([heatmap], title, 70 + n_l * m["tile_px"] * rs / q, layout, annotations=annotations, meta=m,
                   margin=dict(l=20, r=20), xaxis=dict(axis, range=[-0.5, grid.shape[1] - 0.5], constrain="domain"),
                   yaxis=dict(axis, range=[grid.shape[0] - 0.5, -m["row_gap"] - 0.5], scaleanchor="x",
                              constrain="domain"))


def attention_entropy_bars(entropy, layer_names=None, max_entropy=None, title="", layout=None) -> go.Figure:
    """Mean attention entropy per head (L, H), grouped by layer; low = focused, high = spread out."""
    e = _arr(entropy)  # (L, H)
    names = list(layer_names) if layer_names is not None else [f"L{i}" for i in range(e.shape[0])]
    bars = [go.Bar(x=names, y=_list(e[:, h]), name=f"H{h}",
                   marker=dict(color=PALETTE[h % len(PALETTE)], line=BAR_LINE),
                   hovertemplate=f"layer %{{x}}, head {h}<br>entropy %{{y:.3f}} nats<extra></extra>")
            for h in range(e.shape[1])]
    line = {} if max_entropy is None else _hline(max_entropy, f"uniform = {max_entropy:.2f}")
    return _figure(bars, title or "Attention entropy per head", 360, layout, barmode="group", **line,
                   xaxis=dict(CATEGORY_AXIS, title="layer"), yaxis=dict(title="entropy (nats)"))


# ------------------------------------------------------------------------------------ heatmaps

def pe_heatmap(table, title="", layout=None) -> go.Figure:
    """Positional encodings (positions, d_model): y = position (0 at the top), x = dimension."""
    z = _arr(table)  # (P, d_model)
    heatmap = go.Heatmap(
        z=z, zmin=-1.0, zmax=1.0, zmid=0.0, colorscale=PE_SCALE, colorbar=COLORBAR,
        hovertemplate="position %{y}<br>dimension %{x}<br>value %{z:.3f}<extra></extra>")
    return _figure([heatmap], title, min(700, 100 + 6 * z.shape[0]), layout, xaxis=dict(title="dimension"),
                   yaxis=dict(title="position", autorange="reversed"))


def similarity_heatmap(matrix, labels=None, title="", zmin=None, zmax=None, layout=None) -> go.Figure:
    """Square similarity matrix (e.g. cosine of PE vectors); symmetric scale around 0 by default."""
    z = _arr(matrix)  # (N, N)
    n = z.shape[0]
    if zmin is None or zmax is None:
        m = float(np.nanmax(np.abs(z))) or 1.0
        zmin, zmax = (-m if zmin is None else zmin), (m if zmax is None else zmax)
    labels = [str(x) for x in labels] if labels is not None else [str(i) for i in range(n)]
    heatmap = go.Heatmap(
        z=z, x=list(range(n)), y=list(range(n)), zmin=zmin, zmax=zmax, colorscale=SIMILARITY_SCALE,
        customdata=_pair_customdata(labels, labels), colorbar=COLORBAR,
        hovertemplate="%{customdata[0]} vs %{customdata[1]}<br>similarity %{z:.3f}<extra></extra>")
    return _figure([heatmap], title, min(700, 120 + 12 * n), layout,
                   xaxis=dict(_token_axis(labels, "", 16), constrain="domain"),
                   yaxis=dict(_token_axis(labels, "", 16), autorange="reversed", scaleanchor="x",
                              constrain="domain"))


def output_heatmap(probs, pos_labels, vocab, top_k=None, title="", targets=None, layout=None) -> go.Figure:
    """Softmax rows (T, V): y = position, x = vocabulary token; `top_k` keeps the V columns whose
    highest probability over positions is largest (in vocabulary order). `targets` (T,) vocabulary
    indices of the right answers, outlined."""
    p = _arr(probs)  # (T, V)
    cols = np.arange(p.shape[1])
    if top_k is not None and top_k < p.shape[1]:
        cols = np.sort(np.argsort(-p.max(axis=0), kind="stable")[:top_k])
    vocab = [str(vocab[c]) for c in cols]
    traces = [go.Heatmap(
        z=p[:, cols], x=list(range(len(cols))), y=list(range(p.shape[0])), zmin=0.0, zmax=1.0,
        colorscale=OUTPUT_SCALE, customdata=_pair_customdata(pos_labels, vocab),
        colorbar=dict(COLORBAR, title="p"),
        hovertemplate="position %{y} (%{customdata[0]})<br>token %{customdata[1]}"
                      "<br>p %{z:.3f}<extra></extra>")]
    if targets is not None:
        where = {int(c): i for i, c in enumerate(cols)}
        cells = [(t, where[int(v)]) for t, v in enumerate(targets) if int(v) in where]
        traces.append(_cell_outlines(cells, "target"))
    return _figure(traces, title, 110 + p.shape[0] * min(36, max(14, 520 // p.shape[0])), layout,
                   xaxis=_token_axis(vocab, "token"), legend=LEGEND_BELOW,
                   yaxis=dict(_token_axis(pos_labels, "position"), autorange="reversed"))


def sweep_heatmap(values, x_labels, y_labels, x_name, y_name, title="", zmin=0.0, zmax=1.0,
                  layout=None) -> go.Figure:
    """Result grid of a two-parameter sweep, values written in the cells (NaN = not run)."""
    z = _arr(values)  # (len(y_labels), len(x_labels))
    xs, ys = [str(x) for x in x_labels], [str(y) for y in y_labels]
    heatmap = go.Heatmap(
        z=z, x=xs, y=ys, zmin=zmin, zmax=zmax, colorscale=SWEEP_SCALE, texttemplate="%{z:.2f}",
        textfont=dict(size=13), hoverongaps=False, colorbar=COLORBAR,
        hovertemplate=f"{x_name} %{{x}}<br>{y_name} %{{y}}<br>value %{{z:.3f}}<extra></extra>")
    return _figure([heatmap], title, 120 + 44 * len(ys), layout, xaxis=dict(title=x_name, type="category"),
                   yaxis=dict(title=y_name, type="category"))


def grad_norm_heatmap(norms, layer_labels, steps=None, title="", log_range=None, layout=None) -> go.Figure:
    """Gradient norm per layer (n_layers, n_steps) on a log10 colour scale; first layer at the
    bottom, real values in the hover. `log_range` = (lo, hi) in log10 units fixes the scale."""
    g = _arr(norms)  # (n_layers, n_steps)
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
    return _figure([heatmap], title, 100 + g.shape[0] * min(40, max(14, 500 // g.shape[0])), layout,
                   xaxis=dict(title="step"), yaxis=_token_axis(layer_labels, "layer"))


# -------------------------------------------------------------------------------- curves, bars

_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def line_chart(series, title="", x_title="", y_title="", log_y=False, bands=None, layout=None,
               dashed=False) -> go.Figure:
    """Lines `name -> (x, y)`; `bands` `name -> (x, lo, hi)` shade a range (mean ± std over seeds)
    in the colour of the line with the same name. `dashed` keeps lines that coincide visible: each
    one dashed differently and a little thinner than the one before."""
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(list(series) + list(bands or {}))}
    traces = []
    for name, (x, lo, hi) in (bands or {}).items():
        x = _list(x)
        traces.append(go.Scatter(
            x=x + x[::-1], y=_list(hi) + _list(lo)[::-1], fill="toself", mode="lines",
            line=dict(width=0), fillcolor=colours[name], opacity=0.2, name=f"{name} band",
            showlegend=False, hoverinfo="skip"))
    for i, (name, (x, y)) in enumerate(series.items()):
        x, y = _list(x), _list(y)
        few = len(x) < 4  # a line through one point draws nothing: mark the points
        line = dict(dash=_DASHES[i % len(_DASHES)], width=4 - 0.7 * i) if dashed else dict(width=2)
        traces.append(go.Scatter(x=x, y=y, mode="lines+markers" if few else "lines", name=str(name),
                                 connectgaps=True,
                                 line=dict(color=colours[name], **line),
                                 hovertemplate=f"{name}<br>{x_title or 'x'} %{{x}}<br>"
                                               f"{y_title or 'y'} %{{y:.4g}}<extra></extra>"))
    return _figure(traces, title, 380, layout, xaxis=dict(title=x_title),
                   yaxis=dict(title=y_title, type="log" if log_y else "linear"))


def training_curves(history, metrics=("loss",), title="", log_y=False, layout=None) -> go.Figure:
    """Metric columns of a history DataFrame against its "step" column (NaN = not measured that
    step). A dict run name -> DataFrame overlays runs: colour per run, dash per metric; a single
    run gets a colour per metric. "lr" goes on a second axis on the right."""
    runs = history if isinstance(history, dict) else {"": history}
    traces = []
    for ri, (run, df) in enumerate(runs.items()):
        for mi, metric in enumerate(metrics):
            if metric not in df.columns:
                continue
            rows = df[["step", metric]].dropna()
            colour = PALETTE[(ri if len(runs) > 1 else mi) % len(PALETTE)]
            name = f"{run} · {metric}" if run else metric
            traces.append(go.Scatter(
                x=_list(rows["step"]), y=_list(rows[metric]), mode="lines", name=name, connectgaps=True,
                yaxis="y2" if metric == "lr" else "y",
                line=dict(color=colour, width=2, dash=_DASHES[mi % len(_DASHES)] if len(runs) > 1 else None),
                hovertemplate=f"{name}<br>step %{{x}}<br>%{{y:.4g}}<extra></extra>"))
    style = dict(xaxis=dict(title="step"), hovermode="closest",
                 yaxis=dict(title=", ".join(m for m in metrics if m != "lr"), type="log" if log_y else "linear"),
                 legend=LEGEND_BELOW)
    if "lr" in metrics:
        style["yaxis2"] = dict(title="lr", overlaying="y", side="right", showgrid=False, tickformat=".1e")
    return _figure(traces, title, 400, layout, **style)


def grad_norm_profile(profiles, title="", layout=None) -> go.Figure:
    """Per-layer gradient norms of several variants ("Pre-LN", "Post-LN"), log y."""
    lines = []
    for i, (name, v) in enumerate(profiles.items()):
        y = _list(v)
        lines.append(go.Scatter(
            x=list(range(len(y))), y=y, mode="lines+markers", name=name, line=dict(color=PALETTE[i % len(PALETTE)]),
            hovertemplate=f"{name}<br>layer %{{x}}<br>‖grad‖ %{{y:.3g}}<extra></extra>"))
    return _figure(lines, title, 380, layout, xaxis=dict(title="layer (0 = first)", dtick=1),
                   yaxis=dict(title="gradient norm", type="log"))


def param_breakdown(parts, title="", layout=None) -> go.Figure:
    """Parameter counts by part (from `config.param_count`; "total" is left out)."""
    items = [(k, v) for k, v in parts.items() if k != "total"]
    total = sum(v for _, v in items) or 1
    names, counts = [k for k, _ in items], [v for _, v in items]
    bar = go.Bar(
        x=counts, y=names, orientation="h", marker=dict(color=PALETTE[0], line=BAR_LINE),
        text=[f"{human(v)} ({100 * v / total:.0f}%)" for v in counts],
        textposition="outside", cliponaxis=False, customdata=[100 * v / total for v in counts],
        hovertemplate="%{y}<br>%{x:,} parameters (%{customdata:.1f}%)<extra></extra>")
    room = 1.3 * max(counts, default=0) or 1  # for the count written outside the longest bar
    return _figure([bar], title or f"{human(total)} parameters", 120 + 34 * len(names), layout,
                   xaxis=dict(title="parameters", range=[0, room]), yaxis=dict(CATEGORY_AXIS, autorange="reversed"))


def entropy_chart(entropy, labels, max_entropy=None, title="", layout=None) -> go.Figure:
    """Output entropy per position (T,); the dashed line is log(V), a uniform guess."""
    e = _arr(entropy)  # (T,)
    bar = go.Bar(
        x=list(range(len(e))), y=_list(e), marker=dict(color=PALETTE[0], line=BAR_LINE),
        customdata=[str(t) for t in labels],
        hovertemplate="position %{x} (%{customdata})<br>entropy %{y:.3f} nats<extra></extra>")
    line = {} if max_entropy is None else _hline(max_entropy, f"log V = {max_entropy:.2f}", left=True)
    return _figure([bar], title, 320, layout, **line, xaxis=_token_axis(labels, "position"),
                   yaxis=dict(title="entropy (nats)"))


def bar_with_error(names, means, stds, title="", y_title="", reference=None, layout=None) -> go.Figure:
    """Experiment results as mean ± std bars; `reference` name -> value marks what the seed predicts."""
    names = [str(n) for n in names]
    traces = [go.Bar(
        x=names, y=_list(means),
        error_y=dict(type="data", array=_list(stds), visible=True, color=HOUSE["font"]["color"]),
        marker=dict(color=PALETTE[0], line=BAR_LINE), name="measured", customdata=_list(stds),
        hovertemplate=f"%{{x}}<br>{y_title or 'value'} %{{y:.4g}} ± %{{customdata:.3g}}<extra></extra>")]
    if reference:
        traces.append(go.Scatter(
            x=[str(k) for k in reference], y=list(reference.values()), mode="markers",
            name="the seed predicts", marker=dict(symbol="diamond", size=13, color=EXPECTED_COLOUR),
            hovertemplate="%{x}<br>expected %{y:.4g}<extra></extra>"))
    return _figure(traces, title, 380, layout, xaxis=CATEGORY_AXIS, yaxis=dict(title=y_title),
                   legend=LEGEND_BELOW)


__all__ = [
    "ATTENTION_SCALE", "OUTPUT_SCALE", "PE_SCALE", "architecture_diagram", "attention_entropy_bars",
    "attention_heatmap", "attention_mosaic", "bar_with_error", "entropy_chart", "grad_norm_heatmap",
    "grad_norm_profile", "line_chart", "mosaic_layout", "output_heatmap", "param_breakdown",
    "pe_heatmap", "similarity_heatmap", "sweep_heatmap", "training_curves",
]
