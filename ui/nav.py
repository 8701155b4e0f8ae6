"""The app's menu in the sidebar, drawn as page links (app.py hides `st.navigation`'s own menu).

Streamlit's navigation puts its section headers as <div>s inside its <ul>, which screen readers and
axe-core's `list`/`listitem` rules (WCAG 1.3.1) reject, and no option changes that markup
(bench/README.md, "Why the code is as it is"). These links are plain anchors under bold section names;
the current page's link is marked by Streamlit (`aria-current`-like styling) as before.
"""

from __future__ import annotations

import streamlit as st

from ui import menu

MENU = "menu"   # the menu's container key: `.st-key-menu a` are its links (a contract for the tests)


def draw() -> None:
    with st.container(key=MENU, gap="small"):
        for section, pages in menu.SECTIONS.items():
            if section:
                st.markdown(f"**{section}**")
            for p in pages:
                st.page_link(p.file, label=p.title, icon=p.icon, width="stretch")
