"""The chapter as a lesson: positions (sinusoidal, learned, RoPE), the encoder and decoder blocks, Pre-LN
and Post-LN, the reference sizes, label smoothing, attention maps, beam search and length generalisation.
Views and live checks are in ch2_views.py, the experiment answers in ch2_reveals.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from explorer.analysis.gradients import DepthProfile, depth_profile
from explorer.analysis.views import single_threaded
from explorer.config import human
from explorer.experiments.label_smoothing import target_entropy
from explorer.figures.architecture import param_breakdown
from explorer.figures.attention import attention_heatmap
from explorer.figures.curves import line_chart
from explorer.figures.gradients import grad_norm_profile
from explorer.figures.outputs import output_heatmap
from explorer.figures.positional import similarity_heatmap
from explorer.lessons import ch2_reveals as answers
from explorer.lessons import ch2_views as live
from explorer.lessons import facts
from explorer.lessons.base import Control, Lesson, Question, Reveal, SeedCheck, Step, View

D_HEAD = Control("d_head", "Head dimension", (8, 16, 32, 64), 16, "Width of one head's queries and keys")
SEED = Control("seed", "Seed", (0, 1, 2, 3), 0, "Initial weights and the random batch; both stacks share them")
LAYERS = 12
# The budget at which exercise 2.3's own setting decides its question (see the report in bench/README.md).
SMOOTHING = dict(task="reversal-seed", steps=600)


# 1 -------------------------------------------------------------------------------------------------------

SAME, ALL_CHANGE, UNMOVED = ("the same vectors, shuffled the same way", "every output changes",
                          "the outputs stay in place, unshuffled")
PERMUTATION_CHOICES = (ALL_CHANGE, SAME, UNMOVED)   # the right one's place says nothing


def permutation_view(values: dict) -> View:
    """The question's material: the two orders of the same six tokens."""
    tokens = [str(t) for t in live.TOKENS]
    table = pd.DataFrame({"position": range(len(tokens)), "original": tokens,
                          "shuffled": [tokens[i] for i in live.SHUFFLE]})
    return View(None, "The same six tokens in two orders: a fresh 2-layer encoder without positional encoding "
                "reads each order.", table=table)


def permutation_answer(_result=None) -> Reveal:
    _, gap, size = live.permutation_check("none")
    with_pe = live.permutation_check("sinusoidal")[1]
    same = gap < 1e-4 * size
    text = (f"Without positions, every token's output is the same vector in either order (largest difference "
            f"{gap:.1e}), just moved to its token's new place: the encoder is permutation-equivariant, so it "
            "cannot tell *dog bites man* from *man bites dog*." if same else
            f"The outputs differ once the shuffle is undone (by up to {gap:.2f}): this encoder is not "
            "permutation-equivariant.")
    return Reveal(text, correct=(PERMUTATION_CHOICES.index(SAME if same else ALL_CHANGE),),
                  view=View(live.permutation_figure("none"), "Cosine similarity between what the encoder gives each "
                            "token in the original order and in the shuffled order.",
                            note=f"**Live check:** undoing the shuffle, the two outputs differ by at most "
                                 f"**{gap:.1e}** (outputs are up to {size:.1f} in size). With sinusoidal "
                                 f"positions added they differ by up to **{with_pe:.2f}**: order now counts."))


# 2 -------------------------------------------------------------------------------------------------------

HIGH, LOW, EVEN = "in the high dimension indices", "in the low dimension indices", "spread evenly over the vector"
SLOW_CHOICES = (LOW, EVEN, HIGH)


def slow_dimensions(_result=None) -> Reveal:
    fast = facts.fastest_dimensions(64)
    period = facts.wavelengths(64)
    slow_high = int(np.argmax(period)) >= 32
    return Reveal(f"Dimension pair i turns at frequency 1/10000^(2i/d_model), which shrinks as i grows: dimension "
                  f"0 repeats every **{period[0]:.1f}** positions, dimension 63 only every **{period[-1]:,.0f}**. "
                  f"So the slow waves sit at the {'high' if slow_high else 'low'} indices. Together the columns "
                  "work like the hands of a clock: fast ones tell neighbours apart, slow ones say roughly where "
                  "in a long sequence a token is.", correct=(SLOW_CHOICES.index(HIGH if slow_high else LOW),),
                  view=dataclasses.replace(fast.view, check=None))


# 3 -------------------------------------------------------------------------------------------------------

ONLY_K, BOTH = "only on the offset k", "on both pos and k"
OFFSET_CHOICES = (BOTH, ONLY_K)


def offset_view(values: dict) -> View:
    """The question's material: one starting position's curve; the others come with the reveal."""
    d = int(values.get("d_model", 64))
    first = dict(list(live.offset_dots(d).items())[:1])
    return View(line_chart(first, title=f"PE(0) · PE(k) against the offset k, d_model {d}", x_title="offset k",
                           y_title="dot product"),
                "How similar position 0's vector is to the one k places further on. Would a curve started at "
                "position 10, 30 or 60 look the same?")


def offset_answer(_result=None) -> Reveal:
    gap, span = live.offset_spread(64)
    only_k = gap < 1e-6 * span
    fig = line_chart(live.offset_dots(64), title="PE(pos) · PE(pos + k) against the offset k", x_title="offset k",
                     y_title="dot product", dashed=True)
    text = (f"The four curves coincide: at any offset they differ by at most **{gap:.1e}** while the dot product "
            f"itself ranges over {span:.1f}. Each sin/cos pair is a point on a circle turned by an angle "
            "proportional to pos, and the dot product of two such points depends only on the angle between them, "
            "that is on k: relative position is readable from absolute encodings." if only_k else
            f"The curves differ by up to {gap:.2f} (the dot product ranges over {span:.1f}): it depends on pos too.")
    return Reveal(text, correct=(OFFSET_CHOICES.index(ONLY_K if only_k else BOTH),),
                  view=View(fig, "One curve per starting position pos: how similar a position's vector is to the "
                                 "one k places further on."))


# 4 -------------------------------------------------------------------------------------------------------

def rope_view(values: dict) -> View:
    d = int(values.get("d_head", 16))
    scores = live.rope_scores(d)
    spread = live.rope_diagonal_spread(scores)
    return View(similarity_heatmap(scores[:40, :40], title=f"RoPE: q·k with the query at m, the key at n "
                                   f"(d_head {d})"),
                "One random query and one random key, rotated to every pair of positions: each diagonal "
                "(a fixed m − n) has one colour.",
                table=pd.DataFrame([{"max_len": n, "d_model": 512, "learned table adds": human(
                    live.learned_table_params(n, 512))} for n in (512, 1024, 2048)]),
                note=f"**Measured:** along every diagonal the score varies by at most **{spread:.1e}**. The table: "
                     "what a learned position table costs one stack, from the app's parameter count.")


# 5 -------------------------------------------------------------------------------------------------------

def block_view(values: dict) -> View:
    """The question's material: the block's weights and their shapes, without their counts."""
    table = pd.DataFrame([
        {"sublayer": "self-attention", "weights": "W_Q, W_K, W_V, W_O", "each": "d × d, bias d"},
        {"sublayer": "feed-forward", "weights": "W₁", "each": "d × d_ff, bias d_ff"},
        {"sublayer": "feed-forward", "weights": "W₂", "each": "d_ff × d, bias d"},
        {"sublayer": "two LayerNorms", "weights": "scale, shift", "each": "d"},
    ])
    return View(None, "What one encoder block learns, in terms of d (d_model) and d_ff: count them before you "
                "reveal.", table=table)


def ffn_share(_result=None) -> Reveal:
    parts = facts.block_parameters(512, 2048)
    share = 100 * parts["feed-forward"] / sum(parts.values())
    rule = live.encoder_block_shares(512, 2048)
    fig = param_breakdown(parts, f"One encoder block, d_model 512, d_ff 2048: {sum(parts.values()):,} parameters")
    return Reveal(f"At d_model 512 and d_ff 2048 the FFN holds **{parts['feed-forward']:,}** of the block's "
                  f"{sum(parts.values()):,} parameters: **{share:.1f}%**. Without biases the chapter's rule gives "
                  f"{rule['feed-forward']:,} (8d²) against {rule['attention']:,} (4d²): two thirds.",
                  value=round(share, 1), view=View(fig, "Self-attention has four d×d projections (Q, K, V, output); "
                                                        "the FFN two matrices d×d_ff and d_ff×d; each LayerNorm a "
                                                        "scale and a shift per dimension. Biases included."))


# 6 -------------------------------------------------------------------------------------------------------

@single_threaded
def gradient_view(values: dict) -> View:
    seed = int(values.get("seed", 0))
    profiles = {name: depth_profile(norm, n_layers=LAYERS, d_model=64, seed=seed).weight_grad
                for norm, name in (("pre", "Pre-LN"), ("post", "Post-LN"))}
    spread = " · ".join(f"{name} ×{DepthProfile.spread(v):.2f}" for name, v in profiles.items())
    return View(grad_norm_profile(profiles, title=f"‖∂loss/∂θ‖ of each block at initialisation, {LAYERS} layers"),
                "Two fresh 12-layer encoders with the same weights and the same random batch; one loss goes "
                "backward once. Layer 0 is the first; the scale is logarithmic.",
                note=f"**Measured**, largest ÷ smallest layer with seed {seed}: {spread}. Try other seeds: which "
                     "one is more even changes from seed to seed.")


# 7 -------------------------------------------------------------------------------------------------------

LATER, EVERY, ONLY_3 = "positions 3 and later only", "every position", "position 3 only"
CAUSAL_CHOICES = (EVERY, ONLY_3, LATER)
CHANGED_AT = 3   # the question's position


def causal_view(values: dict) -> View:
    _, pattern, labels = live.causal_check(CHANGED_AT)
    mask = np.tril(np.ones_like(pattern, dtype=bool))
    fig = attention_heatmap(pattern, labels, labels, "Decoder layer 0, head 0: masked self-attention", mask=mask)
    return View(fig, "Query t may look at keys 0..t only (grey: masked). Cross-attention, the second sublayer, "
                "then takes its queries from here and its keys and values from the encoder's output.")


def causal_answer(_result=None) -> Reveal:
    delta, _, _ = live.causal_check(CHANGED_AT)
    before, after = float(delta[:CHANGED_AT].max()), delta[CHANGED_AT:]
    earlier_fixed, later = before < 1e-6, bool((after > 1e-4).all())
    picked = (LATER,) if earlier_fixed and later else (EVERY,) if not earlier_fixed and later else ()
    text = (f"Only positions 3 and later change (by up to {float(after.max()):.2f}); positions 0-2 move by at most "
            f"{before:.1e}. In training every position predicts its next token at once, and the mask keeps each "
            "prediction from reading the answer." if picked == (LATER,) else
            f"Positions 0-2 move by up to {before:.1e} and later ones by up to {float(after.max()):.2f}"
            + (": every position changes." if picked else ": none of the choices describes it."))
    note = (f"**Live check:** replacing the input token at position {CHANGED_AT}, the logits at positions "
            f"0-{CHANGED_AT - 1} change by at most **{before:.1e}**; from position {CHANGED_AT} on by up to "
            f"**{float(after.max()):.2f}**.")
    return Reveal(text, correct=tuple(CAUSAL_CHOICES.index(c) for c in picked),
                  view=dataclasses.replace(causal_view({}), note=note))


# 8 -------------------------------------------------------------------------------------------------------

RULE_BASE = live.chapter_rule(6, 512, 2048)


def sizes_view(values: dict) -> View:
    """The question's material: the configurations and their computed totals (the rule's count, and
    base's split by part, come with the reveal)."""
    return View(None, "N is the number of blocks in one stack; base has two stacks, an encoder and a decoder of "
                "N = 6 each (BERT and GPT have one). d_ff is 4·d_model in every row. The total, computed from the "
                "config, counts everything: blocks, cross-attention, embeddings and LayerNorms.",
                table=live.reference_table())


def rule_answer(_result=None) -> Reveal:
    parts = live.base_parts()
    check = SeedCheck(
        "the chapter's summary table: N(4d² + 2·d·d_ff) ≈ 65M for base (N = 6).",
        f"6 × (4·512² + 2·512·2048) = {RULE_BASE:,} ≈ {human(RULE_BASE)}. Base has 6 encoder and 6 decoder "
        f"blocks, twice that by the rule ({human(2 * RULE_BASE)}; {human(parts[live.BLOCKS])} with their biases, "
        f"as the chart counts), the decoder's cross-attention adds {human(parts[live.CROSS])}, "
        f"the shared 37k-token embedding {human(parts[live.EMBEDDINGS])}.",
        f"the 65M, but not the formula: it counts one stack's blocks only. Everything together gives "
        f"{human(sum(parts.values()))}, close to the published 65M.")
    return Reveal(f"6 × (4 × 512² + 2 × 512 × 2048) = **{RULE_BASE:,}**, about **{RULE_BASE / 1e6:.1f} million**: "
                  "less than a third of the 65M the chapter writes next to it.", value=round(RULE_BASE / 1e6, 1),
                  view=View(param_breakdown(parts, "Transformer base: where its parameters are"),
                            "The rule, N(4d² + 2·d·d_ff), counts one stack's N blocks; base has two stacks, "
                            "cross-attention and a 37k-token embedding on top.", table=live.reference_table(rule=True),
                            check=check))


# 9 -------------------------------------------------------------------------------------------------------

K, GOLD, EPS = 8, 3, 0.1


def smoothing_view(values: dict) -> View:
    rows = live.smoothing_rows(K, GOLD, EPS)
    formula = rows["chapter's formula"]
    vocab = ["<pad>"] + [str(i) for i in range(1, K)]
    table = live.smoothing_table(rows, GOLD)
    check = SeedCheck(
        "the chapter's label-smoothing formula y = (1 − ε)·y_onehot + ε/K, against the class in its own code, "
        "which fills ε/(K − 2), writes 1 − ε on the target and 0 on padding.",
        f"for K = {K}, ε = {EPS}: the formula puts {formula[GOLD]:.4f} on the target "
        f"and {formula[0]:.4f} on padding; the code {1 - EPS:.4f} and 0. Both rows sum to 1. This app's loss, "
        "measured, trains against the code's row.",
        "the code: the formula as printed lends probability to padding, a token the model must never output, "
        "and gives the target 1 − ε + ε/K rather than 1 − ε. The text should read ε/(K − 2) on every class but "
        "the target and padding.")
    short = [name.replace("chapter's ", "").replace(" (measured)", "") for name in rows]   # whole in the table
    return View(output_heatmap(np.stack(list(rows.values())), short, vocab, title=f"Smoothed targets for "
                               f"token {GOLD}, K = {K}, ε = {EPS}", targets=[GOLD] * len(rows), rows="target"),
                "Each row is one target distribution the loss compares the softmax with; the outlined cell is the "
                "right token.", table=table, check=check)


# 10-13: experiments --------------------------------------------------------------------------------------

def reversal_examples(values: dict) -> View:
    task = live.task("reversal-seed")
    rows = [task.example("val", i) for i in range(4)]
    vocab = len(task.vocab)
    table = pd.DataFrame([{"source": " ".join(task.tokens(s)), "target": " ".join(task.tokens(t))} for s, t in rows])
    return View(None, "Exercise 2.3's task: reverse 10 to 20 integers from 1 to 100.",
                table=table, note=f"A model that matched the smoothed target exactly would have an output entropy "
                f"of {target_entropy(0.1, vocab):.2f} nats at ε = 0.1 (vocabulary of {vocab} tokens), and 0 "
                "with hard targets. Does training get there?")


def alignment_view(values: dict) -> View:
    task = live.task("reversal-fast")
    src, tgt = task.example("val", 0)
    expected = task.expected_cross_attention(src)
    q = ["<bos>"] + task.tokens(tgt)
    return View(attention_heatmap(expected[: len(q)], q, task.tokens(src), "What a perfectly aligned head would "
                                  "draw on reversal", expected=expected[: len(q)]),
                "Each output copies one source token: the first output the last input, and so on. A head that "
                "aligns puts its weight on the anti-diagonal.")


LESSON = Lesson(
    "ch2", "The Transformer architecture", "the chapter",
    "Why order needs positions, the encoder and decoder blocks, Pre-LN and Post-LN, training with label "
    "smoothing, attention maps and beam search.",
    (
        Step("Why order needs positional encoding",
             "Self-attention compares every token with every other by content alone: nothing in its formula says "
             "where a token sits. What does that mean when the same tokens come in another order?",
             permutation_view, (),
             Question("An encoder without positional encoding reads six tokens, then the same six shuffled. "
                      "What happens to its outputs?", permutation_answer, choices=PERMUTATION_CHOICES)),
        Step("The sinusoidal encoding",
             "The original paper adds a fixed vector to each position's embedding:\n\n"
             "$$PE_{(pos,\\,2i)} = \\sin(pos / 10000^{2i/d_{model}})$$\n\n"
             "$$PE_{(pos,\\,2i+1)} = \\cos(pos / 10000^{2i/d_{model}})$$\n\n"
             "Exercise 2.1 draws it for d_model 64 and positions 0-99.",
             facts.pe_view, (facts.D_MODEL, facts.POSITIONS),
             Question("Where do the slowly varying (low-frequency) sinusoids sit?", slow_dimensions,
                      choices=SLOW_CHOICES), try_it=facts.pe_try_it),
        Step("Relative position from absolute encodings",
             "The model only ever sees absolute positions. Yet the dot product of two encodings could still "
             "tell it how far apart they are, if it depends on the distance alone.",
             offset_view, (facts.D_MODEL,),
             Question("Does PE(pos) · PE(pos + k) depend on pos, or only on the offset k?", offset_answer,
                      choices=OFFSET_CHOICES),
             try_it=lambda v: ("positional", {"pe_type": "sinusoidal", "pe_d_model": str(v.get("d_model", 64))})),
        Step("Learned positions and RoPE",
             "BERT and GPT-2 learn a table with one vector per position instead: flexible, but it stops at "
             "max_len and costs max_len × d_model parameters. RoPE adds nothing to the embeddings; it rotates "
             "each query and key pair of dimensions by an angle proportional to its position, so q_m · k_n "
             "depends on m − n only.",
             rope_view, (D_HEAD,),
             try_it=lambda v: ("positional", {"pe_type": "rope", "pe_d_model": str(v.get("d_head", 16))})),
        Step("The encoder block",
             "Each block has two sublayers, each wrapped in a residual add and a LayerNorm: self-attention, where "
             "every token sees every other, and a feed-forward network, max(0, xW₁ + b₁)W₂ + b₂, applied to each "
             "position on its own. The FFN is usually four times wider than the model.",
             block_view, (),
             Question("With d_ff = 4·d_model (512 and 2048), what share of one encoder block's parameters is the "
                      "feed-forward network?", ffn_share, number=(0.0, 100.0, 1.0), unit="%")),
        Step("Pre-LN and Post-LN",
             "The 2017 paper normalises after the residual add, LayerNorm(x + f(x)) (Post-LN); GPT-2 and LLaMA "
             "normalise the sublayer's input, x + f(LayerNorm(x)) (Pre-LN). Exercise 2.2 compares the gradient "
             "norm of each layer of a 12-layer stack at initialisation; the experiment then trains deep stacks of "
             "both kinds without the warmup Post-LN is said to need, on a small test of order: is vector A "
             "before vector B among noise vectors (the *order task*)?",
             gradient_view, (SEED,),
             Question("Ten-block stacks learn the order task (is A before B?) at lr 0.01 with no warmup. Which "
                      "of them trains?",
                      answers.pre_post_ln, choices=("Pre-LN trains, Post-LN stays stuck", "Post-LN trains, Pre-LN "
                                                    "stays stuck", "both train"), experiment="pre-post-ln"),
             try_it=lambda v: ("gradients", {"grad_layers": str(LAYERS), "grad_seed": str(v.get("seed", 0))})),
        Step("Masks and the decoder",
             "The decoder block has three sublayers: masked self-attention over the output so far, cross-"
             "attention to the encoder (queries from the decoder, keys and values from the encoder), and the "
             "FFN. The mask stops each position from reading the tokens after it.",
             causal_view, (),
             Question("Replace the decoder's input token at position 3. Which of its outputs change?",
                      causal_answer, choices=CAUSAL_CHOICES)),
        Step("How big: the reference sizes",
             "The chapter's table lists configurations from Small to GPT-3, with a rule of thumb for the total: "
             "N(4d² + 2·d·d_ff), where N counts the blocks of one stack. Here every row is computed from its "
             "config.",
             sizes_view, (),
             Question("How many parameters does N(4d² + 2·d·d_ff) give for base (N = 6, d = 512, d_ff = 2048)?",
                      rule_answer, number=(0.0, 200.0, 0.1), unit="million"),
             try_it=lambda v: ("architecture", {})),
        Step("Teacher forcing and label smoothing",
             "In training the decoder reads the true target shifted right by one ([BOS] first), not its own "
             "guesses, so every position learns at once. The loss compares its softmax with a softened target: "
             "most of the mass on the right token, a little spread over the others.",
             smoothing_view, ()),
        Step("Label smoothing, exercise 2.3",
             "Two models learn to reverse sequences, one against hard targets (ε = 0), one with ε = 0.1. Then "
             "both read 10 held-out examples and we measure how spread out their output distributions are.",
             reversal_examples, (),
             Question("Does training with ε = 0.1 make the output distribution more diffuse than ε = 0?",
                      answers.label_smoothing, choices=("yes: higher entropy", "about the same",
                                                        "no: lower entropy"),
                      experiment="label-smoothing", params=SMOOTHING),
             try_it=lambda v: ("experiments", {"exp_name": "label-smoothing"})),
        Step("Attention maps and alignment heads",
             "Exercise 2.4 reads the cross-attention of every decoder layer and head. Three models (seeds) learn "
             "reversal with 2 decoder layers of 4 heads; we score each head by the weight it puts on the source "
             "token it is about to copy.",
             alignment_view, (),
             Question("Which decoder layer holds the clearest alignment head?", answers.alignment,
                      choices=("the first (dec 0)", "the last (dec 1)", "both alike"), experiment="alignment-heads"),
             try_it=lambda v: ("experiments", {"exp_name": "alignment-heads"})),
        Step("Greedy decoding and beam search",
             "Greedy decoding keeps the single most likely token at every step; beam search keeps the k best "
             "partial outputs (k = 4 in exercise 2.5) and can recover from a first step that looked good but "
             "led nowhere. We compare both on the same trained reversal models.",
             None, (),
             Question("On reversal, how does beam search (k = 4) compare with greedy decoding on exact match?",
                      answers.decoding, choices=("beam at least as accurate", "greedy more accurate"),
                      experiment="decoding"),
             try_it=lambda v: ("experiments", {"exp_name": "decoding"})),
        Step("Do sinusoids generalise to longer inputs?",
             "The chapter says sinusoidal PE generalises to unseen lengths, since the formula gives a vector for "
             "any position. The experiment trains reversal on lengths 4-8 with each encoding and tests on "
             "lengths 9-16, which no model has seen.",
             None, (),
             Question("Trained on lengths 4-8, how many sequences of lengths 9-16 does the sinusoidal model "
                      "reverse exactly?", answers.pe_types,
                      choices=answers.PE_TYPES_CHOICES,
                      experiment="pe-types"),
             try_it=lambda v: ("experiments", {"exp_name": "pe-types"})),
    ))
