"""Glue between the Search page and `explorer.jobs.search`: this session's search (started and stopped by
button callbacks, polled by a fragment), and what its best trial offers: "Use this model" and its
settings as a Train-page recipe.

The job's driver thread makes no Streamlit call. It is the visitor's, not the tab's: `ui.session_jobs` keeps
it for the owner cookie (and the session in `st.session_state[SEARCH_JOB]`), so a reloaded tab shows it live
again, and it stops only once no tab of the browser watches it.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

import pandas as pd
import streamlit as st

from explorer.jobs.search import SearchJob, SearchView
from explorer.search import SearchSpec
from explorer.search.ray_cluster import RayUnavailable
from explorer.store.runs import RunInfo
from ui import experiment_job, models
from ui.model_config import CFG, CONFIG_FIELDS
from ui.session_jobs import SEARCH, adopt, keep
from ui.train_settings import SETTINGS

SEARCH_JOB = "search_job"          # this visitor's SearchJob (one at a time)
SEARCH_ERROR = "_search_error"     # why the last Start click was refused, shown once
_RECIPE = "_search_recipe"        # a run whose settings were just loaded for the Train page
TRAIN_PAGE = "pages/train.py"


def current_job() -> SearchJob | None:
    """This visitor's search: started in this tab, in another of their browser, or before a reload."""
    return adopt(SEARCH, SEARCH_JOB)


def active(job: SearchJob | None) -> bool:
    return job is not None and not job.ended


def on_start(spec: SearchSpec | None, owner: str) -> None:
    """Button callback: start (or resume) this session's search, or leave a refusal for take_error."""
    if spec is None:
        return
    if active(current_job()):
        st.session_state[SEARCH_ERROR] = ("A search of yours is already running (in this tab or another of this "
                                          "browser): stop it first.")
        return
    try:
        job = SearchJob(spec, owner=owner)
        job.start()
    except (ValueError, RayUnavailable, OSError) as err:
        st.session_state[SEARCH_ERROR] = str(err)
        return
    st.session_state[SEARCH_JOB] = job
    keep(SEARCH, job)


def on_stop() -> None:
    job = current_job()
    if job is not None:
        job.stop()


def take_error() -> str | None:
    return st.session_state.pop(SEARCH_ERROR, None)


def poll(job: SearchJob, body: Callable[[SearchView], None], was_active: bool | None = None) -> None:
    """Draw body(view) in a fragment that reruns while the search runs (the Experiments page's poll: when
    it ends, the page reruns and draws the last view without polling)."""
    experiment_job.poll(job, lambda j: body(j.view()), was_active)


def run_link(name: str | None) -> str | None:
    """A link that opens a trial's run on the Attention page (the sidebar's picker reads it)."""
    return None if not name else f"attention?model_source={quote('Trained run')}&model_run={quote(name)}"


def trials_table(view: SearchView) -> pd.DataFrame:
    """A row per trial: number, state, value, its params, seconds, worker and a link to its run."""
    rows = [{"trial": r["number"], "state": r["state"].lower(), "value": r["value"],
             **{k: v for k, v in list((r.get("values") or {}).items())[1:]},   # a multi-objective's others
             **{k: v for k, v in r["params"].items()}, "seconds": r["seconds"], "worker": r["worker"],
             "run": run_link(r["run"]), "why": r["error"]} for r in view.rows]
    return pd.DataFrame(rows)


def best_run(view: SearchView) -> RunInfo | None:
    """The best trial's saved run, if it is still on disk."""
    return trial_run((view.best or {}).get("run"))


def trial_run(name: str | None) -> RunInfo | None:
    """A trial's saved run, if it is still on disk and this visitor's to see."""
    return next((r for r in models.visible_runs() if r.name == name), None) if name else None


def on_use(name: str) -> None:
    """Button callback: pick the best trial's run in the sidebar, for every page."""
    models.select_run(name)


def on_train_recipe(run: RunInfo) -> None:
    """Button callback: the best trial's model and training settings into the Train page's widgets."""
    model, train = run.model, run.train
    for f in CONFIG_FIELDS:
        if f in model:
            st.session_state[f"{CFG}_{f}"] = model[f]
    for f, key in SETTINGS.items():
        if f in train and f != "threads":  # the machine's business, not the recipe's
            st.session_state[key] = train[f]
    st.session_state[_RECIPE] = run.name


def recipe_loaded() -> None:
    """After on_train_recipe, once: say so, with the way to the Train page. Not st.switch_page: it clears
    the URL, which Streamlit refuses while the sidebar's run picker is bound to it."""
    name = st.session_state.pop(_RECIPE, None)
    if name:
        st.success(f"Loaded the settings of run **{name}** on the Train page: **Train** there trains it again "
                   "from fresh weights, with live curves.", icon=":material/model_training:")
        st.page_link(TRAIN_PAGE, label="Open Train", icon=":material/model_training:")


__all__ = ["SEARCH_JOB", "current_job", "active", "on_start", "on_stop", "take_error", "poll", "run_link",
           "trials_table", "best_run", "trial_run", "on_use", "on_train_recipe", "recipe_loaded"]
