"""Glue between the Studies page and `explorer.search.studies`: the study opened and the one compared (bound
to the URL: `studies?study=NAME&compare=OTHER`), the trial selected by a click in a plot or a row of the
table, and deleting one's own study after a confirmation.

A plot's selection is read in its `on_select` callback, before the page reruns, through the figure drawn
for it on the run before (kept in this session only), so the selected trial is known above the plots.
"""

from __future__ import annotations

from urllib.parse import quote

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from explorer.figures.studies import trial_at
from explorer.quoting import md_text
from explorer.search import studies
from explorer.search.studies import StudySummary
from explorer.store.runs import safe_name
from ui import models
from ui.owner import NOBODYS, OTHERS, YOURS, owner_id, whose

STUDY, COMPARE = "study", "compare"        # the URL's study=NAME and compare=NAME (a shared link opens them)
TRIAL = "_studies_trial"                   # (study, trial number) selected by a click
FIGURES = "_studies_figures"               # chart key -> the figure drawn for it, to read a click with
DELETE, ERROR = "_studies_delete", "_studies_error"
OPEN = "_studies_open_run"                 # a trial's run just opened: the page goes to Attention
ATTENTION_PAGE = "pages/attention.py"
WHOSE_HELP = ("Yours: started on this browser's Search page, so you can delete it. Another visitor's: open, "
              "compare and export it; only they can delete it. No owner: made on the command line; read-only here.")


def summaries() -> list[StudySummary]:
    """The studies this visitor may see, their own first."""
    return studies.list_studies(viewer=owner_id())


def _counts(s: StudySummary) -> str:
    return ", ".join(f"{n} {state.lower()}" for state, n in s.counts.items() if n) or "none"


def _best(s: StudySummary) -> str:
    if s.best is None:
        return "—"
    if len(s.best) == 1:
        return f"{s.best[0]:.4g}"
    return f"front of {s.front}: " + ", ".join(f"{m} {v:.3g}" for m, v in zip(s.metrics, s.best))


def list_table(items: list[StudySummary]) -> pd.DataFrame:
    """A row per study: name, whose, task, sampler, space, trials by state, best value(s), dates."""
    return pd.DataFrame([{"Study": s.name, "Whose": whose(s.owner), "Task": s.task or "?",
                          "Sampler": s.sampler or "?", "Pruner": s.pruner or "?", "Space": " ".join(s.space),
                          "Trials": _counts(s), "Objective": ", ".join(f"{m} ({d[:3]})" for m, d in
                                                                         zip(s.metrics, s.directions)),
                          "Best": _best(s), "Started": s.started.replace("T", " "),
                          "Last": s.last.replace("T", " ")} for s in items])


def facts(s: StudySummary) -> str:
    """One line of the study's facts, its stored words quoted."""
    return md_text(f"{s.task or '?'} · sampler {s.sampler or '?'} · pruner {s.pruner or '?'} · "
                   f"{' '.join(s.space) or 'no space recorded'} · trials: {_counts(s)} · best {_best(s)} · "
                   f"{s.started.replace('T', ' ')} to {s.last.replace('T', ' ')} UTC · {whose(s.owner)}")


# ------------------------------------------------------------------------------ the selected trial
def selected(name: str) -> int | None:
    picked = st.session_state.get(TRIAL)
    return picked[1] if picked and picked[0] == name else None


def select(name: str, number: int | None) -> None:
    if number is not None:
        st.session_state[TRIAL] = (name, int(number))


def keep_figure(key: str, fig: go.Figure) -> None:
    st.session_state.setdefault(FIGURES, {})[key] = fig


def on_chart_select(name: str, key: str) -> None:
    """A plot's callback: the trial of the point clicked becomes the selected one."""
    fig = st.session_state.get(FIGURES, {}).get(key)
    event = st.session_state.get(key)
    points = (event or {}).get("selection", {}).get("points", []) if fig is not None else []
    for point in points:
        number = trial_at(fig, point)
        if number is not None:
            select(name, number)
            return


def on_row_select(name: str, key: str, numbers: list[int]) -> None:
    """The trials table's callback: the row ticked becomes the selected trial."""
    rows = (st.session_state.get(key) or {}).get("selection", {}).get("rows", [])
    if rows and rows[0] < len(numbers):
        select(name, numbers[rows[0]])


def can_open(run: str | None) -> bool:
    """Whether a trial's run is there for this visitor to open (saved, not deleted, not another's private one)."""
    return bool(run) and run in {r.name for r in models.visible_runs()}


def run_url(run: str | None) -> str | None:
    """A link opening a trial's run on the Attention page, in the trials table (a new page load reads it)."""
    return f"attention?model_source={quote('Trained run')}&model_run={quote(run)}" if can_open(run) else None


def on_open_run(run: str) -> None:
    """Button callback: the sidebar picks the run, and the page then opens Attention (open_pending). In this
    session a link's model_run would lose to the sidebar's own choice, which the session keeps."""
    models.select_run(run)
    st.session_state[OPEN] = run


def open_pending() -> None:
    """At the page's top, before any widget: go to the Attention page if a trial's run was just opened."""
    if st.session_state.pop(OPEN, None):
        # an empty mapping, not None: None clears the URL through a check that refuses while the sidebar's
        # picker is bound to it; the picker writes the run into the new page's URL itself
        st.switch_page(ATTENTION_PAGE, query_params={})


# ------------------------------------------------------------------------------ export, delete
def file_name(name: str) -> str:
    try:
        return f"{safe_name(name)}-trials.csv"
    except ValueError:
        return "study-trials.csv"


def delete_refusal(s: StudySummary) -> str | None:
    """Why this visitor may not delete the study, or None when it is theirs."""
    who = whose(s.owner)
    if who == OTHERS:
        return "Another visitor started this study: only they can delete it."
    if who == NOBODYS:
        return "This study was made on the command line, so it has no owner and is read-only here."
    return None


def ask_delete(name: str) -> None:
    st.session_state[DELETE] = name


def do_delete(name: str) -> None:
    st.session_state.pop(DELETE, None)
    try:
        studies.delete_study(name, owner_id())
    except (PermissionError, KeyError) as err:
        st.session_state[ERROR] = f"Could not delete: {err.args[0] if err.args else err}"
        return
    for key in (STUDY, COMPARE):
        if st.session_state.get(key) == name:
            st.session_state.pop(key, None)
    st.toast(f"Deleted study {md_text(name)}; its trials' runs stay on the Runs page.", icon=":material/delete:")


def confirm_delete() -> None:
    """The refusal of the last delete, or the confirmation a Delete click asks for."""
    error = st.session_state.pop(ERROR, None)
    if error:
        st.error(md_text(error), icon=":material/error:")
    name = st.session_state.get(DELETE)
    if name is None:
        return
    with st.container(border=True):
        st.warning(f"Delete study **{md_text(name)}**? Its trials go from the storage; the runs they saved stay. "
                   "This cannot be undone.", icon=":material/delete:")
        row = st.container(horizontal=True)
        row.button("Yes, delete", key="studies_delete_yes", type="primary", on_click=do_delete, args=(name,))
        row.button("Cancel", key="studies_delete_no", on_click=lambda: st.session_state.pop(DELETE, None))


__all__ = ["STUDY", "COMPARE", "TRIAL", "YOURS", "WHOSE_HELP", "ATTENTION_PAGE", "summaries", "list_table", "facts",
           "selected", "select", "keep_figure", "on_chart_select", "on_row_select", "can_open", "run_url",
           "on_open_run", "open_pending", "file_name", "delete_refusal", "ask_delete", "do_delete", "confirm_delete"]
