"""Transformer Explorer: `streamlit run app.py`.

Builds the menu from `ui.menu.SECTIONS`, draws the sidebar (this session's jobs and the model picker
every page shares) and runs the chosen page inside the app's frame.
"""

import sys

import streamlit as st

from ui import a11y, menu, nav
from ui.frame import app_frame


def main() -> None:
    # The icon is an emoji: Streamlit fetches a Material icon favicon from fonts.gstatic.com, and the app
    # loads nothing from the internet (the menu's Material icons come with Streamlit's own font).
    st.set_page_config(page_title="Transformer Explorer", page_icon="🔭", layout="wide",
                       menu_items={"About": "Configure, train and look inside a small Transformer."})
    page = st.navigation({section: [st.Page(p.file, title=p.title, url_path=p.url, icon=p.icon,
                                            default=p == menu.HOME)
                                    for p in pages] for section, pages in menu.SECTIONS.items()},
                         position="hidden")   # its markup fails WCAG 1.3.1: ui/nav.py draws the menu
    with st.sidebar:
        nav.draw()
        a11y.apply()   # charts named and described, the skip link, visible focus (ui/a11y.py)

    # The first visitor of a fresh server waits while PyTorch, pandas and Plotly import (seconds on a laptop):
    # the menu and a note under the page's title show at once instead of a blank page. Later runs skip this.
    loading = None
    if "ui.sidebar" not in sys.modules:
        loading = st.empty()
        with loading.container():
            st.title("Transformer Explorer")
            st.caption(f"Opening {page.title}: PyTorch is starting for the first visit since the server "
                       "started, a few seconds…")
    from ui import experiment_job, links, owner, presenter, sidebar, state, training_job  # after the note

    if loading is not None:
        loading.empty()

    state.init_state()
    presenter.apply()  # ?present=1 / ?dark=1: the projector's CSS, before anything is drawn
    links.say_ignored()
    with st.sidebar:
        training_job.job_status(page)  # this session's training run, on every page
        experiment_job.sidebar_status(page)  # and its experiment, while one runs
        sidebar.model_picker()
        owner.remember()  # this browser's owner token, in a cookie: only it may delete the runs it trains
    with app_frame():
        page.run()
    presenter.menu()  # the Display toggles, unless the page drew them in its own toolbar


# Streamlit runs this file as __main__. A search worker spawned while it is installed as __main__ re-runs it
# as __mp_main__ (multiprocessing's spawn), and must draw nothing.
if __name__ == "__main__":
    main()
