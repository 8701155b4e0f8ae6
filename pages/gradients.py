"""Gradients: Pre-LN against Post-LN, at initialisation and over a training run."""

import numpy as np
import streamlit as st

from explorer.figures.curves import training_curves
from explorer.figures.gradients import grad_norm_heatmap, grad_norm_profile
from explorer.gradients import DepthProfile, depth_profile, grad_norm_table
from ui import frame, links, models, state, widgets

frame.require_app()  # a deep link on a fresh server: rerun through app.py

VARIANTS = {"pre": "Pre-LN", "post": "Post-LN"}
WHAT = {"weights": "Each layer's weights", "inputs": "Each layer's input"}
D_MODELS = (32, 64, 128, 256)
MAX_GRAD_STEPS = 300


@st.cache_data(show_spinner="One forward and backward pass through both stacks…", max_entries=64)
def profiles(n_layers: int, d_model: int, seed: int) -> dict[str, dict]:
    out = {}
    for norm, name in VARIANTS.items():
        p = depth_profile(norm, n_layers=n_layers, d_model=d_model, seed=seed)
        out[name] = {"weights": p.weight_grad, "inputs": p.input_grad}
    return out


def verdict(values: dict[str, np.ndarray]) -> str:
    spread = {name: DepthProfile.spread(v) for name, v in values.items()}
    peak = {name: int(np.argmax(v)) for name, v in values.items()}
    measured = " · ".join(f"{name} ×{s:.2f} (largest at layer {peak[name]})" for name, s in spread.items())
    pre, post = spread["Pre-LN"], spread["Post-LN"]
    if pre < post / 1.2:
        outcome = "Here Pre-LN is clearly the more even of the two, as the chapter predicts."
    elif post < pre / 1.2:
        outcome = ("Here Post-LN comes out more even: with one random batch and this depth the difference "
                   "can go either way. Try other seeds, or more layers.")
    else:
        outcome = ("Here the two are about equally uneven: at this depth the prediction does not show clearly "
                   "in one batch. Compare where each is largest, try other seeds, or stack more layers.")
    return f"**Measured** (largest ÷ smallest layer): {measured}. {outcome}"


def at_initialisation() -> None:
    st.subheader("At initialisation")
    n = state.PAGE_NUMBERS
    a, b, c, d = st.columns(4)
    n_layers = a.slider("Layers (N)", *n[state.GRAD_LAYERS], key=state.GRAD_LAYERS, **links.SHARED,
                        help="Depth of both encoder stacks; the chapter's exercise uses 12.")
    d_model = b.selectbox("d_model", D_MODELS, index=D_MODELS.index(64), key=state.GRAD_D_MODEL, **links.SHARED)
    seed = c.number_input("Seed", *n[state.GRAD_SEED], key=state.GRAD_SEED, **links.SHARED,
                          help="Initial weights and the random batch; both stacks get the same ones.")
    what = d.radio("Gradient of", list(WHAT), format_func=WHAT.get, key=state.GRAD_WHAT, **links.SHARED,
                   help="‖∂loss/∂θ‖ of each block's parameters, or ‖∂loss/∂x‖ of the residual stream entering it.")
    values = {name: v[what] for name, v in profiles(n_layers, d_model, seed).items()}
    title = f"Gradient norm per layer at initialisation ({n_layers} layers, d_model = {d_model})"
    widgets.chart(grad_norm_profile(values, title=title), key="grad_profile_chart")
    st.caption("Two fresh encoder stacks with the same weights and the same random batch of tokens; one "
               "cross-entropy loss against random labels goes backward once. Layer 0 is the first (input) "
               "layer, the log scale shows ratios.")
    st.markdown("**What the chapter predicts.** In Pre-LN the gradient travels back through the residual "
                "additions untouched, so its norm stays roughly level across depth; in Post-LN it passes "
                "through a LayerNorm in every layer, so norms drift with depth and deep Post-LN stacks need a "
                "learning-rate warmup to train at all. " + verdict(values))


def gradient_table(name: str):
    """(history, norms (layers, steps), layer labels, steps) of a run, or None with a message."""
    try:
        hist = models.load_run(name).history
    except ValueError as err:
        st.error(str(err), icon=":material/error:")
        return None
    norms, labels, steps = grad_norm_table(hist, MAX_GRAD_STEPS) if hist is not None else (None, [], [])
    if not steps:
        st.caption("This run recorded no per-layer gradients.")
        return None
    return hist, norms, labels, steps


def _default(runs: list[str], norm: str, fallback: int) -> int:
    """A run whose name says it used this LayerNorm (the Train page names them so), else fallback."""
    for i, name in enumerate(runs):
        if f"-{norm}LN-" in name:
            return i
    return min(fallback, len(runs) - 1)


def over_training() -> None:
    st.subheader("Over training")
    runs = models.run_names()
    if not runs:
        st.info("No runs yet. On the **Train** page, train one run with Pre-LN and one with Post-LN "
                "(the LayerNorm switch), then compare them here.", icon=":material/model_training:")
        return
    cols = st.columns(2, gap="large")
    picked = {}
    for col, key, norm, fallback in ((cols[0], state.GRAD_RUN_A, "pre", 0), (cols[1], state.GRAD_RUN_B, "post", 1)):
        if st.session_state.get(key) not in runs:  # a deleted run
            st.session_state.pop(key, None)
        with col:
            name = st.selectbox("Run", runs, index=_default(runs, norm, fallback), key=key)
            picked[key] = (name, gradient_table(name))
    tables = [(key, name, t) for key, (name, t) in picked.items() if t is not None]
    if not tables:
        return
    logs = np.log10(np.clip(np.concatenate([t[1].ravel() for _, _, t in tables]), 1e-12, None))
    log_range = (float(np.floor(logs.min())), float(np.ceil(logs.max())))  # one colour scale for both
    for col, key in zip(cols, (state.GRAD_RUN_A, state.GRAD_RUN_B)):
        name, table = picked[key]
        if table is not None:
            _, norms, labels, steps = table
            fig = grad_norm_heatmap(norms, labels, steps, title=name, log_range=log_range)
            with col:
                widgets.chart(fig, key=f"chart_{key}")
    totals = {name: t[0] for _, name, t in tables}
    fig = training_curves(totals, metrics=("grad_norm",), title="Total gradient norm (before clipping)",
                          log_y=True)
    widgets.chart(fig, key="grad_total_chart")
    st.caption("Both heatmaps share one colour scale, so a colour means the same norm in both runs. Look at "
               "the first steps, while the warmup is still raising the learning rate, and at how even each "
               "run keeps its layers.")


st.title("Gradients")
st.markdown("Where LayerNorm sits decides how the gradient flows back through a deep stack: after each "
            "residual add (**Post-LN**, the 2017 paper) or before each sublayer (**Pre-LN**, GPT-2 and most "
            "models since).")
at_initialisation()
over_training()
