"""Presenter view and dark theme: a teacher's 1280 x 720 projector, and dim rooms.

`?present=1` (or the "Presenter view" toggle) hides the sidebar, enlarges the text and the charts' labels,
hides Plotly's modebar and packs the page so a step's figure fits one screen; `?dark=1` (or "Dark theme")
turns the page and its charts dark. The URL and the toggles follow each other; the modes live in session
state (PRESENT_ON, DARK_ON), so they outlast a page switch, which drops the URL's parameters.

app.py calls `apply()` once per run before the page and `menu()` after it; a page may draw `toggles()` in
its own toolbar (then `menu()` draws nothing). Charts get `style(fig)` and `chart_config()` through
`ui.widgets.chart`.

The dark theme is CSS: Streamlit 1.67 has no per-session theme (`[theme]` in config.toml is the server's;
the viewer's own choice in the app's settings menu is read-only to the script, `st.context.theme.type`).
The page is inverted as a whole (every element, widget and table follows, including parts drawn on a canvas
that CSS colours cannot reach), and the charts are inverted back and drawn dark by `style`. A viewer who
chose Streamlit's dark theme already sees a dark page: only the charts are restyled.
"""

from __future__ import annotations

import time

import plotly.graph_objects as go
import streamlit as st

from explorer.figures.projector import DARK_BG, for_projector

PRESENT, DARK = "present", "dark"                               # URL query parameters
PRESENT_TOGGLE, DARK_TOGGLE = "present_toggle", "dark_toggle"   # the toggles' widget keys
PRESENT_ON, DARK_ON = "_present_on", "_dark_on"                 # the modes themselves
MENU = "present_menu"                                           # the toggles' corner in presenter mode
_DRAWN = "_present_toggles_drawn"                               # toggles() ran in this script run
TRUE = ("1", "true", "on", "yes")
CSS_MARK = "/* presenter */"  # the first line of the injected CSS, for tests
_STYLED = "_present_styled"     # this session's first presenter run has waited for its CSS
FIRST_PAINT_HOLD_S = 0.5

# The inversion that turns a light page dark; an element inverted twice looks as it was built.
_INVERT = "filter: invert(1) hue-rotate(180deg);"
_LIGHT_BG = "#eeeeee"  # the app's background before the inversion: DARK_BG after it

BASE_CSS = """
/* Captions at Streamlit's 60% opacity are 4.2:1 on white, under WCAG's 4.5:1 (1.4.3): 80% gives 7.6:1,
   6.5:1 on the dark theme's page, and still reads as secondary text. */
[data-testid=stCaptionContainer] { opacity: 0.8; }
/* A metric's value shrinks rather than being cut to "71.4 M…" in a narrow column. */
[data-testid=stMetricValue] { font-size: 1.75rem; }
/* A diagram keeps its own size (its text sized to its boxes): a narrower column scrolls it sideways. */
[class*="st-key-drawing_"] { overflow-x: auto; }
[class*="st-key-drawing_"] [data-testid=stElementContainer] { max-width: none !important; }
/* A lesson's "Step X of N" reads as a label, not a caption. */
.st-key-lesson_nav [data-testid=stCaptionContainer] b { font-size: 1rem; }
/* 320 px (WCAG 1.4.10, a phone at 200% zoom): Back, the step and Next still fit one row. */
@media (max-width: 360px) {
  .st-key-lesson_nav { gap: 0.5rem !important; }
  .st-key-lesson_nav .st-key-lesson_prev, .st-key-lesson_nav .st-key-lesson_next
    { flex: 0 0 4.5rem !important; width: 4.5rem !important; max-width: 4.5rem !important; min-width: 0 !important; }
  .st-key-lesson_nav button { width: 100% !important; min-width: 0 !important; padding: 0 0.3rem !important; }
}
/* A phone: its title in two lines rather than four, and no chart toolbar (a touch screen shows it always,
   over the chart's title; the PNG and SVG buttons stay under each chart). */
@media (max-width: 640px) {
  [data-testid=stMain] h1 { font-size: 2rem; }
  [data-testid=stPlotlyChart] .modebar-container { visibility: hidden !important; }
}
"""

PRESENT_CSS = """
html { font-size: 20px; }
[data-testid=stSidebar], [data-testid=stSidebarCollapsedControl], [data-testid=stExpandSidebarButton]
  { display: none !important; }
[data-testid=stHeader] { height: 2.5rem; min-height: 0; background: transparent; }
[data-testid=stMainBlockContainer] { padding: 2.25rem 1.5rem 2rem !important; max-width: none !important; }
[data-testid=stMain] { color: #000; }
[data-testid=stMarkdownContainer] p, [data-testid=stMarkdownContainer] li { font-size: 1rem; line-height: 1.45; }
[data-testid=stCaptionContainer], [data-testid=stCaptionContainer] p
  { font-size: 0.9rem !important; color: #222 !important; }
[data-testid=stWidgetLabel] p { font-size: 0.9rem; color: #000; }
[data-testid=stMain] h1 { font-size: 1.8rem; padding: 0 0 0.2rem; }
[data-testid=stMain] h2 { font-size: 1.7rem; }
[data-testid=stMain] h3 { font-size: 1.4rem; }
.st-key-present_menu { position: fixed; top: 0.3rem; right: 3.5rem; z-index: 999991; width: auto !important; }
"""


def _dark_css() -> str:
    return f"""
html {{ {_INVERT} background: white; }}
[data-testid=stApp], [data-testid=stHeader], [data-testid=stBottomBlockContainer] {{ background: {_LIGHT_BG}; }}
[data-testid=stPlotlyChart], [data-testid=stImage], img, video {{ {_INVERT} }}
"""


def _flag(param: str) -> bool | None:
    """The URL's say on a mode: True, False, or None when the URL does not name it."""
    value = st.query_params.get(param)
    return None if value is None else value.lower() in TRUE


def _sync(param: str, key: str) -> None:
    """The URL decides when it names the mode; otherwise the session does, and the URL is told."""
    flag = _flag(param)
    if flag is not None:
        st.session_state[key] = flag
    elif st.session_state.setdefault(key, False):
        st.query_params[param] = "1"  # a page switch dropped it: a link copied now still presents


def on() -> bool:
    """Presenter mode is on (the toggle, or ?present=1)."""
    return bool(st.session_state.get(PRESENT_ON, _flag(PRESENT)))


def dark() -> bool:
    """The dark theme is on (the toggle, or ?dark=1)."""
    return bool(st.session_state.get(DARK_ON, _flag(DARK)))


def _viewer_dark() -> bool:
    """The viewer picked Streamlit's own dark theme in the app's settings."""
    try:
        return st.context.theme.type == "dark"
    except AttributeError:  # no browser session (bare mode)
        return False


def css() -> str:
    """The CSS this session's modes need (always the BASE_CSS fixes)."""
    parts = [CSS_MARK, BASE_CSS]
    if on():
        parts.append(PRESENT_CSS)
    if dark() and not _viewer_dark():
        parts.append(_dark_css())
    return "\n".join(parts)


def apply() -> None:
    """Once per run, before the page: adopt the URL's modes, collapse the sidebar in presenter mode (it
    comes back when the mode ends) and inject the modes' CSS."""
    _sync(PRESENT, PRESENT_ON)
    _sync(DARK, DARK_ON)
    st.session_state[_DRAWN] = False
    st.set_page_config(initial_sidebar_state="collapsed" if on() else "auto")
    st.html(f"<style>{css()}</style>")
    if on() and not st.session_state.get(_STYLED):
        # The browser draws a <style> element's content 70-500 ms after the page's text (measured in
        # Chromium, bench/README.md): the session's first run holds the page back that long, so the
        # projector's first paint is already in presenter fonts.
        time.sleep(FIRST_PAINT_HOLD_S)
        st.session_state[_STYLED] = True


def _follow(widget: str, key: str, param: str) -> None:
    """A toggle moved: the mode and the URL follow it (before the rerun it causes)."""
    st.session_state[key] = value = bool(st.session_state[widget])
    if value:
        st.query_params[param] = "1"
    elif param in st.query_params:
        del st.query_params[param]
    st.rerun()   # the whole page: a toggle drawn in a fragment would otherwise restyle nothing outside it


def redraw_toggles() -> None:
    """A fragment that draws the toggles reruns alone: they are drawn again in it (`toggles` draws once a run)."""
    st.session_state[_DRAWN] = False


def toggles() -> None:
    """The two toggles, once per run (a second call draws nothing): a page's toolbar, or `menu()`."""
    if st.session_state.get(_DRAWN):
        return
    st.session_state[_DRAWN] = True
    st.session_state[PRESENT_TOGGLE], st.session_state[DARK_TOGGLE] = on(), dark()  # the URL may have moved them
    st.toggle("Presenter view", key=PRESENT_TOGGLE, on_change=_follow, args=(PRESENT_TOGGLE, PRESENT_ON, PRESENT),
              help=f"For a projector: no sidebar, large text and chart labels, no chart toolbar. "
                   f"A link with `?{PRESENT}=1` opens a page this way.")
    st.toggle("Dark theme", key=DARK_TOGGLE, on_change=_follow, args=(DARK_TOGGLE, DARK_ON, DARK),
              help=f"Light text on a dark page and dark charts, for a dim room (`?{DARK}=1`).")


def display_menu() -> None:
    """The toggles in a small "Display" menu: presenter mode's, in a page's own toolbar or the corner."""
    with st.popover("Display", icon=":material/tv:"):
        toggles()


def menu() -> None:
    """After the page, unless it drew the toggles itself: under "Display" in the sidebar, or, in presenter
    mode (the sidebar hidden), in a small menu at the page's top right."""
    if st.session_state.get(_DRAWN):
        return
    if on():
        with st.container(key=MENU):
            display_menu()
    else:
        with st.sidebar.expander("Display", icon=":material/tv:"):
            toggles()


def modes() -> tuple[bool, bool]:
    """(presenter view, dark charts): what `style` restyles a figure for."""
    return on(), dark() or _viewer_dark()


def style(fig: go.Figure, max_height: float | None = None) -> go.Figure:
    """`fig` for the current modes (explorer.figures.projector.for_projector); `fig` itself in neither.
    `max_height` caps the figure in presenter mode, where it must fit the screen beside a lesson's text."""
    return for_projector(fig, large=on(), dark=dark() or _viewer_dark(), max_height=max_height if on() else None)


def chart_config(base: dict | None = None) -> dict:
    """st.plotly_chart's `config`: `base` (none by default), and in presenter mode no modebar."""
    config = dict(base or {})
    if on():
        config["displayModeBar"] = False
    return config


__all__ = ["PRESENT", "DARK", "PRESENT_TOGGLE", "DARK_TOGGLE", "PRESENT_ON", "DARK_ON", "MENU", "CSS_MARK",
           "DARK_BG", "on", "dark", "css", "apply", "toggles", "display_menu", "menu", "modes", "style", "chart_config"]
