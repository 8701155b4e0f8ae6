"""Outputs: what the model predicts for one input, how sure it is, and greedy against beam search."""

import math

import numpy as np
import streamlit as st

from explorer.analysis import views
from explorer.figures.outputs import entropy_chart, output_heatmap
from explorer.quoting import md
from explorer.tasks import EOS
from ui import frame, inspecting, links, models, widgets

frame.require_app()  # a deep link on a fresh server: rerun through app.py


def tokens_text(task, ids) -> str:
    """The tokens as a code span (quoted: an uploaded token is shown as text)."""
    return md(" ".join(task.tokens(ids)) or "(nothing)", None)


def distribution(task, probs: np.ndarray, rows: list[str], short: list[str], targets, what: str) -> None:
    """Position x vocabulary heatmap (top-k columns) beside the entropy of each row; `rows` label the
    heatmap's rows, `short` the entropy chart's bars."""
    v = probs.shape[1]
    left, right = st.columns([3, 2], gap="large")
    with left:
        top_k = st.slider("Tokens shown (top-k)", 2, v, min(v, 20), key=inspecting.OUT_TOP_K, **links.SHARED,
                          help="Shows each position's k most likely tokens (and the right answers).")
        targets = None if targets is None else list(targets)[:len(rows)]  # an output cut short has fewer rows
        widgets.chart(output_heatmap(probs, rows, task.vocab, top_k=top_k, targets=targets,
                                     title=f"{what}: probability of each token"))
        st.caption("Each row is one step and sums to 1; outlined cells are the right answers. A trained "
                   "model puts nearly all its weight on one cell per row.")
    with right:
        ent = views.row_entropy(probs)
        widgets.chart(entropy_chart(ent, short, max_entropy=math.log(v), title="Entropy per position"))
        st.caption(f"0 nats: certain. The dashed line, log V = {math.log(v):.2f}, is a uniform guess over "
                   f"all {v} tokens, which is where an untrained model starts.")


def decoded_box(task, title: str, ids, logprob: float, done: bool, target) -> None:
    with st.container(border=True):
        st.markdown(f"**{title}**")
        verdict = "correct ✓" if done and tuple(ids) == tuple(target) else "wrong ✗"
        st.markdown(f"{tokens_text(task, ids)} — **{verdict}**" + ("" if done else " (no end token)"))
        p = math.exp(logprob)
        st.caption(f"log-probability {logprob:.3f} (probability {p:.1%})" if p >= 1e-3 else
                   f"log-probability {logprob:.3f} (probability {p:.1e})")


def search(sel, picked) -> None:
    task = sel.task
    st.subheader("Greedy or beam search")
    a, b = st.columns(2)
    k = a.slider("Beam width k", 1, 8, 4, key=inspecting.OUT_BEAM, **links.SHARED,
                 help="How many partial outputs beam search keeps at each step; k = 1 is greedy.")
    alpha = b.slider("Length penalty α", 0.0, 2.0, 0.0, 0.1, key=inspecting.OUT_PENALTY, **links.SHARED,
                     help="0 ranks finished beams by total log-probability; larger values favour longer outputs "
                          "(score / ((5 + length) / 6) ** α).")
    out = inspecting.decode_both(inspecting.version(sel), sel.model, task, picked.src, int(k), float(alpha))
    left, right = st.columns(2)
    with left:
        decoded_box(task, "Greedy: the likeliest token at every step", out.greedy, out.greedy_logprob,
                    out.greedy_done, picked.target)
    with right:
        decoded_box(task, f"Beam search, k = {out.k}", out.beam, out.beam_logprob, out.beam_done, picked.target)
    if out.beam != out.greedy:
        st.caption("They disagree: greedy commits to one token at a time, while beam search found a sequence "
                   "the model finds more probable overall.")
    else:
        st.caption("They agree: when every step is confident, keeping more candidates changes nothing. Try an "
                   "untrained model or an input outside the training lengths to see them part.")


def show_seq2seq(sel, picked) -> None:
    task = sel.task
    ver = inspecting.version(sel)  # a digest of the weights: once a rerun
    tgt_in = inspecting.decoder_input_for(sel, picked, ver)
    written = inspecting.greedy_output(ver, sel.model, task, picked.src)
    said = [t for t in written if t != EOS]
    ok = tuple(said) == picked.target and EOS in written
    st.markdown(f"The model writes {tokens_text(task, said)} — **{'correct ✓' if ok else 'wrong ✗'}**.")
    probs = inspecting.output_distribution(ver, sel.model, task, picked.src, tgt_in)  # (T, V)
    reads = "reading the correct answer (teacher forcing)" if picked.teacher else "reading its own output"
    rows = [f"{t}: after {tok}" for t, tok in enumerate(task.tokens(tgt_in))]
    distribution(task, probs, rows, task.tokens(tgt_in), list(picked.target) + [EOS], f"Each output step, {reads}")
    search(sel, picked)


def show_classifier(sel, picked) -> None:
    task = sel.task
    probs = inspecting.output_distribution(inspecting.version(sel), sel.model, task, picked.src, None)     # (1, C)
    guess = int(probs[0].argmax())
    right = guess == picked.target[0]
    a, b, c = st.columns(3)
    a.metric("Prediction", f"{task.class_names[guess]} {'✓' if right else '✗'}", border=True)
    b.metric("Confidence", f"{probs[0, guess]:.1%}", border=True)
    c.metric("Correct answer", task.class_names[picked.target[0]], border=True)
    left, _ = st.columns([3, 2])
    with left:
        widgets.chart(output_heatmap(probs, ["this input"], task.class_names, targets=picked.target,
                                     title="Class probabilities (outlined: the right answer)",
                                     layout=dict(xaxis=dict(title="class"), yaxis=dict(title=""))))
    st.caption("The encoder's vectors are averaged and a linear layer scores the two classes. A model without "
               "positional encoding cannot tell the orders apart and hovers near 50%.")


def show_lm(sel, picked) -> None:
    task = sel.task
    probs = inspecting.output_distribution(inspecting.version(sel), sel.model, task, picked.src, None)     # (T, V)
    chars = task.position_labels(list(picked.src))
    rows = [f"{t}: after {ch}" for t, ch in enumerate(chars)]
    distribution(task, probs, rows, chars, picked.target or None, "The next character at each position")
    st.subheader("Continue the text")
    a, b, c = st.columns(3)
    n_new = a.slider("Characters to write", 10, 300, 120, 10, key=inspecting.OUT_NEW, **links.SHARED)
    temp = b.slider("Temperature", 0.1, 2.0, 0.8, 0.1, key=inspecting.OUT_TEMPERATURE, **links.SHARED,
                    help="Divides the scores before the softmax: low = safe and repetitive, high = surprising.")
    seed = c.number_input("Seed", 0, 10_000, 0, key=inspecting.OUT_SEED, **links.SHARED,
                          help="Another seed, another sample.")
    prompt = "".join(task.tokens(picked.src))
    left, right = st.columns(2)
    for col, title, t in ((left, "Greedy (always the likeliest)", 0.0), (right, f"Sampled at temperature {temp}",
                                                                       float(temp))):
        new = inspecting.continue_text(inspecting.version(sel), sel.model, picked.src, int(n_new), t, int(seed))
        with col.container(border=True):
            st.markdown(f"**{title}**")
            st.code(prompt + "".join(task.tokens(new)), language=None, wrap_lines=True)
    st.caption(f"The text after your {len(picked.src)} characters is the model's. It only ever sees its last "
               f"{sel.config.max_len} characters. Greedy text often loops on a favourite phrase; sampling "
               "trades safety for surprise.")


st.title("Outputs")
st.markdown("What the sidebar's model predicts for one input: the probability it gives every token at every "
            "step, how sure it is, and what different decoding strategies make of it.")
selected = models.selected_model()
picked_input = inspecting.pick_input(selected)
if picked_input is not None:
    st.markdown(inspecting.describe(selected.task, picked_input))
    {"seq2seq": show_seq2seq, "classify": show_classifier, "lm": show_lm}[selected.task.kind](selected,
                                                                                                picked_input)
