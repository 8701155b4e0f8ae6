"""Every page runs inside app.py's frame (navigation, sidebar, session state).

A folder named `pages/` next to app.py makes a fresh Streamlit process start in its legacy
multipage mode, which runs a deep-linked page file on its own, without app.py. `require_app()`
at the top of each page notices that, leaves the legacy mode for the whole process (the same
switch `st.navigation` flips once it has run) and reruns through app.py. It costs one empty run,
once per server start (and once per AppTest run, which resets the mode each time).
"""

from __future__ import annotations

from contextlib import contextmanager

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

APP_RUNNING = "_app_running"   # True while app.py runs the selected page


@contextmanager
def app_frame():
    """app.py wraps `page.run()` in this."""
    st.session_state[APP_RUNNING] = True
    try:
        yield
    finally:
        st.session_state[APP_RUNNING] = False


def require_app() -> None:
    if not st.session_state.get(APP_RUNNING):
        PagesManager.uses_pages_directory = False
        st.rerun()
