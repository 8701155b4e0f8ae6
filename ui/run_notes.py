"""Runs as a researcher keeps them, on the Runs page: the filters by study, tag and task (a study's runs kept
together, by trial), and the notes and tags of a run, which only its owner edits (explorer.store.runs).

Notes and tags are visitor text: the table shows them as cells (text), this module through explorer.quoting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from explorer.limits import MAX_NOTE_CHARS, MAX_TAG_CHARS, MAX_TAGS
from explorer.quoting import clean, md_text
from explorer.store import runs
from ui import owner

RUNS_STUDY, RUNS_TAG, RUNS_TASK = "runs_study", "runs_tag", "runs_task"   # the filters (multiselects)
RUNS_NOTES, RUNS_TAGS, RUNS_NOTES_SAVE = "runs_notes", "runs_tags", "runs_notes_save"   # the editor's
_SEEN, _ERROR = "_runs_notes_seen", "_runs_notes_error"   # the notes last drawn from disk; a refused save


def study_of(info: runs.RunInfo | None) -> str:
    """The Study cell: "study #trial", or "" for a run no search saved."""
    if info is None or info.study is None:
        return ""
    return info.study + ("" if info.trial is None else f" #{info.trial}")


def grouped(items: Sequence, info: Callable) -> list:
    """Newest first, but a study's runs together (where its newest run stands), by trial number."""
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        study = getattr(info(item), "study", None)
        if study is not None:
            first.setdefault(study, i)

    def key(pair):
        i, item = pair
        meta = info(item)
        study = getattr(meta, "study", None)
        return (i, 0) if study is None else (first[study], meta.trial if meta.trial is not None else 0)
    return [item for _, item in sorted(enumerate(items), key=key)]


def filtered(items: Sequence, info: Callable, task_of: Callable) -> list:
    """The filters by study, tag and task (drawn only when there is something to choose), applied and grouped."""
    infos = [info(item) for item in items]
    studies = sorted({i.study for i in infos if i is not None and i.study})
    tags = sorted({t for i in infos if i is not None for t in i.tags}, key=str.casefold)
    tasks = sorted({task_of(item) for item in items})
    if not studies and not tags and len(tasks) < 2:
        return grouped(items, info)
    left, middle, right = st.columns(3)
    chose_study = left.multiselect("Study", studies, key=RUNS_STUDY, format_func=clean, placeholder="Every study",
                                   help="The search study whose trials saved the runs (Search page, or "
                                        "`python -m explorer search`)", disabled=not studies)
    chose_tag = middle.multiselect("Tag", tags, key=RUNS_TAG, format_func=clean, placeholder="Any tag",
                                   help="Runs with any of these tags", disabled=not tags)
    chose_task = right.multiselect("Task", tasks, key=RUNS_TASK, format_func=clean, placeholder="Every task")

    def keep(item, i: runs.RunInfo | None) -> bool:
        return ((not chose_study or (i is not None and i.study in chose_study))
                and (not chose_tag or (i is not None and any(t in chose_tag for t in i.tags)))
                and (not chose_task or task_of(item) in chose_task))
    return grouped([item for item, i in zip(items, infos) if keep(item, i)], info)


def _keys(name: str) -> tuple[str, str]:
    return f"{RUNS_NOTES}:{name}", f"{RUNS_TAGS}:{name}"


def save(name: str) -> None:
    """The form's callback: write this visitor's notes and tags of run `name`, or keep why not."""
    notes_key, tags_key = _keys(name)
    tags = str(st.session_state.get(tags_key, "")).split(",")
    try:
        runs.annotate_run(name, notes=str(st.session_state.get(notes_key, "")), tags=tags, owner=owner.owner_id())
    except (PermissionError, ValueError, OSError) as err:
        st.session_state[_ERROR] = f"Could not save the notes of run {md_text(name)}: {md_text(err)}"
        return
    st.session_state.pop(_ERROR, None)
    st.toast(f"Saved the notes and tags of {md_text(name)}.", icon=":material/edit_note:")


def editor(info: runs.RunInfo | None) -> None:
    """The run's notes and tags: a form for its owner, the text alone for anyone else."""
    st.markdown("**Notes and tags**")
    if info is None:
        st.caption("A run of this session only: its notes can be kept once it is saved.")
        return
    if owner.whose(info.owner) != owner.YOURS:
        if info.tags:
            st.markdown("Tags: " + ", ".join(md_text(t) for t in info.tags))
        if info.notes:
            st.markdown("  \n".join(md_text(line) for line in info.notes.splitlines()))
        why = ("another visitor's run" if owner.whose(info.owner) == owner.OTHERS else "a run with no owner")
        st.caption(f":material/lock: {'No notes. ' if not (info.notes or info.tags) else ''}This is {why}: only "
                   "the browser that trained it can change its notes and tags.")
        return
    notes_key, tags_key = _keys(info.name)
    if st.session_state.get(_SEEN) != (info.name, info.notes, info.tags):  # the disk changed: show what it says
        st.session_state[notes_key], st.session_state[tags_key] = info.notes, ", ".join(info.tags)
        st.session_state[_SEEN] = (info.name, info.notes, info.tags)
    error = st.session_state.pop(_ERROR, None)
    if error:
        st.error(error, icon=":material/error:")
    with st.form(key=f"runs_notes_form:{info.name}", border=False):
        st.text_area("Notes", key=notes_key, max_chars=MAX_NOTE_CHARS, height=100,
                     help="What you tried and what you saw; kept with the run (meta.json). Only you can edit them; "
                          "whoever can open the run reads them (a private run's, only you).")
        st.text_input("Tags", key=tags_key, placeholder="baseline, lr-sweep",
                      help=f"Comma-separated, at most {MAX_TAGS} of {MAX_TAG_CHARS} characters each; filter the "
                           "table by them above.")
        st.form_submit_button("Save notes and tags", key=RUNS_NOTES_SAVE, icon=":material/save:", on_click=save,
                              args=(info.name,))
