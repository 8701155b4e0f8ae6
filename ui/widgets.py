"""Widgets shared by several pages: charts, the task picker, the model-config widgets, and small
formatting helpers. Each is defined once here and reused, never copied."""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict

import plotly.graph_objects as go
import streamlit as st

from explorer.config import ACTIVATIONS, NORMS, POS_ENCODINGS, ModelConfig, human, param_count
from explorer.figures import describe
from explorer.figures.diagram import DRAWING, is_drawing
from explorer.figures.layout import TITLE_FIT_PX, fit_title
from explorer.figures.projector import TITLE_PX
from explorer.quoting import md_text
from explorer.tasks import ARCH_FOR_KIND, TASK_PRESETS, Task
from ui import a11y, exports, presenter
from ui.links import SHARED
from ui.model_config import (
    ACT_LABELS,
    CFG,
    D_FF_OPTIONS,
    DEFAULT_TASK,
    DEFAULTS,
    NORM_LABELS,
    PE_LABELS,
    RANGES,
    RESIDUAL_LABELS,
    SCALE_LABELS,
    build_config,
    current_task,
    load_task,
    vector_width,
)

PRESENT_TITLE_FIT_PX = 640  # a projected lesson's chart column (692 px at 1280) less its padding
CHART_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}

ARCH_LABELS = {"encoder-decoder": "Encoder–decoder", "encoder": "Encoder classifier",
               "decoder": "Decoder-only LM"}
TASK_BLURBS = {"reversal": "reverse a sequence", "copy": "copy a sequence", "sort": "sort a sequence",
               "order": "does A come before B?", "order-vectors": "A before B? (vectors, as in the notebook)",
               "char-lm": "predict the next character", "scan": "SCAN: commands to actions",
               "pairs": "your own pairs", "induction": "repeat a random half: induction heads",
               "modular-add": "a + b mod p: grokking"}


# ----------------------------------------------------------------------------------- helpers
def _restyled(fig: go.Figure, fit: float | None) -> go.Figure:
    """`fig` with a long title in lines a phone's chart holds (a projected chart's column is wider), restyled
    for the modes (ui/presenter.py)."""
    shown, present = fig, presenter.on()
    if not is_drawing(fig):
        shown = fit_title(fig, PRESENT_TITLE_FIT_PX if present else TITLE_FIT_PX, TITLE_PX if present else 0)
    return presenter.style(shown, fit)


_SHARED_STYLED: OrderedDict[tuple, tuple[go.Figure, go.Figure]] = OrderedDict()
_SHARED_GUARD = threading.Lock()
MAX_SHARED_STYLED = 64


def _shared_restyled(fig: go.Figure, fit: float | None) -> go.Figure:
    """`_restyled` of a figure every session shares and nobody edits (a cached step view or reveal), made once
    per mode: its copy for a long title cost each student's follow 15 ms (bench/README.md, "A follow that
    costs the server little"). The entry holds `fig`, so its id names no other figure while it is kept."""
    key = (id(fig), fit, presenter.modes())
    with _SHARED_GUARD:
        hit = _SHARED_STYLED.get(key)
        if hit is not None and hit[0] is fig:
            _SHARED_STYLED.move_to_end(key)
            return hit[1]
    styled = _restyled(fig, fit)
    with _SHARED_GUARD:
        _SHARED_STYLED[key] = (fig, styled)
        while len(_SHARED_STYLED) > MAX_SHARED_STYLED:
            _SHARED_STYLED.popitem(last=False)
    return styled


def chart(fig: go.Figure, key: str | None = None, fit: float | None = None, shared: bool = False, **kwargs):
    """Draw a figure as explorer.figures built it (fixed colour scales, no theme), restyled for presenter
    mode and the dark theme (ui/presenter.py), a long title in lines; `fit` caps its height in presenter
    mode. A diagram keeps its own size, so its text stays in its boxes on a phone too. PNG and SVG downloads
    at presentation size sit under it (ui/exports.py). `shared`: the figure is shared and never edited (a
    cached view), so its restyled copy is kept for the next session too."""
    name = exports.slug(fig.layout.title.text or key or "")
    config = {**CHART_CONFIG, "toImageButtonOptions": exports.image_options(fig, name)}
    styled = _shared_restyled(fig, fit) if shared else _restyled(fig, fit)
    drawing = is_drawing(styled)   # at its own size, scrolled sideways in its container if wider
    box, box_key = _box(key or name)
    with box:   # the chart and its words for a screen reader (ui/a11y.py links them)
        with st.container(key=f"{DRAWING}_{key or name}") if drawing else contextlib.nullcontext():
            drawn = st.plotly_chart(styled, theme=None, width=styled.layout.width if drawing else "stretch",
                                    config=presenter.chart_config(config), key=key, **kwargs)
        with st.container(key=box_key.replace(a11y.BOX, a11y.DESC, 1)):
            st.markdown(f"**{md_text(describe.title(fig))}** {md_text(describe.describe(fig))}")
    if not presenter.on():  # a projected page keeps to its figure; the files are the house style, light
        exports.data_table(fig, key or name, exports.image_buttons(fig, key, name))
    return drawn


def _box(name: str):
    """The chart's box and its key: keyless charts with one title on a page get -2, -3, ... in order."""
    base = f"{a11y.BOX}{exports.slug(name)}"
    return exports.with_free_key(lambda key: (st.container(key=key), key), base) or (st.container(), base)


def human_bytes(n: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):  # the limits' units
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def layers_text(cfg: ModelConfig) -> str:
    if cfg.arch == "encoder-decoder":
        return f"{cfg.n_encoder_layers} + {cfg.n_decoder_layers}"
    return str(cfg.n_encoder_layers if cfg.arch == "encoder" else cfg.n_decoder_layers)


def model_facts(cfg: ModelConfig, task: Task | None = None) -> dict[str, str]:
    """The config at a glance, as label -> text (Home page, sidebar)."""
    facts = {"Task": task.name if task is not None else "—", "Architecture": ARCH_LABELS[cfg.arch],
             "d_model": str(cfg.d_model), "Heads": f"{cfg.n_heads} × {cfg.d_head}",
             "Layers": layers_text(cfg), "Positions": PE_LABELS[cfg.pos_encoding],
             "Norm": NORM_LABELS[cfg.norm], "Parameters": human(param_count(cfg)["total"])}
    if cfg.residual != "add":  # the ablations say so where the config is summed up; the defaults go unsaid
        facts["Residuals"] = RESIDUAL_LABELS[cfg.residual]
    if cfg.attn_scale != "sqrt_d_k":
        facts["Attention scale"] = SCALE_LABELS[cfg.attn_scale]
    return facts


def task_blurb(preset: str) -> str:
    return TASK_BLURBS.get(TASK_PRESETS[preset].name, "")


# ------------------------------------------------------------------------------- task, config
def task_picker(key_prefix: str = CFG, label: str = "Task (sets the vocabulary)", disabled: bool = False) -> Task:
    """Select a task preset; the task decides the architecture, vocabulary and lengths."""
    names = list(TASK_PRESETS)  # no format_func: the URL then reads ?cfg_task=reversal-fast
    preset = st.selectbox(label, names, index=names.index(DEFAULT_TASK), key=f"{key_prefix}_task", **SHARED,
                          disabled=disabled,
                          help="Toy tasks that train in seconds. Sequence tasks use an encoder–decoder, "
                               "order detection an encoder classifier, the character task a decoder LM.")
    return load_task(preset)


def _widget(field: str, key: str, fixed_width: int | None):
    """Draw the widget of one ModelConfig field; returns its value."""
    d = DEFAULTS
    if field == "d_model":
        if fixed_width is not None:
            st.number_input("d_model", value=fixed_width, disabled=True,
                            help="This task feeds vectors of a fixed width, so d_model must match it.")
            return fixed_width
        return st.number_input("d_model", *RANGES[field], d[field], step=8, key=key, **SHARED,
                               help="Width of every token vector; must split evenly into the heads.")
    if field == "n_heads":
        return st.number_input("n_heads", *RANGES[field], d[field], key=key, **SHARED,
                               help="Attention heads; each works in d_model / n_heads dimensions.")
    if field in ("n_encoder_layers", "n_decoder_layers"):
        label = "Encoder layers" if field == "n_encoder_layers" else "Decoder layers"
        return st.slider(label, *RANGES[field], d[field], key=key, **SHARED, help="Blocks stacked (N in the paper).")
    if field == "d_ff":
        return st.select_slider("d_ff", D_FF_OPTIONS, d[field], key=key, **SHARED,
                                help="Hidden width of the feed-forward network (the paper uses 4 × d_model).")
    if field == "pos_encoding":
        return st.selectbox("Positional encoding", POS_ENCODINGS, POS_ENCODINGS.index(d[field]),
                            format_func=PE_LABELS.get, key=key, **SHARED,
                            help="How word order gets in: added sinusoids, a learned table, rotations "
                                 "of q and k (RoPE), or nothing.")
    if field == "norm":
        return st.radio("LayerNorm", NORMS, NORMS.index(d[field]), format_func=NORM_LABELS.get,
                        horizontal=True, key=key, **SHARED,
                        help="Pre-LN normalises before each sublayer, Post-LN after the residual add.")
    if field == "residual":
        return st.radio("Residual connections", list(RESIDUAL_LABELS), list(RESIDUAL_LABELS).index(d[field]),
                        format_func=RESIDUAL_LABELS.get, horizontal=True, key=key, **SHARED,
                        help="On: each sublayer adds to its input (x + f(x)). Off: f(x) alone; deep stacks "
                             "then barely train (the Residuals experiment).")
    if field == "attn_scale":
        return st.radio("Attention scale", list(SCALE_LABELS), list(SCALE_LABELS).index(d[field]),
                        format_func=SCALE_LABELS.get, horizontal=True, key=key, **SHARED,
                        help="÷ √d_k keeps the scores' spread independent of the head width; None lets wide "
                             "heads saturate the softmax (the Attention scale experiment).")
    if field == "activation":
        return st.selectbox("FFN activation", ACTIVATIONS, ACTIVATIONS.index(d[field]),
                            format_func=ACT_LABELS.get, key=key, **SHARED)
    if field == "dropout":
        return st.slider("Dropout", *RANGES[field], float(d[field]), 0.05, key=key, **SHARED)
    if field == "max_len":
        return st.number_input("max_len", *RANGES[field], d[field], step=8, key=key, **SHARED,
                               help="Longest sequence the positional encoding is prepared for.")
    if field == "tie_embeddings":
        return st.checkbox("Tie embeddings", d[field], key=key, **SHARED,
                           help="Share the input embedding with the output projection.")
    raise ValueError(f"no widget for ModelConfig field {field!r}")


def grid(n: int, columns: int) -> list:
    """n cells in rows of `columns`, left to right: a phone stacks each row's columns in turn, so the cells
    keep their order there too (one st.columns for all would stack column by column)."""
    cells = []
    for start in range(0, n, columns):
        cells += st.columns(columns)[: n - start]
    return cells


def _visible_fields(arch: str) -> list[str]:
    drop = {"encoder-decoder": (), "encoder": ("n_decoder_layers", "tie_embeddings"),
            "decoder": ("n_encoder_layers",)}[arch]
    return [f for f in DEFAULTS if f not in drop]


def config_widgets(key_prefix: str = CFG, task: Task | None = None,
                   columns: int = 4) -> tuple[ModelConfig | None, str | None]:
    """Draw the model-config widgets for `task` in a grid; returns (config, None) or, for an
    invalid combination, (None, message) after showing the message inline. Never raises."""
    task = task or current_task(key_prefix)
    arch = ARCH_FOR_KIND[task.kind]
    width = vector_width(task)
    values = {}
    fields = _visible_fields(arch)
    for cell, field in zip(grid(len(fields), columns), fields):
        with cell:
            values[field] = _widget(field, f"{key_prefix}_{field}", width)
    hidden = {f: v for f, v in DEFAULTS.items() if f not in values}
    cfg, err = build_config({**hidden, **values}, task)
    if err:
        st.error(f"**This combination does not work.** {md_text(err)}", icon=":material/error:")
    return cfg, err
