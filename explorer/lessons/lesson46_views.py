"""Views and live checks of the notebook lesson (lesson46): the shipped order model's heads, our modules
against PyTorch's, what shuffling the input does to attention, and the block and classifier diagrams.
Everything here is built from library calls and explorer.figures; the reveals of experiment questions
live in lesson46_reveals.py."""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np
import torch

from explorer.analysis.equivalence import attention_check, block_check, sci
from explorer.analysis.views import attention_for, single_threaded
from explorer.config import ModelConfig, param_count
from explorer.figures.architecture import architecture_diagram, block_diagram, param_breakdown
from explorer.figures.attention import attention_mosaic
from explorer.figures.positional import pe_heatmap
from explorer.inspect import capture
from explorer.lessons import facts
from explorer.lessons.base import Control, Reveal, View
from explorer.model import build_model
from explorer.positional import sinusoidal_table
from explorer.store.checkpoints import load_pretrained
from explorer.tasks import TaskConfig, make_task

# The notebook's sizes: D (d_model), H (heads), FF (the feed-forward width), T (sequence length).
D, H, FF, T = 16, 4, 32, 8

D_MODEL = Control("d_model", "d_model", (16, 32, 64, 128), 32, "The width of every position's encoding vector")
POSITIONS = Control("positions", "Positions", (25, 50, 100, 200), 50)
PE = Control("pe", "Positional encoding", ("sinusoidal", "none"), "sinusoidal",
             "Whether a sinusoid is added to each position's vector before attention")
NORM = Control("norm", "LayerNorm", ("post", "pre"), "post",
               "Post-LN (the notebook, 2017): LayerNorm(x + f(x)); Pre-LN: x + f(LayerNorm(x))")
LAYERS = Control("layers", "Blocks stacked", (1, 2, 4, 6), 1, "N copies of the block, one after another")
HEADS = Control("heads", "Heads", (1, 2, 4, 8, 16), 1, "How many heads share d_model = 16")
ORDER_MODEL = "order-pe"   # shipped: 1 block, 4 heads, sinusoidal PE, learned "is A before B?"


def block_cfg(norm: str = "post", n_layers: int = 1, n_heads: int = H, pos_encoding: str = "sinusoidal") -> ModelConfig:
    """The notebook's encoder at D=16, H=4, FF=32, reading vectors (no embedding), as the order task does."""
    return ModelConfig(arch="encoder", src_vocab_size=0, d_model=D, n_heads=n_heads, n_encoder_layers=n_layers,
                       d_ff=FF, norm=norm, pos_encoding=pos_encoding, max_len=T)


# --------------------------------------------------------------------------- 1. multi-head attention
@lru_cache(maxsize=1)
def order_model():
    """The shipped order model and its task (read-only: every visitor shares it)."""
    model, meta = load_pretrained(ORDER_MODEL)
    return model.eval(), make_task(TaskConfig.from_dict(meta["task"]))


def heads_view(values: dict | None = None) -> View:
    model, task = order_model()
    src = next(iter(task.iter_val(1))).src[0].tolist()
    view = attention_for(model, task, src)
    cfg = model.cfg
    fig = attention_mosaic(view.patterns["enc_self"], view.q_labels["enc_self"], view.k_labels["enc_self"],
                           f"{cfg.n_heads} heads of one trained layer, on one held-out sequence",
                           layer_names=["layer 0"])
    return View(fig, f"A small trained model (d_model {cfg.d_model}, {cfg.n_heads} heads of "
                     f"{cfg.d_model // cfg.n_heads} dimensions) reads one sequence. Each tile is one head: a row is "
                     "a position asking, its colours say where that position looks. The heads learned different "
                     "patterns from the same input.")


# From the largest difference down: the right one's place says nothing.
MHA_CHOICES = ("large: they compute different things", "about 1e-3", "float rounding, about 1e-7", "exactly 0")


def mha_difference(_result=None) -> Reveal:
    """Our MultiHeadAttention against nn.MultiheadAttention at the notebook's D=16, H=4, checked now."""
    four, one = attention_check(block_cfg()), attention_check(block_cfg(n_heads=1))
    d = four.max_diff
    band = 3 if d == 0 else 2 if d < 1e-5 else 1 if d < 1e-2 else 0   # an index of MHA_CHOICES
    same_order = ("Here both run the same arithmetic in the same order, so even the rounding agrees. " if d == 0
                  else "")
    return Reveal(
        f"Checked just now: with PyTorch's weights copied into ours, the largest difference over "
        f"{four.ours.size} output values is **{sci(d)}** (before copying, with different weights, it was "
        f"{four.before_copy:.2f}, so the check is not empty). {same_order}With one head the split changes the "
        f"order of operations and the difference is **{sci(one.max_diff)}**: float32 rounding, still the same "
        "function.",
        correct=(band,), view=heads_view({}))


# --------------------------------------------------------------------------- 2. positional encoding
def pe_view(values: dict) -> View:
    view = facts.pe_view(values)
    n = int(values.get("positions", POSITIONS.default))
    return dataclasses.replace(view, caption=(
        "One row per position, one column per dimension: the vector added to that position's input. The "
        f"left columns swing from row to row; the right ones barely move over {n} positions, so together they "
        "give every position a pattern of its own."))


@single_threaded
def _shuffled(pos_encoding: str, seed: int = 0) -> tuple[float, float, float, np.ndarray, np.ndarray, list]:
    """One random block at D=16, H=4 reads five vectors, then the same five shuffled. Returns max |diff|
    between the shuffled run's output and the first run's rows shuffled alike, the largest change of the
    mean-pooled output, and both attention patterns (H, T, T) with the shuffle."""
    cfg = dataclasses.replace(block_cfg(), pos_encoding=pos_encoding)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(1, 5, D, generator=gen)                                 # (1, T, d_model)
    perm = torch.randperm(5, generator=gen)
    model = build_model(cfg, seed=seed).eval()
    outputs, patterns = [], []
    with torch.no_grad():
        for seq in (x, x[:, perm]):
            with capture(model, residual=True) as cache:
                model(seq)
            outputs.append(cache.residual["encoder"][0][0])                 # (T, d_model): the block's output
            patterns.append(cache.attention["enc_self"][0][0].numpy())     # (H, T, T)
    equivariant = float((outputs[1] - outputs[0][perm]).abs().max())
    pooled = float((outputs[1].mean(0) - outputs[0].mean(0)).abs().max())
    moved = float((outputs[1] - outputs[0]).abs().max())
    return equivariant, pooled, moved, patterns[0], patterns[1], perm.tolist()


SHUFFLED, OLD_ORDER, NEW = ("the same output rows, shuffled the same way", "exactly the same output, in the old order",
                           "new values: every row changes")
SHUFFLE_CHOICES = (OLD_ORDER, NEW, SHUFFLED)


def permutation(_result=None) -> Reveal:
    same, pooled, moved, before, after, perm = _shuffled("none")
    with_pe = _shuffled("sinusoidal")[0]
    labels = [f"x{i}" for i in range(len(perm))]
    fig = attention_mosaic(np.stack([before, after]), labels, labels,
                           "Attention, in order and shuffled",
                           layer_names=["in order", "shuffled"])
    order = ", ".join(f"x{i}" for i in perm)
    shuffled = same < 1e-5
    rows = (f"the output rows are the first output's rows **shuffled the same way** (largest difference {sci(same)})"
            if shuffled else f"the output is not a reshuffle of the first (difference {same:.2f})")
    return Reveal(
        f"Measured on one random block (D=16, H=4, no positional encoding), input shuffled to {order}: {rows}, "
        f"while row by row in the old order they differ by up to {moved:.2f}. The mean over positions, which the "
        f"order classifier reads, changes by {sci(pooled)}. With the sinusoid added first, the shuffled output is "
        f"no longer a reshuffle (difference {with_pe:.2f}).",
        correct=(SHUFFLE_CHOICES.index(SHUFFLED),) if shuffled else (),
        view=View(fig, "Same weights, same vectors: the patterns of the bottom row are those of the top with rows "
                       "and columns reordered."))


# --------------------------------------------------------------------------- 3. the order task
def classifier_view(values: dict) -> View:
    pe = values.get("pe", PE.default)
    cfg = block_cfg(pos_encoding=pe)
    return View(architecture_diagram(cfg, batch=64, seq_len=T),
                "The model of the experiment: eight 16-number vectors (noise, with A and B at two random places), "
                + ("a sinusoid added to each, " if pe == "sinusoidal" else "nothing added, ")
                + "one encoder block with 4 heads, the mean over the eight positions, and a linear layer that "
                  "says whether A came first. Trained for 300 steps at lr 0.01 on 400 sequences, tested on 150.")


# --------------------------------------------------------------------------- 4. the encoder block
def block_view(values: dict) -> View:
    norm, layers = values.get("norm", NORM.default), int(values.get("layers", LAYERS.default))
    cfg = block_cfg(norm, layers)
    check = block_check(block_cfg(norm))
    x_shape, out_shape = (2, 5, D), tuple(check.ours.shape)
    return View(block_diagram(cfg, "encoder", batch=2, seq_len=5),
                f"D={D}, H={H}, FF={FF}, {'Post' if norm == 'post' else 'Pre'}-LN, {layers} block"
                f"{'s' if layers > 1 else ''}. The shapes on the arrows stay (2, 5, {D}) from block to block.",
                note=f"**Live check** against `{check.reference}`, its weights copied into ours: {check.verdict()}. "
                     f"Input {x_shape} → output {out_shape}.")


# --------------------------------------------------------------------------- 5. heads: exercise 1
def split_view(values: dict) -> View:
    h = int(values.get("heads", HEADS.default))
    cfg = block_cfg(n_heads=h)
    parts = param_count(cfg)
    fig = param_breakdown(parts, f"The classifier's {parts['total']:,} parameters with {h} head{'s' * (h > 1)}")
    return View(fig, "Change the heads: the counts stay put. Splitting regroups the 16 dimensions into "
                     f"{h} × {D // h}; it adds no weights.")


# --------------------------------------------------------------------------- 6. length
def length_view(values: dict) -> View:
    n = int(values.get("positions", 32))
    table = sinusoidal_table(n, D)
    return View(pe_heatmap(table, f"Sinusoidal encoding at D={D}: {n} positions"),
                f"All the model has to tell {n} positions apart: {D} numbers each. At T=8 there are 56 ordered "
                f"pairs of places for A and B; at T=32 there are 992, from the same 400 training sequences.")


LENGTH = Control("positions", "Positions (T)", (8, 16, 32), 32)


# --------------------------------------------------------------------------- 7. pre-norm vs post-norm
STACK = 10   # the notebook's exercise 3: ten blocks


def stack_view(values: dict) -> View:
    norm = values.get("norm", NORM.default)
    return View(block_diagram(block_cfg(norm, STACK), "encoder", batch=64, seq_len=T),
                f"The stack the experiment trains: {STACK} blocks of D={D}, H={H}, FF={FF}. "
                + ("Post-LN: a LayerNorm after every residual add, so the path from the loss back to the first "
                   "block crosses twenty of them." if norm == "post" else
                   "Pre-LN: the LayerNorms sit on the side branches; the residual path itself runs straight "
                   "from the first block to the last."))


__all__ = ["MHA_CHOICES", "SHUFFLE_CHOICES", "D", "H", "FF", "T", "D_MODEL", "POSITIONS", "PE", "NORM", "LAYERS",
           "HEADS", "LENGTH", "block_cfg", "order_model", "heads_view", "mha_difference", "pe_view", "permutation",
           "classifier_view", "block_view", "split_view", "length_view", "stack_view"]
