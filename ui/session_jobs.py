"""The jobs of this browser (a training run, an experiment, a search), kept by the owner cookie, not by the
tab: `explorer.jobs.owned` holds them server-wide. A reloaded or reopened tab of the same browser finds its
jobs there and shows them live; another visitor never gets them. Every page's run and a heartbeat fragment
tell the registry that a tab of this owner still watches; a job no tab watched for GRACE_S stops (keeping
what it learned) and frees its slot.
"""

from __future__ import annotations

import streamlit as st

from explorer.jobs.owned import BEAT_S, owned_jobs
from ui.owner import owner_id

TRAIN, EXPERIMENT, SEARCH = "train", "experiment", "search"


def keep(kind: str, job) -> None:
    """`job` is this visitor's job of `kind` (TRAIN, EXPERIMENT, SEARCH), in every tab of their browser."""
    owned_jobs().register(owner_id(), kind, job)


def job(kind: str):
    """This visitor's job of `kind`, started in this tab or another of their browser, or None."""
    return owned_jobs().job(owner_id(), kind)


def adopt(kind: str, key: str):
    """This visitor's job of `kind`, kept in st.session_state[key] too: the registry's when it has one (a job
    started in another tab of this browser, or before a reload), else the one this session had."""
    found = job(kind)
    if found is not None and st.session_state.get(key) is not found:
        st.session_state[key] = found
    return st.session_state.get(key)


def heartbeat() -> None:
    """Tell the registry this tab watches its owner's jobs: now, and every BEAT_S while one is active,
    from a fragment that draws nothing (so it needs no container of its own, see ui.frame.live_fragment)."""
    registry, owner = owned_jobs(), owner_id()
    registry.seen(owner)
    if registry.active(owner):
        st.fragment(run_every=BEAT_S)(_beat)()


def _beat() -> None:
    owned_jobs().seen(owner_id())
