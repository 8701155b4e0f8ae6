"""The app's pages, in menu order: `app.py` builds `st.Page`s from PAGE_SPECS and the tests
parametrise over it. Add a page with one line here (and, optionally, its one-line blurb for
the Home page in PAGE_BLURBS).

Every page calls `ui.require_app()` first: see pages/frame.py for why a page may find itself
running without app.py, and what it does about it.
"""

# (file relative to app.py, menu title, url path, Material icon)
PAGE_SPECS: list[tuple[str, str, str, str]] = [
    ("pages/home.py", "Home", "home", ":material/home:"),
    ("pages/architecture.py", "Architecture", "architecture", ":material/account_tree:"),
    ("pages/positional.py", "Positional encoding", "positional", ":material/waves:"),
]

# One line per page for the Home page's table of contents (file -> text).
PAGE_BLURBS: dict[str, str] = {
    "pages/architecture.py": "Design a Transformer: block diagram with tensor shapes, parameter count, "
                             "FLOPs and memory, next to the famous models.",
    "pages/positional.py": "How a Transformer knows word order: sinusoidal, learned and rotary "
                           "encodings as heatmaps and similarity curves.",
}
