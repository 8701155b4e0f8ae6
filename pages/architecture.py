"""Architecture: design a Transformer; see its diagram, parameters, FLOPs and memory."""

import pandas as pd
import streamlit as st

from explorer.analysis.equivalence import DEFAULTS, XAVIER, Check, InitStudy, attention_check, block_check, init_study
from explorer.config import (
    REFERENCE_PRESETS,
    ModelConfig,
    approx,
    flops_per_token,
    human,
    param_count,
    param_story,
    train_memory_bytes,
)
from explorer.figures.architecture import architecture_diagram, param_breakdown
from explorer.figures.diagram import PX_PER_UNIT, sized
from explorer.figures.gradients import grad_norm_profile
from ui import frame, links, model_config, models, state, widgets

frame.require_app()  # a deep link on a fresh server: rerun through app.py

HIGHLIGHT = "background-color: #fff4c2; font-weight: 600"
DIAGRAM_COLUMN_PX = 510  # the diagram's left column is 556 px at 1440 px, less the figure's margins


def fit_diagram(fig):
    """The diagram at the largest scale, up to its own, at which it fits the column."""
    x0, x1 = fig.layout.xaxis.range
    size = sized(fig.layout.to_plotly_json(), min(PX_PER_UNIT, DIAGRAM_COLUMN_PX / (x1 - x0)))
    title = size.pop("title")   # its lines for this width; the rest of the title as the figure has it
    fig.update_layout(size, title_text=title["text"])
    return fig


def reference_row(name: str, cfg: ModelConfig, chapter: str = "", published: float | None = None,
                  note: str = "") -> dict:
    return {"Model": name, "d_model": cfg.d_model, "Heads": cfg.n_heads, "Layers": widgets.layers_text(cfg),
            "d_ff": cfg.d_ff, "Dropout": cfg.dropout, "Params": human(param_count(cfg)["total"]),
            "Chapter": chapter or "—", "Published": human(published) if published else "—",
            "FLOPs / token": human(flops_per_token(cfg)["forward"]), "Notes": note}


def reference_table(cfg: ModelConfig | None) -> None:
    rows = [reference_row(p.name, p.config, p.seed_params, p.published_params, p.note)
            for p in REFERENCE_PRESETS.values()]
    if cfg is not None:
        rows.append(reference_row("Your config", cfg, note=f"{widgets.ARCH_LABELS[cfg.arch]}, from the widgets above"))
    df = pd.DataFrame(rows)
    mine = len(df) - 1 if cfg is not None else -1
    styled = df.style.apply(lambda r: [HIGHLIGHT if r.name == mine else ""] * len(r), axis=1)
    styled = styled.format({"Dropout": "{:.2g}"})
    col = st.column_config
    st.dataframe(styled, hide_index=True, width="stretch", column_config={
        "Params": col.TextColumn(help="Computed from the config with the closed form (embeddings included)"),
        "Chapter": col.TextColumn(help="The chapter's approximate parameter column"),
        "Published": col.TextColumn(help="As published by the model's authors"),
        "FLOPs / token": col.TextColumn(help="Forward pass at the model's max_len"),
        "Notes": col.TextColumn(width="large")})


def chapter_gaps() -> None:
    """Where the computed count and the chapter's column part by more than a sixth: say why, from the parts."""
    for p in REFERENCE_PRESETS.values():
        chapter, total = approx(p.seed_params), param_count(p.config)["total"]
        if chapter is None or abs(total - chapter) <= chapter / 6:
            continue
        story = param_story(p.config)
        blocks = story.pop("self-attention and FFN blocks")
        rest = ", ".join(f"{name} {human(n)}" for name, n in story.items() if n)
        st.caption(f"**{p.name}: {human(total)} here, {p.seed_params} in the chapter.** The chapter's figure is "
                   f"what the {widgets.layers_text(p.config)} blocks' self-attention and FFN hold "
                   f"(4·d_model² + 2·d_model·d_ff each, d_ff = {p.config.d_ff:,}): {human(blocks)}. The count "
                   f"here adds what that rule leaves out: {rest} (a {p.config.src_vocab_size:,}-token vocabulary "
                   "shared by both stacks).")


def cost(cfg: ModelConfig) -> tuple[int, int]:
    """FLOPs and memory for a batch size and length the user picks; returns them for the diagram."""
    st.subheader("Compute and memory")
    left, right = st.columns(2)
    batch = left.number_input("Batch size", *state.PAGE_NUMBERS[state.ARCH_BATCH], key=state.ARCH_BATCH, **links.SHARED)
    seq = right.number_input("Sequence length", *state.PAGE_NUMBERS[state.ARCH_SEQ], key=state.ARCH_SEQ, **links.SHARED)
    flops = flops_per_token(cfg, seq)
    mem = train_memory_bytes(cfg, batch, seq)
    a, b = st.columns(2)
    a.metric("FLOPs / token", human(flops["forward"]), border=True,
             help="Forward pass: about 2 FLOPs per weight plus the attention matmuls (Kaplan et al., 2020).")
    b.metric("FLOPs / step", human(flops["train"] * batch * seq), border=True,
             help="One training step: forward and backward (about 3 × forward) for every token in the batch.")
    a.metric("Memory / step", widgets.human_bytes(mem["total"]), border=True,
             help="fp32 AdamW: weights, gradients, two optimizer moments and the activations.")
    b.metric("Activations", widgets.human_bytes(mem["activations"]), border=True,
             help="Grows with batch × length, and with length² through the attention scores.")
    parts = ", ".join(f"{k} {widgets.human_bytes(v)}" for k, v in mem.items() if k not in ("total", "activations"))
    st.caption(f"Weights, gradients and optimizer state: {parts}.")
    return batch, seq


def show(cfg: ModelConfig) -> None:
    left, right = st.columns([3, 2], gap="large")
    with right:
        parts = param_count(cfg)
        st.subheader("Parameters")
        widgets.chart(param_breakdown(parts, title=f"{parts['total']:,} parameters"))
        st.caption("Embeddings grow with the vocabulary, attention and FFN with d_model² per layer; "
                   "LayerNorms are tiny.")
        batch, seq = cost(cfg)
    with left:
        st.subheader("The stack")
        widgets.chart(fit_diagram(architecture_diagram(cfg, batch=batch, seq_len=seq)))
        st.caption(f"Shapes for batch {batch} and length {seq}. Hover a box for its parameter count; "
                   "switch LayerNorm between Pre-LN and Post-LN to see where normalisation moves.")


@st.cache_data(show_spinner=False, max_entries=64)
def checks(cfg_dict: dict) -> tuple[Check, Check]:
    cfg = ModelConfig.from_dict(cfg_dict)
    return attention_check(cfg), block_check(cfg)


@st.cache_data(show_spinner=False, max_entries=64)
def initialisation(cfg_dict: dict) -> InitStudy:
    return init_study(ModelConfig.from_dict(cfg_dict))


def check_view(check: Check, label: str) -> None:
    st.markdown(f"**{label}**: our `{check.module}` against PyTorch's")
    st.caption(f"`{check.reference}`")
    if check.reason:
        st.info(check.verdict(), icon=":material/block:")
        return
    (st.success if check.equal else st.error)(
        check.verdict(), icon=":material/check_circle:" if check.equal else ":material/error:")
    col = st.column_config
    st.dataframe(check.sample(), hide_index=True, width="stretch", column_config={
        "dim": col.NumberColumn(help="Dimension of the output at the first position of the first row"),
        "ours": col.NumberColumn(format="%.6f"), "PyTorch": col.NumberColumn(format="%.6f"),
        "|diff|": col.NumberColumn(format="%.1e")})
    with st.expander(f"The {len(check.copied)} tensors copied, ours → PyTorch's"):
        st.dataframe(pd.DataFrame([(a, b, " × ".join(map(str, shape))) for a, b, shape in check.copied],
                                  columns=["ours", "PyTorch", "shape"]), hide_index=True, width="stretch")
    st.caption(f"Before the copy, with PyTorch's own initial weights, the two differ by up to "
               f"{check.before_copy:.2g}: the agreement comes from the weights, not from an empty test.")


def torch_check(cfg: ModelConfig) -> None:
    st.subheader("Checked against PyTorch")
    st.markdown("The notebook checks its attention and its encoder block against PyTorch's own modules; here the "
                "check runs for the config above. Our module is built and initialised as the model builds it, its "
                "weights are copied into PyTorch's, and both run on the same seeded random input (batch 2, length "
                "5) in eval mode, so dropout is off.")
    cols = st.columns(2, gap="large")
    for col, check, label in zip(cols, checks(cfg.to_dict()), ("Attention", "Block")):
        with col:
            check_view(check, label)


def init_view(cfg: ModelConfig) -> None:
    st.subheader("Initialisation")
    st.markdown("The chapter starts every weight matrix from **Xavier uniform** (`nn.init.xavier_uniform_`, "
                "U(±√(6 / (fan_in + fan_out)))), and so does this model. Without it each PyTorch module keeps "
                "its own default: `nn.Linear` U(±1/√fan_in), `nn.Embedding` N(0, 1), `nn.MultiheadAttention` "
                "Xavier on its input projection and zero biases. Below, the same model, seed and random batch "
                "under both, one forward and backward pass.")
    study = initialisation(cfg.to_dict())
    left, right = st.columns([3, 2], gap="large")
    with left:
        widgets.chart(grad_norm_profile(study.grad, title="Gradient norm per block at initialisation",
                                        labels=study.layers), key="init_grad_chart")
    with right:
        table = study.table()
        st.table(table.style.format("{:.3g}", subset=[XAVIER, DEFAULTS]), hide_index=True)  # wraps, never scrolls
        st.markdown(study.summary())
        st.caption("Random tokens and random targets, eval mode. Gradient norms are ‖∂loss/∂θ‖ before any "
                   f"clipping; token embeddings are then scaled by √d_model = {cfg.d_model ** 0.5:.3g}; the "
                   "learned positional table, if any, keeps its Xavier start in both.")


st.title("Architecture")
st.markdown("Choose a task and the model's hyperparameters. These widgets *are* the current config: "
            "the sidebar's **Untrained** model and the Train page use them.")
with st.container(border=True):
    top = st.columns([2, 3], vertical_alignment="bottom")
    with top[0]:
        task = widgets.task_picker()
    preset = links.state_value(model_config.TASK, model_config.DEFAULT_TASK)
    top[1].caption(f"{widgets.task_blurb(preset).capitalize()} · "
                   f"{widgets.ARCH_LABELS[task.model_config().arch]} · vocabulary of {len(task.vocab)} tokens · "
                   f"sequences up to {task.longest} tokens")
    cfg, err = widgets.config_widgets(model_config.CFG, task)
sel = models.selected_model()
if sel.source != "untrained" and sel.config != cfg:
    st.info(f"The sidebar's model, **{sel.label}**, is another config (d_model {sel.config.d_model}, "
            f"{sel.config.n_heads} heads, {widgets.layers_text(sel.config)} layers, "
            f"{model_config.NORM_LABELS[sel.config.norm]}): the other pages look inside it. This page shows the "
            "config of the widgets above, which the sidebar's **Untrained** model follows.",
            icon=":material/info:")

if cfg is not None:
    show(cfg)
st.subheader("Reference models")
reference_table(cfg)
st.caption("Computed = the closed-form count for each config, embeddings included; the small gaps to the "
           "published numbers come from vocabulary size, tied embeddings and biases.")
chapter_gaps()
if cfg is not None:
    torch_check(cfg)
    init_view(cfg)
