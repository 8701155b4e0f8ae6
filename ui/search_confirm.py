"""The Search page's "Rerun over seeds": the best configurations of this visitor's search trained again over
fresh seeds (explorer/search/confirm.py) as a SearchJob of its own, in the same session slot as the search
(one at a time, stoppable, its runs the visitor's), and the ranked table it ends with.

A multi-objective study's Pareto front is drawn by the page; a click on a point picks that trial here
(`picked_trial`), which offers its run and its settings as the best trial's box does."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from explorer.jobs.search import SearchJob, SearchView
from explorer.limits import check_search_work
from explorer.search import SearchSpec
from explorer.search.confirm import MAX_SEEDS, MAX_TOP
from explorer.search.ray_cluster import RayUnavailable
from ui import search_job
from ui.session_jobs import SEARCH, keep

CONFIRM_SEEDS, CONFIRM_TOP = "search_confirm_seeds", "search_confirm_top"
CONFIRM_BUTTON = "search_confirm"
PARETO_CHART = "search_pareto"      # the front's chart; its selection picks a trial
DEFAULT_SEEDS, DEFAULT_TOP = 3, 3


def on_confirm(spec: SearchSpec | None, owner: str) -> None:
    """Button callback: rerun the best of this visitor's last search (else of the page's) over seeds, or leave
    a refusal for take_error. The last search's own spec: "Train with these settings" changes the widgets."""
    current = search_job.current_job()
    if search_job.active(current):
        st.session_state[search_job.SEARCH_ERROR] = "A search of yours is running: let it end or stop it first."
        return
    spec = current.spec if current is not None else spec
    if spec is None:
        return
    seeds = int(st.session_state.get(CONFIRM_SEEDS, DEFAULT_SEEDS))
    top = int(st.session_state.get(CONFIRM_TOP, DEFAULT_TOP))
    try:
        check_search_work(seeds * top, spec.settings()["steps"], spec.dims())   # the shared server's cap
        job = SearchJob(spec, owner=owner, confirm=(seeds, top))
        job.start()
    except (ValueError, RayUnavailable, OSError) as err:
        st.session_state[search_job.SEARCH_ERROR] = str(err)
        return
    st.session_state[search_job.SEARCH_JOB] = job
    keep(SEARCH, job)


def controls(row, spec: SearchSpec | None, owner: str, busy: bool, error: str | None) -> None:
    """Seeds, how many of the best, and the button, in the page's control row."""
    row.number_input("Seeds", 2, min(10, MAX_SEEDS), DEFAULT_SEEDS, key=CONFIRM_SEEDS, width=110,
                     help="Fresh seeds each of the best configurations is trained with again (3 decide).")
    row.number_input("Best", 1, min(5, MAX_TOP), DEFAULT_TOP, key=CONFIRM_TOP, width=110,
                     help="How many of the search's best configurations to rerun.")
    row.button("Rerun over seeds", key=CONFIRM_BUTTON, icon=":material/replay:", on_click=on_confirm,
               args=(spec, owner), disabled=busy or (error is not None and search_job.current_job() is None),
               help="Train the best configurations of your last search (else of the one set above) again over "
                    "fresh seeds, and rank them by mean and 95% interval: one trial's score is one seed.")


def _interval(e: dict) -> str:
    low, high = e["interval"]
    return "—" if low is None or not math.isfinite(low) else f"± {(high - low) / 2:.3g}  [{low:.4g}, {high:.4g}]"


def _others(confirm: dict, e: dict) -> dict:
    """A study of several metrics: the other metrics' means, and whether the configuration is on the front."""
    if "on_front" not in e:
        return {}
    means = {f"{m} (mean)": s["mean"] for m, s in e["metrics"].items() if m != confirm["metric"]}
    return {**means, "on the front": "yes" if e["on_front"] else "no"}


def table(confirm: dict) -> pd.DataFrame:
    """A row per configuration, best first: rank, trial, mean, interval, seeds, (several metrics: the others'
    means and the front), its settings and the verdict."""
    return pd.DataFrame([{"rank": e["rank"], "trial": e["trial"], "mean": e["mean"], "95% interval": _interval(e),
                          "seeds": e["n"], **_others(confirm, e), **e["params"], "against #1": e["verdict"] or "—"}
                         for e in confirm["configurations"]])


def results(view: SearchView) -> None:
    """The reruns' ranking, once they ended."""
    confirm = view.confirm
    if not confirm or not confirm["configurations"]:
        return
    st.subheader(f"Rerun over {confirm['seeds']} seeds")
    several = any("on_front" in e for e in confirm["configurations"])
    st.caption(("Several metrics: the configurations whose means no other beats on every metric (the front) "
                "come first, then the rest, each " if several else "Ranked ")
               + f"by the mean {confirm['metric']} over fresh seeds (never a trial's own), each with its "
               "95% t interval; #1 against each of the others by Welch's t, as the experiments decide their "
               "claims (three seeds each decide).")
    st.dataframe(table(confirm), hide_index=True, key="search_confirm_table",
                 column_config={"mean": st.column_config.NumberColumn(confirm["metric"], format="%.4g")})


def picked_trial(view: SearchView) -> dict | None:
    """The front's trial a click picked (its row), or None."""
    event = st.session_state.get(PARETO_CHART) or {}
    points = (event.get("selection") or {}).get("points") or []
    number = points[0].get("customdata") if points else None
    if isinstance(number, list):
        number = number[0] if number else None
    return next((r for r in view.rows if r["number"] == number), None)


__all__ = ["CONFIRM_SEEDS", "CONFIRM_TOP", "CONFIRM_BUTTON", "PARETO_CHART", "on_confirm", "controls", "table",
           "results", "picked_trial"]
