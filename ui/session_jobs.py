"""The jobs a browser tab started (training runs, experiments), stopped when the tab closes.

A session-scoped resource holds every job the tab started; its `on_release` runs when the session
disconnects. A tab that reconnects within RECONNECT_GRACE_S keeps its jobs (`take_back`). Jobs are
anything with `ended`, `stop()` and a `name`; their worker threads make no Streamlit call.
"""

from __future__ import annotations

import logging
import threading

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

# A browser reconnects in about a second; a closed tab's run must stop within 5 s, and the stop itself
# waits for the current step.
RECONNECT_GRACE_S = 2.5

log = logging.getLogger(__name__)


class SessionJobs:
    """The jobs one browser tab started (a list: a tab starts few)."""

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        self.jobs: list = []

    def add(self, job) -> None:
        self.jobs = [j for j in self.jobs if not j.ended and j is not job] + [job]


# Active jobs of a connection that closed, by session id, until the session comes back for them.
_ORPHANS: dict[str | None, list] = {}
_ORPHANS_LOCK = threading.Lock()


def _session_id() -> str | None:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def _connected(session_id: str | None) -> bool:
    """Whether the session has a live connection (internal to Streamlit 1.67, not part of st.*)."""
    return session_id is not None and runtime.exists() and runtime.get_instance().is_active_session(session_id)


def release(holder: SessionJobs) -> None:
    """The tab's connection closed. Streamlit releases session resources on every disconnect, a network
    blip included, and resumes the same session when the browser reconnects (~1 s): stopping at once
    stopped a run at every blip. So the jobs stop after their current step RECONNECT_GRACE_S from now
    unless the session is connected again by then (and it takes them back, `take_back`). No join and
    no wait here: this runs on the server's event loop; a worker that ends saves its run as usual."""
    active = [job for job in holder.jobs if not job.ended]
    if active:
        with _ORPHANS_LOCK:
            _ORPHANS.setdefault(holder.session_id, []).extend(active)
        _watch(holder.session_id, active)


def _watch(session_id: str | None, jobs: list) -> None:
    """RECONNECT_GRACE_S from now: stop the jobs if their session is still disconnected; if it is back
    but has not rerun yet to take them (`take_back`), look again later."""
    def check() -> None:
        left = [job for job in jobs if not job.ended]
        if not left:
            return
        if _connected(session_id):
            with _ORPHANS_LOCK:
                waiting = [job for job in _ORPHANS.get(session_id, []) if job in left]
            if waiting:
                _watch(session_id, waiting)
            return
        with _ORPHANS_LOCK:  # gone: forget them, even if a rerun in flight at the close took them back
            rest = [job for job in _ORPHANS.pop(session_id, []) if job not in left]
            if rest:
                _ORPHANS[session_id] = rest
        log.warning("session %s still disconnected %.1f s after its connection closed: stopping %s",
                    session_id, RECONNECT_GRACE_S, ", ".join(str(getattr(job, "name", job)) for job in left))
        for job in left:
            job.stop()

    timer = threading.Timer(RECONNECT_GRACE_S, check)
    timer.daemon = True
    timer.start()


@st.cache_resource(scope="session", on_release=release, show_spinner=False)
def _holder() -> SessionJobs:
    return SessionJobs(_session_id())


def take_back() -> None:
    """After a reconnect, this session takes back the jobs its last connection left (called on every
    rerun and poll), so that closing the tab later stops them."""
    session_id = _session_id()
    if session_id not in _ORPHANS or not _connected(session_id):  # nearly always: nothing to take back
        return
    holder = _holder()
    with _ORPHANS_LOCK:
        for job in _ORPHANS.pop(session_id, []):
            holder.add(job)


def keep_with_tab(job) -> None:
    """Stop `job` when this tab closes (after the grace for a reconnect)."""
    _holder().add(job)
