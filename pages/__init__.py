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
    ("pages/attention.py", "Attention", "attention", ":material/grid_view:"),
    ("pages/outputs.py", "Outputs", "outputs", ":material/bar_chart:"),
    ("pages/train.py", "Train", "train", ":material/model_training:"),
    ("pages/gradients.py", "Gradients", "gradients", ":material/insights:"),
    ("pages/runs.py", "Runs", "runs", ":material/history:"),
    ("pages/experiments.py", "Experiments", "experiments", ":material/science:"),
]

# One line per page for the Home page's table of contents (file -> text).
PAGE_BLURBS: dict[str, str] = {
    "pages/architecture.py": "Design a Transformer: block diagram with tensor shapes, parameter count, "
                             "FLOPs and memory, next to the famous models.",
    "pages/positional.py": "How a Transformer knows word order: sinusoidal, learned and rotary "
                           "encodings as heatmaps and similarity curves.",
    "pages/attention.py": "Where each token looks: every head of every layer as heatmaps, the pattern the "
                          "task expects, masks and entropy.",
    "pages/outputs.py": "What the model predicts: the output distribution at each position, its entropy, "
                        "and greedy against beam search.",
    "pages/train.py": "Train a model live: loss and accuracy curves, an attention head taking shape, "
                      "gradient norms per layer, stop and resume.",
    "pages/gradients.py": "Pre-LN against Post-LN: gradient norms across depth at initialisation and "
                          "over a training run.",
    "pages/runs.py": "Every run of this session and on disk: compare curves and configs, export, delete.",
    "pages/experiments.py": "The seeds' claims as experiments: several seeds each, mean ± std beside what "
                            "the seed predicts, cached for the next visitor.",
}
