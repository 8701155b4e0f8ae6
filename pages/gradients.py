"""Gradients: Pre-LN against Post-LN, at initialisation and over a training run."""

import numpy as np
import streamlit as st

from explorer.analysis.gradients import DepthProfile, Evenness, depth_profile, evenness, grad_norm_table
from explorer.figures.curves import training_curves
from explorer.figures.gradients import grad_norm_heatmap, grad_norm_profile
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


SEEDS = 8  # the verdict's seeds: the one shown and the next ones
OUTCOME = {True: "**As the chapter predicts**: Pre-LN is the more even.",
           False: "**Not as the chapter predicts**: Post-LN is the more even.",
           None: "**Inconclusive** at this depth: the interval spans 1, so these seeds cannot tell the two apart."}
INPUTS_DIFFER = ("At each layer's input the measure is another one than the chapter's claim: in Pre-LN every "
                 "later sublayer adds its own branch to the gradient flowing back down the residual stream, so "
                 "it grows toward the input, while Post-LN's LayerNorms rescale it at every layer. The chapter "
                 "states its claim for what its exercise measures, each layer's p.grad.norm().")


@st.cache_data(show_spinner="The same pass for the next seeds…", max_entries=64)
def over_seeds(what: str, n_layers: int, d_model: int, seed: int) -> Evenness:
    return evenness(what, n_layers, d_model, seeds=range(seed, seed + SEEDS))


def verdict(values: dict[str, np.ndarray], what: str, n_layers: int, d_model: int, seed: int) -> str:
    """This seed's spreads, then the verdict over SEEDS seeds (Welch's t on the log spreads)."""
    here = " · ".join(f"{name} ×{DepthProfile.spread(v):.2f} (largest at layer {int(np.argmax(v))})"
                      for name, v in values.items())
    e = over_seeds(what, n_layers, d_model, seed)
    low, high = e.interval
    text = (f"**Measured** (largest ÷ smallest layer) with this seed: {here}. Over {SEEDS} seeds ({seed}–"
            f"{seed + SEEDS - 1}): Pre-LN ×{e.pre:.2f}, Post-LN ×{e.post:.2f} (geometric means); Post-LN's ÷ "
            f"Pre-LN's, 95% interval [{low:.2f}, {high:.2f}] (Welch's t). {OUTCOME[e.holds]}")
    return text + (f" {INPUTS_DIFFER}" if what == "inputs" else "")


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
                "learning-rate warmup to train at all. " + verdict(values, what, n_layers, d_model, seed))


def gradient_table(key: str):
    """(history, norms (layers, steps), layer labels, steps) of a trained model, or None with a message."""
    try:
        hist = models.load(key).history
    except ValueError as err:
        st.error(str(err), icon=":material/error:")
        return None
    norms, labels, steps = grad_norm_table(hist, MAX_GRAD_STEPS) if hist is not None else (None, [], [])
    if not steps:
        st.caption("This run recorded no per-layer gradients.")
        return None
    return hist, norms, labels, steps


SHIPPED_PAIR = ("pretrained:reversal-fast", "pretrained:reversal-fast-postln")  # one recipe, only the norm differs


def comparable_pair(found: dict[str, tuple[str, dict, dict]]) -> tuple[str, str] | None:
    """A Pre-LN and a Post-LN model of the same task and config but the LayerNorm, runs first, newest first;
    else the shipped pair; else None."""
    def twin(model: dict) -> tuple:
        return tuple(sorted((k, str(v)) for k, v in model.items() if k != "norm"))
    posts = {(str(task), twin(model)): key for key, (_, task, model) in found.items() if model.get("norm") == "post"}
    for key, (_, task, model) in found.items():
        if model.get("norm") == "pre" and (str(task), twin(model)) in posts:
            return key, posts[(str(task), twin(model))]
    return SHIPPED_PAIR if all(k in found for k in SHIPPED_PAIR) else None


def over_training() -> None:
    st.subheader("Over training")
    found = models.trained_models()
    if not found:
        st.info("No runs yet. On the **Train** page, train one run with Pre-LN and one with Post-LN "
                "(the LayerNorm switch), then compare them here.", icon=":material/model_training:")
        return
    keys = list(found)
    pair = comparable_pair(found) or (keys[0], keys[min(1, len(keys) - 1)])
    st.caption("By default a comparable pair: the same task, model and training, Pre-LN on the left and Post-LN "
               "on the right (the shipped reversal-fast and reversal-fast-postln until you train your own).")
    cols = st.columns(2, gap="large")
    picked = {}
    for col, key, default in ((cols[0], state.GRAD_RUN_A, pair[0]), (cols[1], state.GRAD_RUN_B, pair[1])):
        if st.session_state.get(key) not in found:  # a deleted run
            st.session_state.pop(key, None)
        with col:
            choice = st.selectbox("Model", keys, index=keys.index(default), key=key, format_func=lambda k: found[k][0])
            picked[key] = (found[choice][0], gradient_table(choice))
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
