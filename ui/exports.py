"""Downloads of what a page shows: PNG / SVG of a chart at presentation size (beside each chart, through
`ui.widgets.chart`; a chart with a slider, such as the time-lapse, also as an animated GIF) and a run's HTML
report (Runs, Train).

Every file is made when its button is clicked (a deferred download), never on a rerun, so an idle app starts
no browser: the first PNG / SVG click starts the server's one Chromium (explorer.export.browser, seconds), later
clicks of every session reuse it (under a second), a report takes about one (bench/README.md, "Export and
notebooks"). The chart's own modebar camera saves the same PNG size in the browser (`image_options`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitDuplicateElementId, StreamlitDuplicateElementKey

from explorer.export.images import GIF_MAX_FRAMES, PNG_SCALE, gif_bytes, image_bytes, size
from explorer.export.report import build_report
from explorer.figures import describe
from explorer.store.subject import Subject

MAX_TRIES = 20  # keyless charts with the same title on one page: -2, -3, ... in drawing order
T = TypeVar("T")


def with_free_key(draw: Callable[[str], T], key: str) -> T | None:
    """`draw(key)`, or `draw(key-2)`, `draw(key-3)`, ... when an element of this run already took the key;
    None if MAX_TRIES keys were all taken."""
    for i in range(1, MAX_TRIES + 1):
        try:
            return draw(key if i == 1 else f"{key}-{i}")
        except (StreamlitDuplicateElementId, StreamlitDuplicateElementKey):
            continue
    return None


def slug(text: str, default: str = "figure") -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", re.sub(r"<[^>]+>", " ", text or "")).strip("-").lower()[:60] or default


def image_options(fig: go.Figure, name: str) -> dict:
    """Plotly's `toImageButtonOptions`: the modebar camera saves a PNG as the PNG button does."""
    width, height = size(fig)
    return dict(format="png", filename=name, width=width, height=height, scale=PNG_SCALE)


def _button(row, label: str, data: Callable[[], bytes], file_name: str, mime: str, key: str, help: str) -> None:
    with_free_key(lambda free: row.download_button(label, data, file_name=file_name, mime=mime, key=free,
                                                   type="tertiary", icon=":material/download:", on_click="ignore",
                                                   help=help), key)


def image_buttons(fig: go.Figure, key: str | None, name: str):
    """PNG and SVG of fig at presentation size (explorer.export.images), right-aligned under the chart: the row."""
    width, height = size(fig)
    row = st.container(horizontal=True, horizontal_alignment="right", gap="small")
    base = f"_export_{key or name}"
    _button(row, "PNG", lambda: image_bytes(fig, "png"), f"{name}.png", "image/png", f"{base}_png",
            f"This chart as a {width * PNG_SCALE} × {height * PNG_SCALE} px PNG, for slides and papers")
    _button(row, "SVG", lambda: image_bytes(fig, "svg"), f"{name}.svg", "image/svg+xml", f"{base}_svg",
            f"This chart as an SVG vector graphic ({width} × {height}), for papers and editing")
    steps = len(fig.layout.sliders[0].steps) if fig.layout.sliders else 0   # a time-lapse, heads to flip through
    if steps > 1:
        frames = min(steps, GIF_MAX_FRAMES)
        _button(row, "GIF", lambda: gif_bytes(fig), f"{name}.gif", "image/gif", f"{base}_gif",
                f"This chart's slider as an animated GIF of {frames} frames, {width} px wide, for slides "
                f"(made on the click: about {max(2, round(frames * 0.45))} s)")
    return row


def _flip(state: str) -> None:
    st.session_state[state] = not st.session_state.get(state, False)


def data_table(fig: go.Figure, name: str, row) -> None:
    """A chart's data as an HTML table on request (a screen reader reads a table, not a canvas); nothing is
    built until asked for."""
    state = f"_table_{slug(name)}"
    shown = st.session_state.get(state, False)
    with_free_key(lambda free: row.button("Hide the table" if shown else "Table", key=free, type="tertiary",
                                          icon=":material/table_rows:", on_click=_flip, args=(state,),
                                          help="This chart's numbers as a table, e.g. for a screen reader"),
                  f"_tablebtn_{slug(name)}")
    if shown:
        frame, cut = describe.table(fig)
        if frame.empty:
            st.caption("This chart has no data to tabulate: it is a diagram, described above.")
            return
        st.table(frame)
        if cut:
            st.caption(f"The first {describe.MAX_ROWS} rows and {describe.MAX_COLS} columns; the SVG and PNG hold "
                       "the whole chart.")


def report_button(row, make: Callable[[], Subject], name: str, key: str, disabled: bool = False,
                  help: str | None = None) -> None:
    """Download report: the subject's self-contained HTML report (explorer.export.report), built on the click."""
    row.download_button("Report (HTML)", lambda: build_report(make()), file_name=f"{name}-report.html",
                        mime="text/html", key=key, icon=":material/description:", on_click="ignore", disabled=disabled,
                        help=help or "One HTML file with the config, recipe, curves, attention, time-lapse, "
                                     "gradients, entropy and metrics; it opens offline in any browser.")


__all__ = ["with_free_key", "slug", "image_options", "image_buttons", "data_table", "report_button"]
