"""Home: what the explorer shows, the selected model at a glance, and a link to every page."""

import ast
from pathlib import Path

import streamlit as st

from ui import frame, menu, models, widgets

frame.require_app()  # a deep link on a fresh server: rerun through app.py

ROOT = Path(__file__).resolve().parent.parent


def blurb(file: str) -> str:
    """The page's line from menu.BLURBS, else the first line of its docstring."""
    if file in menu.BLURBS:
        return menu.BLURBS[file]
    try:
        doc = ast.get_docstring(ast.parse((ROOT / file).read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError):
        doc = ""
    return doc.split("\n")[0]


st.title("Transformer Explorer")
st.markdown(
    "A Transformer small enough to train on a laptop in seconds, and every part of it in plain "
    "view. Change the architecture and watch the parameter count move; see how positional "
    "encodings tell the model about word order; train on a toy task such as reversing a sequence, "
    "then look at the attention heads that learned to do it, layer by layer."
)

sel = models.selected_model()
st.subheader("The selected model")
st.caption(f"{sel.label} — choose another in the sidebar. Every page looks inside this one.")
facts = widgets.model_facts(sel.config, sel.task)
row = st.container(horizontal=True, gap="small")
for label, value in facts.items():
    row.metric(label, value, border=True, width="content")

st.subheader("Pages")
for section, pages in menu.SECTIONS.items():
    pages = [page for page in pages if page != menu.HOME]
    if pages and section:
        st.markdown(f"**{section}**")
    for page in pages:
        left, right = st.columns([1, 3], vertical_alignment="center")
        left.page_link(page.file, label=page.title, icon=page.icon)
        right.markdown(blurb(page.file))
