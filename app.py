"""Transformer Explorer: `streamlit run app.py`.

Builds the menu from `pages.PAGE_SPECS`, draws the sidebar's model picker (shared by every
page) and runs the chosen page.
"""

import sys

import streamlit as st

from pages import PAGE_SPECS
from pages.frame import app_frame

# The icon is an emoji: Streamlit fetches a Material icon favicon from fonts.gstatic.com, and the app
# loads nothing from the internet (the menu's Material icons come with Streamlit's own font).
st.set_page_config(page_title="Transformer Explorer", page_icon="🔭", layout="wide",
                   menu_items={"About": "Configure, train and look inside a small Transformer."})
page = st.navigation([st.Page(file, title=title, url_path=url, icon=icon, default=(i == 0))
                      for i, (file, title, url, icon) in enumerate(PAGE_SPECS)])

# The first visitor of a fresh server waits while PyTorch, pandas and Plotly import (seconds on a laptop):
# the menu and a note under the page's title show at once instead of a blank page. Later runs skip this.
loading = None
if "pages.ui" not in sys.modules:
    loading = st.empty()
    with loading.container():
        st.title("Transformer Explorer")
        st.caption(f"Opening {page.title}: PyTorch is starting for the first visit since the server started, "
                   "a few seconds…")
from pages import ui  # noqa: E402 (imported after the note above, which needs none of it)
from pages.experiments_ui import sidebar_status as experiment_status  # noqa: E402

if loading is not None:
    loading.empty()

ui.init_state()
with st.sidebar:
    ui.job_status(page)  # this session's training run, on every page
    experiment_status(page)  # and its experiment, while one runs
    ui.model_picker()
with app_frame():
    page.run()
