"""The app's pages, in menu order: `app.py` builds `st.Page`s from PAGE_SPECS and the tests
parametrise over it. Add a page with one line here (and, optionally, its one-line blurb for
the Home page in PAGE_BLURBS).

The folder is `views/`, not `pages/`: Streamlit treats a `pages/` folder next to the entry script
as a legacy multipage app, so the first request of a fresh server (and every AppTest run) would
run the page file without app.py: no sidebar, and every helper module listed as a page.
"""

# (file relative to app.py, menu title, url path, Material icon)
PAGE_SPECS: list[tuple[str, str, str, str]] = [
    ("views/home.py", "Home", "home", ":material/home:"),
    ("views/architecture.py", "Architecture", "architecture", ":material/account_tree:"),
    ("views/positional.py", "Positional encoding", "positional", ":material/waves:"),
]

# One line per page for the Home page's table of contents (file -> text).
PAGE_BLURBS: dict[str, str] = {
    "views/architecture.py": "Design a Transformer: block diagram with tensor shapes, parameter count, "
                             "FLOPs and memory, next to the famous models.",
    "views/positional.py": "How a Transformer knows word order: sinusoidal, learned and rotary "
                           "encodings as heatmaps and similarity curves.",
}
