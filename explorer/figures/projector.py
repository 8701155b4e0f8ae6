"""A figure restyled for a projector: larger text (presenter mode) and a dark look (dim rooms).

`for_projector(fig, large=True, dark=False)` returns a copy in the house style with bigger fonts and, for
`dark`, dark backgrounds and light text; its margins are measured again at the new sizes (layout.py
`make_room`), so nothing is cut off and Plotly need not grow them (a second draw).
"""

from __future__ import annotations

import plotly.graph_objects as go

from explorer.figures.diagram import DRAWING, MIN_PX_PER_UNIT, sized
from explorer.figures.layout import copy_figure, make_room, no_template

# Presenter sizes in px: a projector's 1280 x 720 seen from the back of a room.
TEXT_PX = 16     # the figure's base font: legends, annotations, hover
TICK_PX = 14     # tick labels, colorbar ticks, slider labels
LABEL_PX = 16    # axis titles, legend entries, colorbar titles
TITLE_PX = 20    # the figure's title
# The dark look. DARK_BG is what the app's dark theme shows behind a chart (ui/presenter.py).
DARK_BG = "#111111"
DRAWING_WIDTH_PX = 560  # a diagram's least width: its title's room (a 1280 px projector's lesson column: 692 px)
DARK_TEXT = "#e8e8e8"
DARK_GRID = "#7d848f"   # 5:1 on DARK_BG (WCAG 1.4.11)
DARK_MASK = "#3a3f47"  # cells attention may not use: dim on a dark page (the light look's grey would glare)
DARK_WIDGET = dict(bgcolor="#2b3038", bordercolor="#6b7280", font=dict(color=DARK_TEXT))


def _at_least(font: dict | None, size: float) -> dict:
    font = dict(font or {})
    font["size"] = max(font.get("size") or 0, size)
    return font


def _axes(layout: dict) -> list[str]:
    return [name for name in layout if name.startswith(("xaxis", "yaxis"))]


def _enlarge(layout: dict, traces) -> None:
    layout["font"] = _at_least(layout.get("font"), TEXT_PX)
    title = dict(layout.get("title") or {})
    title["font"] = _at_least(title.get("font"), TITLE_PX)
    layout["title"] = title
    for name in _axes(layout):
        axis = layout[name] = dict(layout[name])
        axis["tickfont"] = _at_least(axis.get("tickfont"), TICK_PX)
        if (axis.get("title") or {}).get("text"):
            axis["title"] = {**axis["title"], "font": _at_least(axis["title"].get("font"), LABEL_PX)}
    layout["legend"] = {**(layout.get("legend") or {}), "font": _at_least((layout.get("legend") or {}).get("font"),
                                                                          LABEL_PX)}
    layout["hoverlabel"] = {**(layout.get("hoverlabel") or {}), "font": dict(size=TICK_PX)}
    layout["annotations"] = [{**a, "font": _at_least(a.get("font"), TICK_PX)} for a in layout.get("annotations", ())]
    for menus in ("sliders", "updatemenus"):
        if layout.get(menus):
            layout[menus] = [{**m, "font": _at_least(m.get("font"), TICK_PX)} for m in layout[menus]]
    for trace in traces:
        if getattr(trace, "colorbar", None) is not None:
            trace.colorbar.tickfont.size = max(trace.colorbar.tickfont.size or 0, TICK_PX)
            trace.colorbar.title.font.size = max(trace.colorbar.title.font.size or 0, LABEL_PX)


def _enlarge_drawing(layout: dict, max_height: float | None) -> None:
    """A diagram's text at TICK_PX at least, drawn at its own scale or, to fit `max_height`, smaller down to
    MIN_PX_PER_UNIT, where its boxes still hold that text (explorer/figures/diagram.py); DRAWING_WIDTH_PX wide at
    least, so that its title takes fewer lines."""
    layout["annotations"] = [{**a, "font": _at_least(a.get("font"), TICK_PX)} for a in layout.get("annotations", ())]
    layout["hoverlabel"] = {**(layout.get("hoverlabel") or {}), "font": dict(size=TICK_PX)}
    px = layout["meta"]["px_per_unit"]
    if max_height:
        y0, y1 = layout["yaxis"]["range"]
        px = min(px, (max_height - layout["margin"]["t"] - layout["margin"]["b"]) / (y1 - y0))
    size = sized(layout, max(px, MIN_PX_PER_UNIT), DRAWING_WIDTH_PX)
    title = dict(layout.get("title") or {})
    layout.update(size, title={**title, **size["title"], "font": _at_least(title.get("font"), TICK_PX)})


def _darken(layout: dict) -> None:
    layout.update(paper_bgcolor=DARK_BG, plot_bgcolor=DARK_BG)
    layout["font"] = {**(layout.get("font") or {}), "color": DARK_TEXT}
    layout["shapedefaults"] = dict(line=dict(color=DARK_TEXT))
    layout["annotationdefaults"] = {**(layout.get("annotationdefaults") or {}), "arrowcolor": DARK_TEXT}
    layout["legend"] = {**(layout.get("legend") or {}), "bgcolor": "rgba(0,0,0,0)"}
    for name in _axes(layout):
        layout[name] = {**layout[name], "gridcolor": DARK_GRID, "zerolinecolor": DARK_GRID}
    for menus in ("sliders", "updatemenus"):
        if layout.get(menus):
            layout[menus] = [{**m, **DARK_WIDGET, "font": {**(m.get("font") or {}), "color": DARK_TEXT}}
                             for m in layout[menus]]
    if layout.get("sliders"):
        layout["sliders"] = [{**s, "activebgcolor": "#9aa3af", "tickcolor": DARK_TEXT} for s in layout["sliders"]]


def for_projector(fig: go.Figure, large: bool = True, dark: bool = False,
                  max_height: float | None = None) -> go.Figure:
    """`fig` restyled: `large` text for a projector (ticks >= TICK_PX, axis titles and legend >= LABEL_PX,
    title >= TITLE_PX), `dark` backgrounds, and at most `max_height` px tall (a drawing: as near to it as
    its text allows). `fig` itself when nothing is asked; otherwise a new figure, the original untouched."""
    if not (large or dark or max_height):
        return fig
    no_template()
    layout = fig.layout.to_plotly_json()
    out = go.Figure(data=copy_figure(fig).data)  # a copy of the traces, so their colorbars can change
    drawing = (layout.get("meta") or {}).get("kind") == DRAWING   # a diagram: its text is sized to its boxes
    if large and not drawing:   # a drawing's text is sized to its boxes: see _enlarge_drawing
        _enlarge(layout, out.data)
    if dark:
        _darken(layout)
        for trace in out.data:
            if trace.type == "heatmap" and trace.name == "masked":
                trace.colorscale = [[0, DARK_MASK], [1, DARK_MASK]]
    margin = layout.get("margin") or {}  # Plotly's defaults where the figure sets none
    layout["margin"] = {side: margin.get(side, px) for side, px in dict(l=80, r=80, t=100, b=80).items()}
    if drawing and large:
        _enlarge_drawing(layout, max_height)
    elif not drawing:
        if max_height and (layout.get("height") or 450) > max_height:
            layout["height"] = int(max_height)
        if large:
            make_room(layout, out.data)
    out.layout = layout
    return out


__all__ = ["TEXT_PX", "TICK_PX", "LABEL_PX", "TITLE_PX", "DARK_BG", "DARK_TEXT", "DARK_GRID", "DARK_MASK",
           "for_projector"]
