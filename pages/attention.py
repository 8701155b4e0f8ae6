"""Attention: every head of every layer on one input, compared with the pattern the task expects."""

import functools

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from explorer.analysis import views
from explorer.figures.attention import (
    attention_entropy_bars,
    attention_heatmap,
    attention_mosaic,
    mosaic_grid,
    mosaic_layout,
    z_slider,
)
from explorer.figures.layout import EXPECTED_COLOUR
from explorer.figures.results import sweep_heatmap
from explorer.inspect import ATTENTION_KINDS
from explorer.quoting import LABEL_CHARS, label, md, shorten
from explorer.tasks import EOS
from ui import frame, inside, inspecting, models, presenter, slider_events, widgets

frame.require_app()  # a deep link on a fresh server: rerun through app.py

_SHOWN = "_att_closeup_shown"        # (what it shows, which head) the close-up was last built with
_FOLLOWED = "_att_closeup_followed"  # this rerun follows the close-up's slider
SHORT = {"enc_self": "Encoder self", "dec_self": "Decoder self (masked)", "cross": "Cross"}
# What to notice, by (task, kind), then by kind.
NOTICE = {
    ("reversal", "cross"): "A reversal model draws an anti-diagonal: the first output looks at the last input, "
                           "the last output at the first.",
    ("copy", "cross"): "A copy model draws the main diagonal: output t looks at input t.",
    ("sort", "cross"): "A sorting model looks for the next-smallest input at each step, so its bright cells "
                       "jump around the source instead of following a line.",
    ("order", "enc_self"): "Only position tells A-before-B from B-before-A; look for a head whose A and B rows "
                           "attend to each other, or to one side of the sequence.",
    ("char-lm", "dec_self"): "Heads that stare at the previous character draw a bright line just below the "
                             "diagonal; others collect the first characters or spread out.",
    "enc_self": "Every source token may look at every other; bright cells show where each one gathers from.",
    "dec_self": "The grey upper triangle is the causal mask: while writing a token the decoder only looks back.",
    "cross": "Each output step looks into the encoded source: the bright cell is the input it copies from.",
}


def notice(task_name: str, kind: str) -> str:
    return NOTICE.get((task_name, kind), NOTICE[kind])


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def layer_names(n: int) -> list[str]:
    return [f"L{i}" for i in range(n)]


# --------------------------------------------------------------------------------- the answer
def answer(sel, picked, tgt_in, ver: str) -> None:
    """What the model says for this input, in one line."""
    task = sel.task
    if task.kind == "seq2seq":
        written = inspecting.greedy_output(ver, sel.model, task, picked.src)
        said = [t for t in written if t != EOS]
        verdict = "correct ✓" if tuple(said) == picked.target and EOS in written else "wrong ✗"
        reads = "the correct answer (teacher forcing)" if picked.teacher else "its own output, as when it writes"
        st.markdown(f"The model writes {md(' '.join(task.tokens(said)) or '(nothing)', None)} — **{verdict}**. "
                    f"Below, the decoder reads {reads}: {md(' '.join(task.tokens(tgt_in)), None)}.")
        return
    probs = inspecting.output_distribution(ver, sel.model, task, picked.src, None)
    if task.kind == "classify":
        guess = int(probs[0].argmax())
        verdict = "correct ✓" if (guess,) == picked.target else "wrong ✗"
        parts = ", ".join(f"{name} {p:.0%}" for name, p in zip(task.class_names, probs[0]))
        st.markdown(f"The model says **{task.class_names[guess]}** ({parts}) — **{verdict}**.")
        return
    top = np.argsort(-probs[-1])[:3]
    chars = ", ".join(f"{md(task.position_labels([int(i)])[0])} {probs[-1, i]:.0%}" for i in top)
    st.markdown(f"Next character after the text: {chars}.")


# ------------------------------------------------------------------------------------ figures
def score_table(view, kinds) -> None:
    """Best head of each kind for each reference pattern."""
    rows = []
    for kind in kinds:
        row = {"Attention": ATTENTION_KINDS[kind]}
        for name, ref in views.reference_patterns(view, kind).items():
            best = views.best_head(views.match_scores(view.patterns[kind], ref))
            row[name] = "—" if best is None else f"L{best[0]} H{best[1]} · {best[2]:.2f}"
        rows.append(row)
    names = [n for n in views.REFERENCES if any(n in r for r in rows)]
    df = pd.DataFrame(rows).reindex(columns=["Attention", *names]).fillna("—")
    st.dataframe(df, hide_index=True, width="stretch")
    st.caption("Best head and its match score: the share of attention a head puts on the pattern's cells, "
               "averaged over the queries (1.00 = it follows the pattern exactly, a uniform head scores "
               "about 1 / number of keys).")


def fit_mosaic(rows: int, cols: int, width_px: float = 820, max_height: float = 1400) -> tuple[float, int]:
    """Size a mosaic of rows x cols cells for the page's width: cells as big as fit (up to 28 px), the
    whole no taller than max_height, so a 1-layer model is not a strip and a 12-layer one stays
    scrollable. Returns the cell size in pixels and the figure's height."""
    cell = min(28.0, width_px / cols, max_height / rows)
    return cell, int(130 + rows * cell)


def outline_tile(m: dict, layer: int, head: int, q: int, k: int) -> dict:
    """The focused tile's frame, as a layout shape (`m`: mosaic_layout)."""
    r0, c0 = layer * m["row_stride"], head * m["col_stride"]
    return dict(type="rect", x0=c0 - 0.5, x1=c0 + k - 0.5, y0=r0 - 0.5, y1=r0 + q - 0.5,
                line=dict(color=EXPECTED_COLOUR, width=3), name="focused")


def token_ticks(m: dict, cell_px: float, n_layers: int, n_heads: int, q_labels, k_labels) -> dict:
    """The real tokens along the mosaic's edges (keys under every tile column, queries beside every
    tile row), when the cells are big enough to read them: layout entries."""
    q, k = len(q_labels), len(k_labels)
    if cell_px < 13:  # too small for 12 px labels
        return {}
    xs = [h * m["col_stride"] + j for h in range(n_heads) for j in range(k)]
    upright = max(len(shorten(t, LABEL_CHARS)) for t in k_labels) > 2
    q_labels, k_labels = [label(t) for t in q_labels], [label(t) for t in k_labels]  # shown literally, short
    ys = [layer * m["row_stride"] + i for layer in range(n_layers) for i in range(q)]
    font = dict(size=12)
    return dict(xaxis=dict(showticklabels=True, tickmode="array", tickvals=xs, ticktext=list(k_labels) * n_heads,
                           tickfont=font, tickangle=-90 if upright else 0),
                yaxis=dict(showticklabels=True, tickmode="array", tickvals=ys, ticktext=list(q_labels) * n_layers,
                           tickfont=font),
                margin=dict(l=60, b=60))


def click_targets(m: dict, cell_px: float, n_layers: int, n_heads: int) -> go.Scatter:
    """An invisible point on each tile's name (a heatmap reports no clicks). Its customdata is the
    tile's step on the close-up's slider, so a click there moves the slider, in the browser
    (ui/slider_events.py). One point per tile keeps a 12 x 8 grid light and leaves the cells' hover
    to the heatmap."""
    tiles = [(layer, head) for layer in range(n_layers) for head in range(n_heads)]
    xs = [head * m["col_stride"] - 0.5 + 18 / cell_px for _, head in tiles]    # middle of the name
    ys = [layer * m["row_stride"] - 0.5 - 8 / cell_px for layer, _ in tiles]   # just above the tile
    return go.Scatter(
        x=xs, y=ys, mode="markers", marker=dict(size=26, symbol="square", opacity=0), showlegend=False,
        customdata=[layer * n_heads + head for layer, head in tiles], name="tiles",
        hovertemplate="%{text}: click to look closely<extra></extra>",
        text=[f"L{layer} H{head}" for layer, head in tiles])


def mosaic(view, kind: str, layer: int, head: int, task_name: str) -> None:
    pats = view.patterns[kind]                                           # (L, H, Q, K)
    n_l, n_h, q, k = pats.shape
    m = mosaic_layout(n_h, q, k)
    # The page's width at 1280 px; wider in presenter mode, which has no sidebar.
    cell, height = fit_mosaic(*mosaic_grid(m, n_l, n_h), width_px=1150 if presenter.on() else 820)
    # Everything the page adds goes into the builder's one layout: update_layout on a built figure
    # costs milliseconds a call (explorer/figures/layout.py, figure).
    layout = dict(height=height, shapes=[outline_tile(m, layer, head, q, k)], hoverdistance=2,
                  clickmode="event", **token_ticks(m, cell, n_l, n_h, view.q_labels[kind], view.k_labels[kind]))
    fig = attention_mosaic(views.masked_for_mosaic(pats, view.masks[kind]), view.q_labels[kind],
                           view.k_labels[kind], layer_names=layer_names(n_l), layout=layout,
                           title=f"{ATTENTION_KINDS[kind]}: {plural(n_l, 'layer')} × "
                                 f"{plural(n_h, 'head')}", mask=view.masks[kind])
    fig.add_trace(click_targets(m, cell, n_l, n_h))
    widgets.chart(fig, key=inspecting.ATT_MOSAIC)  # a click on a tile's name moves the close-up's slider (see show)
    st.caption("Rows of tiles are layers, columns are heads; in each tile the rows are queries, the columns keys, "
               f"and grey cells are masked. Click a tile's name to look at it closely. {notice(task_name, kind)}")


def side_panels(view, kind: str, ref_name: str, scores: np.ndarray, ent: np.ndarray) -> None:
    n_l, n_h = scores.shape
    if not np.isnan(scores).all():
        widgets.chart(sweep_heatmap(scores, [f"H{h}" for h in range(n_h)], layer_names(n_l), "head", "layer",
                                    title=f"Match with {ref_name}",
                                    layout=dict(height=120 + 40 * n_l, yaxis=dict(autorange="reversed"))))
        st.caption("How closely each head follows the outlined pattern (1 = exactly).")
    else:
        st.info(f"No query of this input expects anything under {ref_name}.", icon=":material/info:")
    top = views.uniform_entropy(view.masks[kind], view.real_q[kind])
    widgets.chart(attention_entropy_bars(ent, layer_names(n_l), max_entropy=top,
                                         title="Attention entropy per head", layout=dict(height=300)))
    st.caption("Low entropy: each query looks at one key (a sharp head). Near the dashed line: it spreads "
               "its weight evenly, as an untrained head does.")


def linked_head() -> tuple[int, int]:
    """The head a shared link names ("L1", "H2"), or (-1, -1)."""
    try:
        return (int(st.query_params[inspecting.ATT_LAYER].removeprefix("L")),
                int(st.query_params[inspecting.ATT_HEAD].removeprefix("H")))
    except (KeyError, ValueError):
        return -1, -1


def refocus(context: tuple, scores: np.ndarray) -> tuple[int, int]:
    """The focused head. The best-matching one whenever the model, the kind or the reference changes;
    a new input keeps the head, so one head can be followed across examples; a shared link keeps its
    own. The page's address names it, so a link opens the same head."""
    n_l, n_h = scores.shape
    before = st.session_state.get(inspecting.ATT_FOCUS_FOR)
    st.session_state[inspecting.ATT_FOCUS_FOR] = context
    here = linked_head() if before is None else (st.session_state.get(inspecting.ATT_LAYER, -1),
                                                 st.session_state.get(inspecting.ATT_HEAD, -1))
    fits = 0 <= here[0] < n_l and 0 <= here[1] < n_h
    best = views.best_head(scores)
    if before != context and best is not None and not (before is None and fits):
        here = best[:2]
    elif not fits:
        here = (0, 0)
    st.session_state[inspecting.ATT_LAYER], st.session_state[inspecting.ATT_HEAD] = here
    st.query_params[inspecting.ATT_LAYER], st.query_params[inspecting.ATT_HEAD] = f"L{here[0]}", f"H{here[1]}"
    return here


def follow_slider(n_heads: int, step: str) -> None:
    """The close-up's slider moved in the browser, which already shows the new head: focus it here too
    (the mosaic's outline, the link, the next input) and build the close-up as it was."""
    st.session_state[inspecting.ATT_LAYER], st.session_state[inspecting.ATT_HEAD] = divmod(int(step), n_heads)
    st.session_state[_FOLLOWED] = True


def shown_head(focus: tuple[int, int], context: tuple) -> tuple[int, int]:
    """The head the close-up's figure is built showing: the focused one, except in the rerun that
    follows its slider. There the figure is built as before, so Streamlit keeps the browser's (a
    changed figure is a new chart: it would be drawn again and cut short a drag along the slider).
    `context` is everything else the figure shows: if that changed too, it is a new figure anyway.
    Any other rerun builds the focused head, as the browser may have dropped its view (a page left
    and come back to starts from the figure as built)."""
    followed = st.session_state.pop(_FOLLOWED, False)
    before = st.session_state.get(_SHOWN)
    shown = before[1] if followed and before and before[0] == context else focus
    st.session_state[_SHOWN] = (context, shown)
    return shown


def focused(view, kind: str, focus: tuple[int, int], ref_name: str, ref: np.ndarray, scores: np.ndarray,
            ent: np.ndarray, context: tuple) -> None:
    """One head large, with a slider over every head that flips them in the browser."""
    pats = view.patterns[kind]                                                  # (L, H, Q, K)
    n_l, n_h = scores.shape
    heads = [(layer, head) for layer in range(n_l) for head in range(n_h)]
    titles = [f"L{la} H{h} · entropy {ent[la, h]:.2f} nats" + ("" if np.isnan(scores[la, h]) else
                                                                f" · match {scores[la, h]:.2f}") for la, h in heads]
    shown = heads.index(shown_head(focus, context))
    # Ticks named while the names fit (Plotly would label only every n-th); the title names the head.
    ticks = [f"L{la} H{h}" if len(heads) <= 16 else "" for la, h in heads]
    slider = z_slider(ticks, [pats[la, h] for la, h in heads], titles, shown)
    widgets.chart(attention_heatmap(pats[heads[shown]], view.q_labels[kind], view.k_labels[kind],
                                    title=titles[shown], expected=ref, mask=view.masks[kind], slider=slider),
                  key=inspecting.ATT_CLOSEUP)
    st.caption("Slide along the top to flip through the heads (or click the chart and press ← →), or click a "
               f"tile's name in the mosaic. Outlined: {ref_name}. Grey: cells the mask forbids (the future, or "
               "padding). Each row sums to 1.")


def linked(key: str, options, labels=None):
    """The option a shared link names for `key` (by its label), or None."""
    text = st.query_params.get(key)
    return next((o for o in options if (labels.get(o) if labels else o) == text), None)


def pick_view(view) -> tuple[str, str, dict]:
    """The attention kind and the pattern to compare with. Each kind keeps its own comparison (by default
    the task's pattern where it has one), and the page writes both into the link itself: a bound widget's
    link kept a value the widget had dropped when another model offered other kinds."""
    kinds, state = view.kinds, st.session_state
    if state.get(inspecting.ATT_KIND) not in kinds:
        state[inspecting.ATT_KIND] = linked(inspecting.ATT_KIND, kinds, SHORT) or kinds[-1]
    a, b = st.columns([3, 2], vertical_alignment="bottom")
    kind = a.segmented_control("Attention", kinds, format_func=SHORT.get, required=True, key=inspecting.ATT_KIND,
                               persist_state="session")
    refs = views.reference_patterns(view, kind)
    chosen = state.setdefault(inspecting.ATT_REF_FOR, {})
    if kind not in chosen and not chosen:  # the first view of the session: a link's choice
        chosen[kind] = linked(inspecting.ATT_REF, refs)
    wanted = chosen.get(kind)
    if wanted not in refs:
        wanted = views.EXPECTED if views.EXPECTED in refs else "previous position"
    state[inspecting.ATT_REF] = wanted
    ref_name = b.selectbox("Compare with", list(refs), key=inspecting.ATT_REF, on_change=remember_ref, args=(kind,),
                           help="The outlined cells in the big heatmap; match scores measure attention on them.")
    chosen[kind] = ref_name
    st.query_params[inspecting.ATT_KIND], st.query_params[inspecting.ATT_REF] = SHORT[kind], ref_name
    return kind, ref_name, refs


def remember_ref(kind: str) -> None:
    """Before the rerun a choice in "Compare with" causes: it is this kind's from now on."""
    st.session_state[inspecting.ATT_REF_FOR][kind] = st.session_state[inspecting.ATT_REF]


# --------------------------------------------------------------------------------------- page
def show(sel, picked) -> None:
    task = sel.task
    ver = inspecting.version(sel)  # a digest of the weights: once a rerun
    tgt_in = inspecting.decoder_input_for(sel, picked, ver)
    answer(sel, picked, tgt_in, ver)
    view = inspecting.attention(ver, sel.model, task, picked.src, tgt_in, picked.pad)
    kind, ref_name, refs = pick_view(view)
    pats, ref = view.patterns[kind], refs[ref_name]
    scores = views.match_scores(pats, ref)                          # (L, H), for the focus and the panels
    ent = views.head_entropy(pats, view.real_q[kind])
    context = (ver, kind, ref_name)
    focus = refocus(context, scores)
    # The charts first, so the mosaic starts on a 1280 x 720 screen; the score table under them. (The mosaic
    # and the close-up side by side in columns made the close-up redraw when its slider moved.)
    mosaic(view, kind, *focus, task.name)
    st.subheader("One head up close")
    left, right = st.columns([3, 2], gap="large")
    with left:
        focused(view, kind, focus, ref_name, ref, scores, ent, (*context, picked))
        st.page_link(inside.PAGE, label=f"Does it matter? What knocking out L{focus[0]} H{focus[1]} does",
                     icon=":material/biotech:", query_params=inside.ablation_link(kind, *focus))
    with right:
        side_panels(view, kind, ref_name, scores, ent)
    score_table(view, view.kinds)
    slider_events.on_slider(inspecting.ATT_CLOSEUP, functools.partial(follow_slider, scores.shape[1]),
                            picker=inspecting.ATT_MOSAIC)


st.title("Attention")
st.markdown("Where does each token look? Pick an input and see every head of every layer of the sidebar's "
            "model, the pattern the task calls right, and how sharp each head is.")
selected = models.selected_model()
picked_input = inspecting.pick_input(selected, pad_toggle=True)
if picked_input is not None:
    st.markdown(inspecting.describe(selected.task, picked_input))
    show(selected, picked_input)
