"""A teacher's own data in the app: on the Train page a TSV of pairs uploaded or a text pasted for the character
LM (`picker`); on the Experiments and Search pages a TSV of pairs (`pairs_expander`).

The data is checked as it arrives (explorer.tasks.own_data) and kept as a TaskConfig in the session,
so the Train button's callback finds it; a run saves that config, data included, and reopens from it.
Own data is never in the page's address; a run saves it (TaskConfig.text) like any other setting.
"""

from __future__ import annotations

import json

import streamlit as st

from explorer.quoting import md, md_text
from explorer.tasks import Task, own_data, presets
from ui.model_config import task_of_config

OWN_MODE = "train_own_mode"    # which data: a preset (None), pairs or text
OWN_FILE = "train_own_file"    # the uploaded TSV
OWN_TEXT = "train_own_text"    # the pasted text
_OWN_TASK = "_train_own_task"  # (JSON of the checked TaskConfig, run-name prefix) or (None, why not); None: a preset
PAIRS, TEXT = "Pairs from a TSV file", "A text for the character LM"
PRIVATE_NOTE = ("Private to you unless you share it: a run trained on your data keeps it, and only your "
                "browser lists, opens and downloads that run until you share it on the Runs page.")
REFUSED = "the uploaded pairs are refused (see “Your own pairs”): remove the file or upload a fixed one"


@st.cache_data(show_spinner="Checking the data…", max_entries=8)
def _config_json(data: bytes | str, prefix: str) -> tuple[str | None, str | None]:
    """(the checked TaskConfig as JSON, None) or (None, why not): a 4 MiB file is read once, not every rerun."""
    make = own_data.pairs_config if prefix == "pairs" else presets.text_config
    try:
        return json.dumps(make(data).to_dict(), sort_keys=True), None
    except ValueError as err:
        return None, str(err)


def _checked(data: bytes | str, prefix: str) -> tuple[Task | None, str | None]:
    spec, error = _config_json(data, prefix)
    if spec is None:
        st.session_state[_OWN_TASK] = (None, f"The data is refused: {md_text(error)}")  # markdown-safe
        return None, error
    st.session_state[_OWN_TASK] = (spec, prefix)
    return task_of_config(spec), None


def picker() -> Task | None:
    """Draw the own-data choice; returns the own task when one is chosen and valid, else None (the preset)."""
    with st.expander("Your own data", expanded=st.session_state.get(OWN_MODE) is not None):
        mode = st.segmented_control("Train on", [PAIRS, TEXT], key=OWN_MODE,
                                    help="Left unselected, the run trains on the task picked above.")
        task, error = None, None
        if mode is None:
            st.session_state[_OWN_TASK] = None
            st.caption("Upload pairs (one a line, source and target split by a tab) or paste a text. Own data "
                       "is not part of the page's address; a run trained on it is saved with it, so it reopens. "
                       + PRIVATE_NOTE)
        elif mode == PAIRS:
            upload = pairs_uploader(OWN_FILE)
            st.caption("For example, two lines of SCAN: `jump twice` ⇥ `JUMP JUMP` and `walk left` ⇥ `LTURN WALK` "
                       "(⇥: a tab). 90% of the sources train, 10% test.")
            if upload is not None:
                task, error = _checked(uploaded_bytes(upload), "pairs")
            else:
                st.session_state[_OWN_TASK] = (None, "Upload a TSV file first, or unselect “Train on”.")
        else:
            text = st.text_area("Text", key=OWN_TEXT, height=140, max_chars=own_data.MAX_TEXT_CHARS,
                                placeholder="Paste a text: a poem, a page of a book, some code…",
                                help=f"{own_data.MIN_TEXT_CHARS:,} to {own_data.MAX_TEXT_CHARS:,} characters; "
                                     "the model learns its characters, the last tenth is held out.")
            if text:
                task, error = _checked(text, "text")
            else:
                st.session_state[_OWN_TASK] = (None, "Paste a text first, or unselect “Train on”.")
        if error:
            st.error(f"**This data cannot be used.** {md_text(error)}", icon=":material/error:")
        elif task is not None:
            st.success(facts(task), icon=":material/check_circle:")
            st.caption(f":material/lock: {PRIVATE_NOTE}")
        elif refusal():
            st.info(f"{refusal()} **Train** waits for it.", icon=":material/upload_file:")
    return task


def pairs_uploader(key: str):
    """The TSV upload of own pairs (Train, Experiments, Search): the uploaded file or None."""
    return st.file_uploader("TSV file: one pair a line, source<TAB>target", type=["tsv", "txt"], key=key,
                            max_upload_size=own_data.MAX_BYTES // 2**20,
                            help=f"Tokens are split on spaces. Limits: {limits()}.")


def uploaded_bytes(upload) -> bytes:
    """An upload's bytes, at most the limit + 1 of them: more is refused by its size, as a file is."""
    upload.seek(0)
    return upload.read(own_data.MAX_BYTES + 1)


def pairs_expander(key: str, use: str) -> tuple[Task | None, str | None]:
    """The "Your own pairs" expander of the Experiments and Search pages (`use`: what the pairs are for):
    (the uploaded pairs' task, None), (None, why they are refused) or (None, None) before an upload."""
    with st.expander("Your own pairs", expanded=st.session_state.get(key) is not None):
        upload = pairs_uploader(key)
        if upload is None:
            st.caption(f"Upload a TSV of your own pairs to {use}. The file is not in the page's address.")
            return None, None
        task, error = checked_pairs(uploaded_bytes(upload))
        if error:
            st.error(f"**This data cannot be used.** {md_text(error)}", icon=":material/error:")
            return None, error
        st.success(f"Runs on {md(upload.name)}: {facts(task)}", icon=":material/check_circle:")
        st.caption(f":material/lock: {PRIVATE_NOTE}")
        return task, None


def checked_pairs(data: bytes) -> tuple[Task | None, str | None]:
    """(the task of an uploaded TSV, None) or (None, why it is refused); checked once per file."""
    spec, error = _config_json(data, "pairs")
    return (task_of_config(spec), None) if spec is not None else (None, error)


def chosen() -> bool:
    """Own data is picked (valid or not): the task picker above it is then out of play."""
    return st.session_state.get(OWN_MODE) is not None


def limits() -> str:
    return (f"{own_data.MAX_BYTES // 2**20} MiB, {own_data.MIN_LINES}-{own_data.MAX_LINES:,} lines of at least "
            f"{own_data.MIN_SOURCES} different sources, "
            f"{own_data.MAX_SIDE_TOKENS} tokens a side, {own_data.MAX_TOKENS:,} tokens and "
            f"{own_data.MAX_VOCAB:,} distinct ones in all")


def facts(task: Task) -> str:
    if task.kind == "lm":
        return (f"{len(task.text):,} characters, {len(task.vocab) - 3} distinct: {len(task.train):,} training "
                f"windows, {len(task.val):,} held out.")
    return (f"{len(task.pairs):,} pairs, {len(task.vocab) - 3} distinct tokens: {len(task.train):,} to train, "
            f"{len(task.val):,} to test; sources up to {task.max_src_len} tokens, targets up to "
            f"{task.max_tgt_len - 1}.")


def current() -> tuple[Task, str] | None:
    """The own task the Train page last checked and its run-name prefix, or None: the preset (or refused)."""
    held = st.session_state.get(_OWN_TASK)
    if not held or held[0] is None:
        return None
    spec, prefix = held
    return task_of_config(spec), prefix


def refusal() -> str | None:
    """Why Train cannot start on own data (none chosen yet, or refused), or None."""
    held = st.session_state.get(_OWN_TASK)
    return held[1] if held and held[0] is None else None
