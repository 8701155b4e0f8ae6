"""The sidebar's model picker: every page looks inside the model chosen here."""

from __future__ import annotations

import streamlit as st

from ui.model_config import DEFAULTS, build_config, current_config, current_task
from ui.models import (
    PRETRAINED,
    RUN,
    SELECTED,
    SOURCE,
    UNTRAINED_SEED,
    SelectedModel,
    apply_pending_selection,
    load_pretrained,
    load_run,
    pretrained_entries,
    run_names,
    untrained_model,
)
from ui.widgets import model_facts

SOURCE_LABELS = {"pretrained": "Shipped model", "run": "Trained run", "untrained": "Untrained"}


def _pick(entries: list[dict], runs: list[str]) -> SelectedModel:
    options = (["pretrained"] if entries else []) + (["run"] if runs else []) + ["untrained"]
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
        return load_run(st.selectbox("Run", runs, key=RUN, bind="query-params"))
    return _untrained()


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
        st.error(str(err), icon=":material/error:")
        entries = []
    runs = run_names()
    if not entries:
        st.caption("No shipped models yet: pages show an untrained model until you train one.")
    try:
        sel = _pick(entries, runs)
    except ValueError as err:
        st.error(str(err), icon=":material/error:")
        sel = _untrained()
    facts = model_facts(sel.config, sel.task)
    st.caption(f"**{sel.label}** · {facts['Architecture']} · d_model {facts['d_model']} · "
               f"{sel.config.n_heads} heads · {facts['Layers']} layers · {facts['Positions']} · "
               f"{facts['Norm']} · {facts['Parameters']} params")
    st.session_state[SELECTED] = sel
    return sel
