"""Inside the model: which heads matter (ablation), what each layer already predicts (logit lens), what carries
the answer (patching), where the embeddings sit, and how the heads grew over training."""

import numpy as np
import streamlit as st

from explorer.figures import interpret as figs
from explorer.figures import learning as learn_figs
from explorer.figures.attention import attention_heatmap
from explorer.inspect import ATTENTION_KINDS
from explorer.interpret import FFN_KINDS, grid
from explorer.quoting import md, md_text
from explorer.tasks import BOS, EOS
from ui import frame, inside, inspecting, links, models, training_job, widgets

frame.require_app()  # a deep link on a fresh server: rerun through app.py

SHORT = {"enc_self": "Encoder self", "dec_self": "Decoder self", "cross": "Cross", **FFN_KINDS}
TICKS = {"enc_self": "Enc self", "dec_self": "Dec self", "cross": "Cross"}   # narrow enough for a phone
MODES = {"zero": "Zero", "mean": "Validation mean"}
METRICS = {  # task kind -> the drops offered, first the default, and their labels
    "seq2seq": {"exact_drop": "Exact match (greedy)", "token_acc_drop": "Token accuracy", "loss_rise": "Loss"},
    "classify": {"exact_drop": "Accuracy", "loss_rise": "Loss"},
    "lm": {"loss_rise": "Next-token loss", "exact_drop": "Next-token accuracy"},
}


def head_name(kind: str, layer: int, head: int) -> str:
    return f"{SHORT[kind]} L{layer} " + ("(all heads)" if head < 0 else f"H{head}")


def picked_input(sel):
    """The shared input picker (the Attention and Outputs pages' input) and a line saying what it is."""
    picked = inspecting.pick_input(sel)
    if picked is not None:
        st.markdown(inspecting.describe(sel.task, picked))
    return picked


# ---------------------------------------------------------------------------------- ablation
def pick_head() -> None:
    """A click on a cell of the heatmap focuses that head (its customdata is [kind, layer, head])."""
    points = st.session_state[inside.CHART]["selection"]["points"]
    if points and points[0].get("customdata") is not None:
        kind, layer, head = points[0]["customdata"]
        st.session_state[inside.KIND], st.session_state[inside.LAYER], st.session_state[inside.HEAD] = kind, layer, head


def focus_of(table, kinds: list[str], metric: str) -> tuple[str, int, int]:
    """The focused head: a link's, else this session's, else the head whose removal costs most."""
    state = st.session_state
    linked = inside.linked_focus(kinds)
    if linked is not None and linked != state.get(inside.LINKED):   # not what this page wrote: a link followed
        state[inside.KIND], state[inside.LAYER], state[inside.HEAD] = state[inside.LINKED] = linked
    focus = state.get(inside.KIND), state.get(inside.LAYER), state.get(inside.HEAD)
    rows = table[(table["kind"] == focus[0]) & (table["layer"] == focus[1])]
    if focus[0] not in kinds or rows.empty or (focus[2] >= 0 and focus[2] not in set(rows["head"].dropna())):
        heads = table[table["kind"].isin(kinds) & table["head"].notna()]
        best = heads.loc[heads[metric].idxmax()]
        focus = str(best["kind"]), int(best["layer"]), int(best["head"])
    state[inside.KIND], state[inside.LAYER], state[inside.HEAD] = state[inside.LINKED] = focus   # the link says so now
    st.query_params[inside.KIND], st.query_params[inside.LAYER], st.query_params[inside.HEAD] = (
        focus[0], str(focus[1]), str(focus[2]))
    return focus


def said(task, out) -> str:
    """One line of what the model says: its output (seq2seq), the class, or the next characters."""
    if task.kind == "seq2seq":
        return md(" ".join(task.tokens([t for t in out if t != EOS])) or "(nothing)", None)
    if task.kind == "classify":
        return ", ".join(f"{name} {p:.0%}" for name, p in zip(task.class_names, out[0]))
    return ", ".join(f"{md(task.position_labels([int(i)])[0])} {out[-1, i]:.0%}" for i in np.argsort(-out[-1])[:3])


def removal(sel, ver: str, focus: tuple[str, int, int], mode: str, table, base: dict) -> None:
    """The focused head's pattern on an input beside what the model says with and without it."""
    task, (kind, layer, head) = sel.task, focus
    picked = picked_input(sel)
    if picked is None:
        return
    left, right = st.columns([3, 2], gap="large")
    if kind in ATTENTION_KINDS:
        with left:
            tgt_in = inspecting.decoder_input_for(sel, picked, ver)
            view = inspecting.attention(ver, sel.model, task, picked.src, tgt_in, False)
            pats = view.patterns[kind][layer]                              # (H, Q, K)
            pattern = pats.mean(0) if head < 0 else pats[head]
            widgets.chart(attention_heatmap(pattern, view.q_labels[kind], view.k_labels[kind], size_px=360,
                                            title=f"{head_name(kind, layer, head)}: where it looks",
                                            expected=view.expected.get(kind), mask=view.masks[kind]))
    with right:
        part = (kind, layer, None if head < 0 else head)
        row = table[(table["kind"] == kind) & (table["layer"] == layer)
                    & (table["head"].isna() if head < 0 else table["head"] == head)].iloc[0]
        intact = (inspecting.greedy_output(ver, sel.model, task, picked.src) if task.kind == "seq2seq"
                  else inspecting.output_distribution(ver, sel.model, task, picked.src, None))
        knocked = inside.answer_without(ver, sel.model, task, part, mode, picked.src)
        st.markdown(f"**With it:** {said(task, intact)}  \n**Without it:** {said(task, knocked)}")
        a, b = st.columns(2)
        first = "exact" if task.kind != "lm" else "token_acc"
        a.metric(METRICS[task.kind].get("exact_drop", "exact"), f"{row[first]:.2f}", f"{row[first] - base[first]:+.2f}")
        b.metric("Loss", f"{row['loss']:.3f}", f"{row['loss'] - base['loss']:+.3f}", delta_color="inverse")
        st.caption(f"On this input, and over {inside.N_EXAMPLES} validation examples against the intact model. "
                   "Click another cell to compare.")


def ablation_view(sel, ver: str) -> None:
    task = sel.task
    offered = METRICS[task.kind]
    if st.session_state.get(inside.METRIC) not in offered:
        st.session_state[inside.METRIC] = next(iter(offered))
    a, b = st.columns(2)
    mode = a.segmented_control("Knock a head out by setting it to", list(MODES), format_func=MODES.get,
                               default="zero", required=True, key=inside.MODE, **links.SHARED,
                               help="Zero: its output is removed. Validation mean: it says the same average "
                                    "thing at every position, so only what it says about this input is lost.")
    metric = b.selectbox("Measure the drop in", list(offered), format_func=offered.get, key=inside.METRIC)
    table, base = inside.ablation(ver, sel.model, task, mode)
    kinds = [k for k in ATTENTION_KINDS if k in set(table["kind"])]
    focus = focus_of(table, kinds, metric)
    st.markdown("Intact model: " + ", ".join(f"{name} **{base[key]:.3f}**" for key, name in (
        ("exact", offered.get("exact_drop", "accuracy").lower()), ("token_acc", "token accuracy"), ("loss", "loss"))
        if key != "token_acc" or task.kind == "seq2seq") + f" on {inside.N_EXAMPLES} validation examples.")
    label = "rise in loss" if metric == "loss_rise" else f"drop in {offered[metric].lower()}"
    fig = figs.ablation_heatmap(table, kinds, metric, focus=focus, names=TICKS, label=label,
                                title="What each head is worth")
    widgets.chart(fig, key=inside.CHART, on_select=pick_head, selection_mode="points")
    st.caption("Each cell: how much worse the model does with that head knocked out (\"all\": the whole sublayer). "
               "Notice that the darkest head is often not the one whose map looks neatest on the Attention page. "
               "Click a cell to see it at work.")
    st.subheader(head_name(*focus))
    removal(sel, ver, focus, mode, table, base)
    widgets.chart(figs.parts_bars(table, metric, SHORT, label=label, title="Whole sublayers and feed-forward networks"))
    st.caption("The same knock-out for each whole attention sublayer and FFN: the FFNs often matter as much as "
               "attention.")


# ------------------------------------------------------------------------------------ lens
def lens_view(sel, ver: str) -> None:
    task, picked = sel.task, picked_input(sel)
    if picked is None:
        return
    if len(picked.target) < (len(picked.src) if task.kind == "lm" else 1):
        st.info("The lens needs the correct answer, and this text does not occur in the task's text: pick an "
                "example.", icon=":material/info:")
        return
    lv = inside.lens(ver, sel.model, task, picked.src, picked.target)
    stack = "encoder" if task.kind == "classify" else "decoder"
    widgets.chart(figs.lens_heatmap(lv.p_correct, inside.top_labels(lv), [f"L{i}" for i in range(len(lv.probs))],
                               lv.rows, title=f"What each {stack} layer would say"))
    reads = " The decoder reads the correct answer (teacher forcing)." if task.kind == "seq2seq" else ""
    st.caption("Colour: the probability of the correct token if the model stopped after that layer; text: the token "
               "it would say. Notice how late the right answer appears: the last row is the model's own output."
               + reads)


# -------------------------------------------------------------------------------- patching
def patching_view(sel, ver: str) -> None:
    task, picked = sel.task, picked_input(sel)
    if picked is None:
        return
    position = None
    if task.kind != "classify":
        n = len(picked.src) - (task.kind == "lm")
        if st.session_state.get(inside.POSITION, 0) >= n:
            st.session_state[inside.POSITION] = 0
        position = st.number_input(f"Input position to change (0–{n - 1})", 0, n - 1,
                                   0 if task.kind == "seq2seq" else n - 1, key=inside.POSITION,
                                   help="The corrupted input has the next symbol there.")
    try:
        table, attrs, text = inside.patching(ver, sel.model, task, picked.src, position)
    except ValueError as err:
        st.info(md_text(f"{str(err)[:1].upper()}{str(err)[1:]}."), icon=":material/info:")
        return
    st.markdown(f"Corrupted input: {md_text(text)}. Logit difference of the clean answer over the corrupted one at "
                f"output row {attrs['row']}: clean **{attrs['clean']:.2f}**, corrupted **{attrs['corrupt']:.2f}**.")
    heads = [k for k in ATTENTION_KINDS if k in set(table.loc[table["what"] == "head", "kind"])]
    grids = [grid(table, "head", kind) for kind in heads]            # layer x head, one per kind
    rows = [f"{TICKS[kind]} L{layer}" for kind, g in zip(heads, grids) for layer in g.index]
    widgets.chart(figs.patching_heatmap(np.vstack([g.to_numpy() for g in grids]), [f"H{h}" for h in grids[0].columns],
                                        rows, "head", title="One head put back"))
    labels = {"encoder": task.position_labels(list(picked.src)) if task.kind != "lm" else [],
              "decoder": task.tokens([BOS, *picked.target]) if task.kind == "seq2seq"
              else task.position_labels(list(picked.src))}
    for name in ("encoder", "decoder"):
        g = grid(table, "resid", name)
        if not g.empty:
            widgets.chart(figs.patching_heatmap(g.to_numpy(), labels[name][:g.shape[1]], [f"L{i}" for i in g.index],
                                           "position", title=f"The {name}'s residual stream, one position put back"))
    st.caption("1: putting back that head's output (or that residual position) from the clean run restores the "
               "clean answer entirely; 0: nothing. Notice the few cells that carry the changed token to the answer.")


# ------------------------------------------------------------------------------- embeddings
def embeddings_view(sel, ver: str) -> None:
    a, b = st.columns([3, 1], vertical_alignment="bottom")
    dims = b.segmented_control("Projection", [2, 3], format_func=lambda d: f"{d}-D", default=2, required=True,
                               key=inside.DIMS, **links.SHARED)
    geo = inside.geometry(ver, sel.model, sel.task, dims)
    names = list(geo)
    if st.session_state.get(inside.TABLE) not in names:
        st.session_state[inside.TABLE] = names[0]
    name = a.selectbox("Table", names, key=inside.TABLE)
    p = geo[name]
    left, right = st.columns([3, 2], gap="large")
    with left:
        widgets.chart(figs.embedding_scatter(p.coords, p.labels, p.explained,
                                             title=f"{name.capitalize()}: principal axes"))
    with right:
        widgets.chart(figs.cosine_heatmap(p.cosine, p.labels, title="Cosine similarity"))
    st.caption("Each point is one row of the table, placed on the directions it varies most along (PCA). Notice "
               "which tokens the model put close together, and whether positions form a curve in order.")


# ------------------------------------------------------------------------------ over training
def training_view(sel, ver: str) -> None:
    sources = inside.snapshot_sources()
    if not sources:
        st.info("No run here recorded attention snapshots yet: train one on the Train page (it records them) and "
                "come back, or replay a shipped model's training: `python -m explorer interpret snapshots --model "
                "NAME`.", icon=":material/info:")
        st.page_link(training_job.TRAIN_PAGE, label="Train a model", icon=":material/model_training:")
        return
    if st.session_state.get(inside.RUN) not in sources:
        name = sel.key.split(":", 1)[-1]      # "pretrained:NAME" or "run:NAME": the sidebar's model first
        st.session_state[inside.RUN] = name if name in sources else sources[0]
    shipped = inside.shipped_with_snapshots()
    a, b = st.columns([3, 2], vertical_alignment="bottom")
    source = a.selectbox("Run", sources, key=inside.RUN, format_func=lambda s: f"{s} (shipped)" if s in shipped else s)
    what = b.segmented_control("Show", ["match", "entropy"], format_func=str.capitalize, default="match",
                               required=True, key=inside.LINES)
    table, uniform = inside.heads_table(source)
    if what == "match" and table["match"].isna().all():
        st.info("This task has no pattern to match its heads against: showing their entropy.", icon=":material/info:")
        what = "entropy"
    widgets.chart(figs.heads_over_training_lines(table, what, uniform, title=f"Each head's {what} over training"))
    st.caption("Match: the share of a head's attention on the pattern the task needs. Notice when each head "
               "specialises (its line climbs) and which ones never do, or collapse onto one key (entropy near 0).")


# ----------------------------------------------------------------------------- how it learned
def learning_view(sel, ver: str) -> None:
    name = inside.learning_source(sel)
    if name is None:
        st.info("This view follows how the shipped models induction, induction-1l and modular-add learned: pick "
                "one in the sidebar.", icon=":material/info:")
        return
    try:
        seen = inside.learned(name, ver)
    except ValueError as err:
        st.info(md_text(str(err)), icon=":material/info:")
        return
    if "heads" in seen:
        best = seen["now"].loc[seen["now"]["induction"].idxmax()]
        widgets.chart(learn_figs.induction_over_training(seen["heads"], seen["history"],
                                                         title="Each head's induction score over training"))
        st.markdown(f"The loss on the repeated half falls fastest at step **{seen['phase_step']}**. Now the best "
                    f"head is layer {int(best['layer'])} head {int(best['head'])}, induction score "
                    f"**{best['induction']:.2f}** (attention from a repeated token to the one after its earlier "
                    "occurrence).")
        widgets.chart(learn_figs.induction_over_training(seen["heads"], None, metric="previous_token",
                                                         title="Each head's previous-token score over training"))
        st.caption("Dotted: the first layer. An induction head in layer 1 reads what a previous-token head in "
                   "layer 0 wrote; one layer alone has nothing to read.")
        return
    widgets.chart(learn_figs.grokking_curves(seen["curves"], title="Memorising, then generalising"))
    widgets.chart(learn_figs.fourier_spectrum(seen["spectrum"], title="Which frequencies carry the embeddings"))
    st.markdown(f"At the end the key frequencies are **{', '.join(map(str, seen['key']))}** (of 0-{seen['p'] // 2}): "
                "the embeddings became a few waves around the circle of residues mod p.")


st.title("Inside the model")
st.markdown("Attention maps show where a head looks, not whether it matters: knock parts of the sidebar's model "
            "out, read its layers early, patch activations between two inputs.")
selected = models.selected_model()
chosen = st.segmented_control("Look at", list(inside.VIEWS), format_func=inside.VIEWS.get, default="ablation",
                              required=True, key=inside.VIEW, **links.SHARED)
version = inspecting.version(selected)
DRAW = {"ablation": ablation_view, "lens": lens_view, "patching": patching_view, "embeddings": embeddings_view,
        "training": training_view, "learning": learning_view}
DRAW[chosen](selected, version)
