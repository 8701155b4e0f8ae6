"""The app's menu: its sections and pages in order. `app.py` builds `st.navigation` from SECTIONS, the
Home page lists PAGES with their BLURBS, and the tests parametrise over PAGES.

Add a page with one `Page(...)` line in its section (and, optionally, a blurb for the Home page).
Every page calls `ui.frame.require_app()` first: ui/frame.py says why.
"""

from typing import NamedTuple


class Page(NamedTuple):
    file: str    # relative to app.py
    title: str   # menu title
    url: str     # url path: part of every shared link, so never renamed
    icon: str    # Material icon


# Section title -> its pages. "" is the untitled top of the menu.
SECTIONS: dict[str, list[Page]] = {
    "": [Page("pages/home.py", "Home", "home", ":material/home:")],
    "Learn": [Page("pages/lessons.py", "Lessons", "lessons", ":material/school:")],
    "Build": [
        Page("pages/architecture.py", "Architecture", "architecture", ":material/account_tree:"),
        Page("pages/positional.py", "Positional encoding", "positional", ":material/waves:"),
    ],
    "Look inside": [
        Page("pages/attention.py", "Attention", "attention", ":material/grid_view:"),
        Page("pages/outputs.py", "Outputs", "outputs", ":material/bar_chart:"),
        Page("pages/gradients.py", "Gradients", "gradients", ":material/insights:"),
        Page("pages/inside.py", "Inside the model", "inside", ":material/biotech:"),
    ],
    "Train and compare": [
        Page("pages/train.py", "Train", "train", ":material/model_training:"),
        Page("pages/runs.py", "Runs", "runs", ":material/history:"),
        Page("pages/experiments.py", "Experiments", "experiments", ":material/science:"),
        Page("pages/search.py", "Search", "search", ":material/travel_explore:"),
        Page("pages/studies.py", "Studies", "studies", ":material/folder_open:"),
    ],
}
PAGES: list[Page] = [page for pages in SECTIONS.values() for page in pages]
HOME = PAGES[0]

# One line per page for the Home page's table of contents (file -> text).
BLURBS: dict[str, str] = {
    "pages/lessons.py": "The three seed texts as lessons, one idea per screen: predict, lock it in, then see "
                        "the measurement. A presenter view for the projector.",
    "pages/architecture.py": "Design a Transformer: block diagram with tensor shapes, parameter count, "
                             "FLOPs and memory, next to the famous models.",
    "pages/positional.py": "How a Transformer knows word order: sinusoidal, learned, rotary and ALiBi "
                           "encodings as heatmaps and similarity curves.",
    "pages/attention.py": "Where each token looks: every head of every layer as heatmaps, the pattern the "
                          "task expects, masks and entropy.",
    "pages/outputs.py": "What the model predicts: the output distribution at each position, its entropy, "
                        "and greedy against beam search.",
    "pages/inside.py": "Which heads matter: knock one out and watch the answer change; the logit lens, activation "
                       "patching, embedding geometry and heads over training.",
    "pages/train.py": "Train a model live: loss and accuracy curves, an attention head taking shape, "
                      "gradient norms per layer, stop and resume.",
    "pages/gradients.py": "Pre-LN against Post-LN: gradient norms across depth at initialisation and "
                          "over a training run.",
    "pages/runs.py": "Every run of this session and on disk: compare curves and configs, export; delete your own.",
    "pages/experiments.py": "The seeds' claims as experiments: several seeds each, mean ± std beside what "
                            "the seed predicts, cached for the next visitor.",
    "pages/search.py": "Hyperparameter search with Optuna: pick the settings and ranges, watch the trials, "
                       "keep the best model or train it again as a recipe.",
    "pages/studies.py": "Every study kept here, from the CLI or the Search page: Optuna's plots of one, two side by "
                        "side, a trial clicked to open its run, its trials as CSV.",
}
