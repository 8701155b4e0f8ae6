"""Positional encoding: how a Transformer learns word order, as heatmaps and similarity curves."""

import numpy as np
import streamlit as st
import torch

from explorer.figures.attention import attention_mosaic
from explorer.figures.curves import line_chart
from explorer.figures.positional import pe_heatmap, similarity_heatmap
from explorer.positional import (
    LearnedEncoding,
    alibi_attention,
    alibi_slopes,
    rope_angles,
    rope_rotate,
    sinusoidal_table,
)
from ui import frame, links, model_config, models, state, widgets

frame.require_app()  # a deep link on a fresh server: rerun through app.py

STARTS = (0, 10, 30, 60)   # absolute positions whose curves should coincide
MAX_OFFSET = 40
ALIBI_TILE = 12            # positions per head in the ALiBi mosaic: eight tiles still fit a phone


@st.cache_data(max_entries=32)
def sinusoids(n_positions: int, d_model: int, base: float) -> np.ndarray:
    return sinusoidal_table(n_positions, d_model, base)                 # (P, d_model)


@st.cache_data(max_entries=32)
def rope_table(n_positions: int, d_model: int, base: float) -> np.ndarray:
    """cos and sin of every rotation angle, interleaved like the pairs they rotate."""
    angles = rope_angles(n_positions, d_model, base)                    # (P, d_model/2)
    return np.stack([np.cos(angles), np.sin(angles)], axis=-1).reshape(n_positions, d_model)


def cosine(table: np.ndarray) -> np.ndarray:
    unit = table / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)
    return unit @ unit.T                                                # (P, P)


@st.cache_data(max_entries=32)
def offset_dots(d_model: int, base: float) -> dict[str, tuple[list, list]]:
    """PE_pos . PE_(pos+k) against k for a few pos."""
    pe = sinusoidal_table(max(STARTS) + MAX_OFFSET + 1, d_model, base)
    k = np.arange(MAX_OFFSET + 1)
    return {f"pos {p}": (k.tolist(), (pe[p + k] @ pe[p]).tolist()) for p in STARTS}


@st.cache_data(max_entries=32)
def rope_scores(d_model: int, base: float, n_positions: int, seed: int = 0) -> np.ndarray:
    """q_m . k_n for one random q and k placed at every pair of positions m, n (RoPE)."""
    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, d_model, generator=gen)                       # (d_model,) each
    angles = torch.tensor(rope_angles(n_positions, d_model, base), dtype=torch.float32)
    cos, sin = angles.cos(), angles.sin()                               # (P, d_model/2)
    q_rot = rope_rotate(q.expand(n_positions, d_model), cos, sin)       # (P, d_model)
    k_rot = rope_rotate(k.expand(n_positions, d_model), cos, sin)
    return (q_rot @ k_rot.T).numpy()                                    # (P, P)


# Similarity matrices are square: a column-wide figure of this height leaves no empty band.
SQUARE = dict(height=470)
# The legend above the curves, which often lie on top of each other (hence dashed lines too).
LEGEND_ABOVE = dict(legend=dict(orientation="h", y=1.02, yanchor="bottom", x=1, xanchor="right"))


def controls() -> tuple[str, int, int, float, int]:
    with st.container(border=True):
        a, b, c, d = st.columns([4, 2, 2, 3])
        kind = a.radio("Encoding", tuple(model_config.PE_LABELS), format_func=model_config.PE_LABELS.get,
                       horizontal=True, key=state.PE_TYPE, **links.SHARED)
        fixed = kind in ("learned", "none", "alibi")  # learned: the model's table; none: nothing; alibi: no vector
        d_model = b.number_input("d_model", *state.PAGE_NUMBERS[state.PE_D_MODEL], key=state.PE_D_MODEL,
                                 **links.SHARED, disabled=fixed,
                                 help="Odd widths are allowed for sinusoids: the last sine has no cosine partner.")
        n_pos = c.number_input("Positions", *state.PAGE_NUMBERS[state.PE_POSITIONS], key=state.PE_POSITIONS,
                               **links.SHARED, disabled=kind in ("learned", "none"))
        if kind == "alibi":  # ALiBi has no base; its slopes follow the number of heads
            heads = d.number_input("Heads", *state.PAGE_NUMBERS[state.PE_HEADS], key=state.PE_HEADS,
                                   **links.SHARED, help="Head h of H gets the slope m_h = 2^(-8h/H).")
            return kind, int(d_model), int(n_pos), 10_000.0, int(heads)
        base = d.select_slider("Base", (10, 100, 1_000, 10_000, 100_000, 1_000_000), 10_000,
                               key=state.PE_BASE, **links.SHARED, disabled=fixed,
                               help="Sets the slowest wavelength (2π × base); 10,000 in the paper.")
    return kind, int(d_model), int(n_pos), float(base), 8


def show_sinusoidal(d_model: int, n_pos: int, base: float) -> None:
    table = sinusoids(n_pos, d_model, base)
    left, right = st.columns(2, gap="large")
    with left:
        widgets.chart(pe_heatmap(table, title=f"Sinusoidal PE: {n_pos} positions × {d_model} dimensions"))
        st.caption("Each column is a wave: the first dimensions flip quickly, the last ones barely move. "
                   "Read a row to get one position's fingerprint; no two rows are alike.")
    with right:
        widgets.chart(similarity_heatmap(cosine(table), title="Cosine similarity between positions",
                                         zmin=-1, zmax=1, layout=SQUARE))
        st.caption("Neighbouring positions look alike (the dark band along the diagonal) and similarity fades "
                   "with distance: nearness in the sequence becomes nearness in vector space.")
    fig = line_chart(offset_dots(d_model, base), title="PE(pos) · PE(pos + k) against the offset k",
                             x_title="offset k", y_title="dot product", layout=LEGEND_ABOVE, dashed=True)
    widgets.chart(fig)
    note = (" With an odd d_model the last sine has no cosine partner, so the curves part slightly."
            if d_model % 2 else "")
    st.caption("The curves for different starting positions lie on top of each other: the dot product "
               "depends only on how far apart two positions are, not where they are." + note)


def show_rope(d_model: int, n_pos: int, base: float) -> None:
    if d_model % 2:
        st.error(f"RoPE rotates pairs of dimensions, so d_model must be even (got {d_model}); "
                 f"try {d_model - 1} or {d_model + 1}.", icon=":material/error:")
        return
    left, right = st.columns(2, gap="large")
    with left:
        widgets.chart(pe_heatmap(rope_table(n_pos, d_model, base),
                                         title="RoPE: cos and sin of each rotation angle"))
        st.caption("RoPE adds nothing to the embeddings. Inside attention it turns each pair of query and key "
                   "dimensions by position × frequency; these are the cosines and sines of those angles.")
    scores = rope_scores(d_model, base, max(STARTS) + MAX_OFFSET + 1)  # (P, P)
    shown = min(n_pos, 64)
    with right:
        widgets.chart(similarity_heatmap(scores[:shown, :shown],
                                         title="q·k after rotation: query at m, key at n", layout=SQUARE))
        st.caption("One random query and key, placed at every pair of positions. Each diagonal has a "
                   "single colour: the score depends only on n − m.")
    offsets = np.arange(MAX_OFFSET + 1)
    curves = {f"query at {m}": (offsets.tolist(), scores[m, m + offsets].tolist()) for m in STARTS}
    widgets.chart(line_chart(curves, title="q·k against the relative distance n − m",
                                     x_title="relative distance n − m", y_title="q · k", layout=LEGEND_ABOVE,
                                     dashed=True))
    st.caption("Moving both tokens along the sequence leaves the curve unchanged: RoPE encodes relative "
               "position directly in the attention score.")


def show_alibi(n_pos: int, heads: int) -> None:
    slopes, distance = alibi_slopes(heads), np.arange(n_pos)
    shown = np.unique(np.linspace(0, heads - 1, min(heads, 8)).round().astype(int))  # legible: 8 lines at most
    last = alibi_attention(heads, n_pos)[:, -1, ::-1]                   # (H, P): the last query, by distance back
    left, right = st.columns(2, gap="large")
    with left:
        widgets.chart(line_chart({f"H{h}": (distance, -slopes[h] * distance) for h in shown},
                                 title="Bias added to a score: −m_h × distance", x_title="distance |i − j|",
                                 y_title="bias"))
        st.caption(f"ALiBi adds nothing to the embeddings. Each self-attention head subtracts its slope times "
                   f"the distance from every score: H0, the steepest, has m = {slopes[0]:.3g}, H{heads - 1} "
                   f"m = {slopes[-1]:.3g} (the paper's m_h = 2^(−8h/H), h = 1..H).")
    with right:
        widgets.chart(line_chart({f"H{h}": (distance, last[h]) for h in shown}, log_y=True,
                                 title="Last query's attention, bias only", x_title="distance back",
                                 y_title="weight", layout=dict(yaxis=dict(range=[-6, 0.2], exponentformat="power"))))
        st.caption(f"The query at position {n_pos - 1} with q·k = 0: weights fall by e^(−m_h) a step, straight "
                   "lines on a log scale. Steep heads read the last few tokens, shallow ones the whole "
                   "sequence, at any length.")
    t = min(n_pos, ALIBI_TILE)
    labels = [str(i) for i in range(t)]
    widgets.chart(attention_mosaic(alibi_attention(heads, t)[None], labels, labels, layer_names=[""],
                                   title="Causal attention per head, bias only",
                                   mask=np.tri(t, dtype=bool)))
    st.caption(f"The first {t} positions. A decoder's query i sees keys 0..i (grey: masked), with −m_h(i − j); "
               "an encoder's bias is −m_h|i − j| both ways; cross-attention gets none. Nothing depends on where i "
               "is, only on i − j.")


def show_learned() -> None:
    sel = models.selected_model()
    stacks = [getattr(sel.model, name, None) for name in ("encoder", "decoder")]
    tables = [(n, s.pos.table().numpy()) for n, s in zip(("encoder", "decoder"), stacks)
              if s is not None and isinstance(s.pos, LearnedEncoding)]
    if not tables:
        st.info(f"The selected model ({sel.label}) uses {model_config.PE_LABELS[sel.config.pos_encoding].lower()} "
                "positions, so it has no table to show. Pick the shipped **reversal-fast-learned** in the "
                "sidebar (trained with a learned table), or set *Positional encoding* to *Learned* on the "
                "Architecture page (or pick a run trained with it).", icon=":material/info:")
        return
    names = [n for n, _ in tables]
    name = names[0] if len(names) == 1 else st.radio("Stack", names, horizontal=True, key=state.PE_STACK)
    table = dict(tables)[name]
    trained = "random, untrained" if sel.source == "untrained" else "trained"
    left, right = st.columns(2, gap="large")
    with left:
        fig = pe_heatmap(table, title=f"Learned {name} positions ({trained})")
        m = float(np.abs(table).max()) or 1.0
        widgets.chart(fig.update_traces(zmin=-m, zmax=m))
        st.caption(f"The table of {sel.label}: one trainable vector per position, up to max_len and no "
                   "further. Only training gives these rows an order; before it they are noise.")
    with right:
        widgets.chart(similarity_heatmap(cosine(table), title="Cosine similarity between positions",
                                         zmin=-1, zmax=1, layout=SQUARE))
        st.caption("After training on an order-sensitive task, neighbouring positions usually end up "
                   "similar, as with the sinusoids; untrained, only the diagonal stands out.")


st.title("Positional encoding")
st.markdown("Attention compares every token with every other, with no idea which came first. "
            "A positional encoding writes order into the vectors. Pick one and see what it adds.")
kind, d_model, n_pos, base, heads = controls()
if kind == "sinusoidal":
    show_sinusoidal(d_model, n_pos, base)
elif kind == "rope":
    show_rope(d_model, n_pos, base)
elif kind == "learned":
    show_learned()
elif kind == "alibi":
    show_alibi(n_pos, heads)
else:
    st.info("**Nothing to show: no position information is added.** Self-attention then sees the input as a "
            "bag of tokens. Shuffle the input and every output is shuffled the same way, so 'dog bites man' and "
            "'man bites dog' look identical inside the model. The *order* task makes this visible: without "
            "positions the model cannot beat a coin toss.", icon=":material/info:")
