"""The sidebar's model picker: every page looks inside the model chosen here."""

from __future__ import annotations

import streamlit as st

from explorer.quoting import md, md_text
from explorer.store.runs import name_was_used, safe_name
from ui.model_config import DEFAULTS, build_config, current_config, current_task
from ui.models import (
    PRETRAINED,
    PRIVATE,
    RUN,
    SELECTED,
    SOURCE,
    UNTRAINED_SEED,
    SelectedModel,
    apply_pending_selection,
    deleted_since_loaded,
    is_private,
    load_pretrained,
    load_run,
    pretrained_entries,
    run_names,
    untrained_model,
)
from ui.widgets import model_facts

SOURCE_LABELS = {"pretrained": "Shipped model", "run": "Trained run", "untrained": "Untrained"}


def _named_run() -> str | None:
    """The run this tab's picker or its link names, if it is a run name at all."""
    name = st.session_state.get(RUN) or st.query_params.get(RUN)
    try:
        return name if isinstance(name, str) and safe_name(name) == name else None
    except ValueError:
        return None


def _pick(entries: list[dict], runs: list[str]) -> SelectedModel:
    wanted_run = _named_run()
    options = (["pretrained"] if entries else []) + (["run"] if runs or wanted_run else []) + ["untrained"]
    default = "pretrained" if entries else "untrained"
    source = st.radio("Model", options, options.index(default), format_func=SOURCE_LABELS.get,
                      key=SOURCE, bind="query-params", horizontal=True,
                      help="Every page looks inside this model.")
    if source == "pretrained":
        by_name = {e["name"]: e for e in entries}
        name = st.selectbox("Shipped model", list(by_name), key=PRETRAINED, bind="query-params")
        if by_name[name].get("description"):
            st.caption(by_name[name]["description"])
        return load_pretrained(name, by_name[name])
    if source == "run":
        return _run(runs, wanted_run)
    return _untrained()


def _run(runs: list[str], wanted: str | None) -> SelectedModel:
    """The run the sidebar and the URL name: never "the newest", so a link opens the same run. A run
    deleted since this tab loaded it stays listed with its copy; a link to a run that is gone says
    so rather than showing another (a deleted run's name is never given again)."""
    options = runs + ([wanted] if wanted and wanted not in runs else [])
    # Set by code on every run, so Streamlit writes it into the URL whenever the URL lacks it (Streamlit
    # writes a bound widget's value only after a click on it, or after code sets it); a link's name wins.
    st.session_state[RUN] = st.session_state.get(RUN) or options[0]
    name = st.selectbox("Run", options, index=None, key=RUN, bind="query-params")  # cleared: back to the first
    if name not in runs:
        why = (PRIVATE if is_private(name) else "was deleted; no other run will take its name"
               if name_was_used(name) else "is not on this server")
        st.warning(f"Run {md(name)} {why}. Pick another run; until then, pages show an untrained model.",
                   icon=":material/link_off:")
        return _untrained()
    if deleted_since_loaded(name):
        st.caption(f":material/info: Run {md(name)} was deleted from the server since this tab opened it; "
                   "this tab keeps the copy it had loaded.")
    return load_run(name)


def _untrained() -> SelectedModel:
    task = current_task()
    cfg, err = current_config(task=task)
    if err:
        st.warning("The Architecture page's config is not valid, so this is the default config.",
                   icon=":material/warning:")
        cfg = build_config(DEFAULTS, task)[0] or task.model_config()
    st.caption(f"Random weights (seed {UNTRAINED_SEED}) built from the Architecture page's config.")
    return untrained_model(cfg, task)


def model_picker() -> SelectedModel:
    """The sidebar's model choice, shared by every page; stored for `selected_model()`."""
    apply_pending_selection()
    try:
        entries = pretrained_entries()
    except ValueError as err:
        st.error(md_text(err), icon=":material/error:")
        entries = []
    runs = run_names()
    if not entries:
        st.caption("No shipped models yet: pages show an untrained model until you train one.")
    try:
        sel = _pick(entries, runs)
    except ValueError as err:
        st.error(md_text(err), icon=":material/error:")
        sel = _untrained()
    facts = model_facts(sel.config, sel.task)
    st.caption(f"**{md_text(sel.label)}** · {facts['Architecture']} · d_model {facts['d_model']} · "
               f"{sel.config.n_heads} heads · {facts['Layers']} layers · {facts['Positions']} · "
               f"{facts['Norm']} · {facts['Parameters']} params")
    st.session_state[SELECTED] = sel
    return sel
