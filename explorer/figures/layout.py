"""The house style every figure shares, and the helpers that build a figure in it.

`figure` makes a figure in one constructor call: the house style (plotly_white's look written into the
layout, no template), margins that already hold what the figure puts in them (`make_room`), then the
caller's layout on top. Shared pieces: colours, axes, colorbars, legends, token axes, reference lines.
"""

from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from explorer.quoting import hover, label

# Every mark at >= 3:1 against the white page and the dark view's #111 (WCAG 1.4.11): Plotly's own colours
# go down to 1.4:1 on white (its yellow-green); these keep distinct hues at luminance 0.12-0.30.
PALETTE = ["#3f63e0", "#d9452b", "#13865c", "#9a4fe0", "#b36a00", "#0a83a3", "#cc3d80", "#6f7d00"]
GRID = "#8a909c"   # 3.2:1 on white, dotted so it stays in the background
EXPECTED_COLOUR = "#ff2d55"
MIN_HEIGHT = 250
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
AXIS = dict(gridcolor=GRID, griddash="dot", ticks="", zerolinecolor=GRID, zerolinewidth=1, ticklabeloverflow="allow",
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


def as_array(x) -> np.ndarray:
    """Numbers (a list, a numpy array or a torch tensor) as a float numpy array."""
    if hasattr(x, "detach"):  # a torch tensor: no torch import needed here
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=float)


def as_list(x) -> list:
    """A 1-D series as a plain list. plotly sends a numpy array as a typed array, which Plotly cannot
    compare: every copy Streamlit hands it would be recalculated and drawn again (see HOUSE)."""
    return as_array(x).tolist()


def no_template() -> None:
    """Clear plotly's default template if something set one since this module's import (Streamlit does)."""
    if pio.templates.default is not None:
        pio.templates.default = None


def merge(base: dict, extra: dict | None) -> dict:
    """base updated by extra; a dict value (an axis, the margin) is merged one level down, so a page
    that sets an axis's title keeps the builder's tick labels."""
    out = dict(base)
    for key, value in (extra or {}).items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = {**out[key], **value} if both else value
    return out


def _house(layout: dict) -> dict:
    """layout over HOUSE, and every axis it names (x and y at least) over AXIS, with a title standoff."""
    out = merge(HOUSE, layout)
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
# So each figure starts with margins that already hold what it puts in them (`make_room`), from its
# text measured erring wide (`text_px`); a wider font still only costs the second draw. Sizes in px, Plotly's
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


def text_px(text: str, size: float = 12) -> float:
    """Width of `text` in Plotly's default font ("Open Sans", verdana, arial), erring wide: Verdana's
    widths, the widest of the three and what Windows and macOS draw, by kind of character. Measured as
    drawn: a quoted `&lt;` is one character."""
    text = html.unescape(text)
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
    if axis.get("tickformat", "").endswith("%"):
        return ["100%"]
    return ["0.001" if axis.get("type") == "log" else "0.5"]


def _size(font: dict | None, default: float) -> float:
    """A font's size in a layout dict, or the size Plotly would use."""
    return (font or {}).get("size") or default


def _x_labels_px(labels: list[str], angle, size: float = 12) -> float:
    """The height an x axis's labels take under the plot. Labels too wide for their spacing Plotly turns
    30 degrees, or upright when even that overlaps (their spacing, turned, under the font's size), unless
    `angle` is set."""
    if not labels:
        return 0.0
    widest, spacing = max(text_px(t, size) for t in labels), PLOT_PX / len(labels)
    if angle is None:
        angle = 0 if widest < spacing else 30 if spacing * math.sin(math.radians(30)) >= size else 90
    turn, scale = math.radians(abs(angle)), size / 12
    return max(X_LABELS_PX * scale, widest * math.sin(turn) + 15 * scale * math.cos(turn) + 13)


def _y_labels_px(labels: list[str], size: float = 12) -> float:
    """The width a y axis's labels take beside the plot."""
    return max(text_px(t, size) for t in labels) + Y_LABELS_GAP if labels else 0.0


def _colorbar_px(trace, base: float = 12) -> float:
    """The width a trace's colorbar takes right of the plot, paddings included (0 without one)."""
    if getattr(trace, "colorbar", None) is None or trace.showscale is False:
        return 0.0
    bar = trace.colorbar
    if bar.ticktext is not None:
        labels = list(bar.ticktext)
    else:
        labels = ["−0.5" if (trace.zmin or 0) < 0 else "0.5", f"{trace.zmax or 1:g}", f"{trace.zmin or 0:g}"]
    title, tick = bar.title.text or "", bar.tickfont.size or base
    inner = max(bar.thickness + 11 + max(text_px(t, tick) for t in labels),
                text_px(title, bar.title.font.size or base + 2) + 11)
    return 2 * (bar.xpad if bar.xpad is not None else 10) + inner


def make_room(layout: dict, traces) -> None:
    """Grow each side of layout["margin"] to hold what Plotly would grow it for (see X_LABELS_PX), at the
    font sizes the layout sets (Plotly's own otherwise); a legend beside the plot goes at its edge, as
    colorbars do (COLORBAR_PAD)."""
    margin, base = layout["margin"], _size(layout.get("font"), 12)
    need = dict(l=0.0, r=0.0, t=0.0, b=0.0)
    for name, axis in layout.items():
        if not name.startswith(("xaxis", "yaxis")):
            continue
        labels, tick = _tick_labels(axis, traces, name[0]), _size(axis.get("tickfont"), base)
        title = axis.get("title") or {}
        title = AXIS_TITLE_PX + 1.2 * (_size(title.get("font"), round(base * 1.2)) - 14) if title.get("text") else 0
        if name[0] == "x":
            side = "t" if axis.get("side") == "top" else "b"
            block = _x_labels_px(labels, axis.get("tickangle"), tick)
        else:
            side, block = "r" if axis.get("side") == "right" else "l", _y_labels_px(labels, tick)
        need[side] = max(need[side], block + title)
    need["r"] = max([need["r"], *(_colorbar_px(t, base) for t in traces)])
    legend = layout.get("legend") or {}
    shown = [getattr(t, "showlegend", False) for t in traces]  # a Parcoords has no legend entry at all
    items = [t for t, s in zip(traces, shown) if s or (s is None and t.type in ("scatter", "bar"))]
    if items and layout.get("showlegend", len(items) >= 2 or any(t.showlegend for t in items)):
        size = _size(legend.get("font"), base)
        widths = [LEGEND_ITEM_PX + text_px(str(t.name or ""), size) for t in items]
        if legend.get("yref") == "container" and legend.get("y") == 0:  # LEGEND_BELOW, under the axis
            rows = math.ceil(sum(widths) / PLOT_PX)
            need["b"] += (LEGEND_ROW_PX + LEGEND_LINE_PX * (rows - 1)) * size / 12
        elif legend.get("orientation") != "h" and legend.get("x", 1.0) == 1.0:  # beside the plot (or put there)
            layout["legend"] = {"x": 1.0, "xanchor": "left", **legend}
            need["r"] = max(need["r"], max(widths))
    layout["margin"] = {side: max(margin[side], math.ceil(need[side])) for side in margin}


def figure(traces, title: str, height: float, layout: dict | None = None, **style) -> go.Figure:
    """The figure in one constructor call: the house style, the builder's `style`, then the caller's
    `layout` on top. Plotly validates a layout given up front once; `update_layout` / `add_hline` on a
    built figure go through its relayout machinery, milliseconds a call (bench/README.md, "The app": where
    a view change goes), and a page redraws several. `datarevision` stays 0: a figure's data never changes
    in place (a new figure is a new chart), so Plotly need not compare the arrays of the copy Streamlit
    hands it (see HOUSE)."""
    no_template()
    base = dict(title=dict(text=title, x=0.0, xanchor="left"), height=max(MIN_HEIGHT, int(height)),
                margin=dict(l=60, r=30, t=60 if title else 30, b=50), datarevision=0)
    full = _house(merge(merge(base, style), layout))
    make_room(full, traces)
    return go.Figure(data=traces, layout=full)


# A title wider than this breaks onto more lines: a phone's chart is 358 px wide (390 less the page's padding),
# and text_px errs wide. Plotly never wraps a title itself; one line runs past the chart's right edge.
TITLE_FIT_PX = 340
MARKS = (":", "·", "—", "–", ",", ";")  # a line reads best ending at one of these, if it is half full


def _lines(text: str, size: float, width: float) -> list[str]:
    """`text` as lines of at most `width` px, broken at spaces: at the last of MARKS on a line at least half
    full, else as late as fits."""
    if text_px(text, size) <= width or " " not in text:
        return [text]
    cuts = [i for i, c in enumerate(text) if c == " "]
    fits = [i for i in cuts if text_px(text[:i], size) <= width] or cuts[:1]  # a first word too wide: after it
    marks = [i for i in fits if text[:i].endswith(MARKS) and text_px(text[:i], size) >= width / 2]
    cut = (marks or fits)[-1]
    return [text[:cut], *_lines(text[cut + 1:], size, width)]


def copy_figure(fig: go.Figure) -> go.Figure:
    """A copy of `fig`, made by only reading it. `go.Figure(fig)` pops each trace's "type" out of the source
    while it copies, so two sessions copying one shared (cached) figure at once could see a heatmap without
    its type: a Scatter with a colorbar, which Plotly rejects (CI, stop 44, a room of eight)."""
    return go.Figure(fig.to_dict())


def fit_title(fig: go.Figure, width: float = TITLE_FIT_PX, at_least: float = 0) -> go.Figure:
    """`fig`, or a copy whose title (and each title its slider swaps in) breaks onto more lines where one
    would be wider than `width` px at its size (or `at_least`, the size a restyle will give it), its top
    margin grown by a line for each."""
    size = max(at_least, fig.layout.title.font.size or (fig.layout.font.size or 12) * 1.4)  # Plotly's own size

    def fit(text: str) -> str:
        return text if "<br>" in text else "<br>".join(_lines(text, size, width))

    title = fig.layout.title.text or ""
    steps = [s for slider in fig.layout.sliders or () for s in slider.steps
             if len(s.args or ()) > 1 and "title.text" in (s.args[1] or {})]
    texts = [title, *(s.args[1]["title.text"] for s in steps)]
    if all(fit(t) == t for t in texts):
        return fig
    out = copy_figure(fig)
    for slider in out.layout.sliders or ():
        for step in slider.steps:
            if len(step.args or ()) > 1 and "title.text" in (step.args[1] or {}):
                step.args = (step.args[0], {**step.args[1], "title.text": fit(step.args[1]["title.text"])},
                             *step.args[2:])
    extra = max(fit(t).count("<br>") - t.count("<br>") for t in texts)
    top = fig.layout.margin.t if fig.layout.margin.t is not None else 80
    return out.update_layout(title_text=fit(title), margin_t=top + math.ceil(extra * size * 1.3))


def hline(y: float, text: str, left: bool = False) -> dict:
    """A dashed horizontal reference line across the plot with its label, as layout entries."""
    line = dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=y, y1=y,
                line=dict(dash="dash", color="grey"))
    label = dict(xref="x domain", x=0 if left else 1, xanchor="left" if left else "right", yref="y", y=y,
                 yanchor="bottom", text=text, showarrow=False)
    return dict(shapes=[line], annotations=[label])


def token_axis(labels, title: str, max_ticks: int = 30) -> dict:
    """Positional axis with the tokens as tick text (quoted: shown literally, long ones shortened, see
    explorer.quoting); thinned when there are too many to read."""
    labels = [label(t) for t in labels]
    step = max(1, math.ceil(len(labels) / max_ticks))
    idx = list(range(0, len(labels), step))
    return dict(title=title, tickmode="array", tickvals=idx, ticktext=[labels[i] for i in idx],
                showgrid=False, zeroline=False)


def cell_outlines(cells, name: str, colour: str = EXPECTED_COLOUR) -> go.Scatter:
    """Square outlines around (row, col) cells, in data units so they scale with the heatmap."""
    xs, ys = [], []
    for r, c in cells:
        xs += [c - 0.45, c + 0.45, c + 0.45, c - 0.45, c - 0.45, None]
        ys += [r - 0.45, r - 0.45, r + 0.45, r + 0.45, r - 0.45, None]
    return go.Scatter(x=xs, y=ys, mode="lines", name=name, hoverinfo="skip",
                      line=dict(color=colour, width=2.5), showlegend=True)


def pair_customdata(rows, cols) -> np.ndarray:
    """Hover data (rows, cols, 2) of a heatmap: each cell's row label and column label, whole and quoted
    (shown literally, explorer.quoting)."""
    rows, cols = [hover(t) for t in rows], [hover(t) for t in cols]
    data = np.empty((len(rows), len(cols), 2), dtype=object)
    data[:, :, 0] = np.array(rows, dtype=object)[:, None]
    data[:, :, 1] = np.array(cols, dtype=object)[None, :]
    return data


__all__ = ["PALETTE", "EXPECTED_COLOUR", "MIN_HEIGHT", "HOUSE", "AXIS", "CATEGORY_AXIS", "COLORBAR_PAD", "COLORBAR",
           "BAR_LINE", "X_LABELS_PX", "AXIS_TITLE_PX", "Y_LABELS_GAP", "LEGEND_ROW_PX", "LEGEND_LINE_PX",
           "LEGEND_ITEM_PX", "PLOT_PX", "LEGEND_BELOW", "as_array", "as_list", "no_template", "merge", "text_px",
           "figure",
           "copy_figure", "TITLE_FIT_PX", "fit_title", "hline", "token_axis", "cell_outlines", "pair_customdata"]
