"""Every page runs inside app.py's frame (navigation, sidebar, session state).

A folder named `pages/` next to app.py makes a fresh Streamlit process start in its legacy
multipage mode, which runs a deep-linked page file on its own, without app.py. `require_app()`
at the top of each page notices that, leaves the legacy mode for the whole process (the same
switch `st.navigation` flips once it has run) and reruns through app.py. It costs one empty run,
once per server start (and once per AppTest run, which resets the mode each time).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import RerunData, get_script_run_ctx

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


def live_fragment(draw: Callable[[], None], every: float | None) -> None:
    """Draw `draw()` as a fragment that reruns itself every `every` seconds, or, with every=None, only
    when one of its own widgets changes.

    Two guards against a race in Streamlit 1.67's browser side that blanked a page (React unmounts the
    app on "Bad delta path index"; bench/README.md, "Fragments that blanked a page"): a full rerun's
    clean-up of stale elements can drop the container of a fragment whose timer rerun landed next to
    it, and the next rerun of a fragment further down the page then writes past the end of the page.
    - Each fragment sits alone in a container the full run draws, so it is always child 0 there: a
      dropped fragment comes back on its next rerun instead of addressing a position that is gone.
    - A fragment that no longer polls is another function (Streamlit keys a fragment on its function's
      name and position), so a timer rerun still in flight for the polling one finds nothing to run and
      cannot race the full rerun that drew it for the last time.
    """

    def polling() -> None:
        draw()

    def still() -> None:
        draw()

    with st.container():
        if every is None:
            st.fragment(still)()
        else:
            st.fragment(run_every=every)(polling)()


def rerun_fragment(key: str) -> None:
    """Rerun only the fragment drawn with `st.fragment(key=key)` (the rest of the page stays as it is), from
    the body of another fragment, such as a poll nested in it. Streamlit 1.67 names a fragment by key only in
    a widget's callback (`st.rerun(key)`), so this queues the same request its `st.rerun` would; if the key is
    unknown (the fragment is not on the page) the whole page reruns."""
    ctx = get_script_run_ctx()
    try:
        ids = ctx.fragment_storage.resolve_target(key)
    except (AttributeError, StreamlitAPIException):
        st.rerun()
    ctx.script_requests.request_rerun(RerunData(
        query_string=ctx.query_string, page_script_hash=ctx.page_script_hash, fragment_id_queue=ids,
        is_fragment_scoped_rerun=True, cached_message_hashes=ctx.cached_message_hashes,
        context_info=ctx.context_info))
    st.empty()   # a yield point: the runner stops this run here and starts the requested one
