"""Live checks and measurements the chapter lesson (ch2.py) shows: permutation equivariance, the offset
property of the sinusoids, RoPE scores, causality, the chapter's parameter rule and its two label-smoothing
targets. Each is computed with the library's own functions; the figures come from explorer.figures."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
import torch

from explorer.analysis.views import single_threaded
from explorer.config import REFERENCE_PRESETS, ModelConfig, attention_params, human, param_count, param_story
from explorer.figures.positional import similarity_heatmap
from explorer.inspect import capture
from explorer.losses import label_smoothing_loss
from explorer.model import build_model
from explorer.positional import rope_angles, rope_rotate, sinusoidal_table
from explorer.tasks import TASK_PRESETS, Task, make_task

TOKENS = (5, 9, 2, 7, 3, 8)          # a source sentence of token ids (no padding, no specials)
SHUFFLE = (3, 0, 5, 1, 4, 2)         # the same tokens in another order
STARTS = (0, 10, 30, 60)             # absolute positions whose offset curves should coincide
MAX_OFFSET = 40


@lru_cache(maxsize=4)
@single_threaded
def small_seq2seq(pos_encoding: str = "sinusoidal", seed: int = 0) -> torch.nn.Module:
    """An untrained 2+2-layer encoder-decoder (d_model 32), read only: the checks below need no training."""
    cfg = ModelConfig(arch="encoder-decoder", src_vocab_size=16, tgt_vocab_size=16, d_model=32, n_heads=4,
                      n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0, pos_encoding=pos_encoding,
                      max_len=16)
    return build_model(cfg, seed=seed).eval()


@lru_cache(maxsize=8)
@single_threaded
def permutation_check(pos_encoding: str) -> tuple[np.ndarray, float, float]:
    """(cosine similarity (T, T) of the encoder's outputs for TOKENS (rows) and for the shuffled tokens
    (columns), largest |difference| once the shuffle is undone, largest |output|)."""
    model = small_seq2seq(pos_encoding)
    src = torch.tensor([TOKENS, [TOKENS[i] for i in SHUFFLE]])          # (2, T)
    with torch.inference_mode():
        memory, _ = model.encode(src)                                   # (2, T, d_model)
    a, b = memory[0].numpy(), memory[1].numpy()
    undone = np.empty_like(b)
    undone[list(SHUFFLE)] = b                                            # row j of b is token SHUFFLE[j]
    unit = lambda m: m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)  # noqa: E731
    return unit(a) @ unit(b).T, float(np.abs(undone - a).max()), float(np.abs(a).max())


def permutation_figure(pe: str):
    """The cosine similarity of permutation_check, rows and columns labelled with their tokens."""
    sim = permutation_check(pe)[0]
    tokens = [str(t) for t in TOKENS]
    fig = similarity_heatmap(sim, title=f"Encoder outputs: original vs shuffled (PE: {pe})", zmin=-1, zmax=1)
    fig.update_xaxes(ticktext=[tokens[i] for i in SHUFFLE], tickvals=list(range(len(tokens))),
                     title="shuffled input")
    fig.update_yaxes(ticktext=tokens, tickvals=list(range(len(tokens))), title="original input")
    return fig


@lru_cache(maxsize=2)
def task(preset: str) -> Task:
    """A task preset's examples, generated once (read only)."""
    return make_task(TASK_PRESETS[preset])


def offset_dots(d_model: int) -> dict[str, tuple[list, list]]:
    """PE(pos) · PE(pos + k) against k, one curve per starting pos in STARTS."""
    pe = sinusoidal_table(max(STARTS) + MAX_OFFSET + 1, d_model)        # (P, d_model)
    k = np.arange(MAX_OFFSET + 1)
    return {f"pos {p}": (k.tolist(), (pe[p + k] @ pe[p]).tolist()) for p in STARTS}


def offset_spread(d_model: int) -> tuple[float, float]:
    """(largest gap between the curves at one offset, the range of the dot products)."""
    curves = np.array([y for _, y in offset_dots(d_model).values()])  # (starts, offsets)
    return float((curves.max(0) - curves.min(0)).max()), float(curves.max() - curves.min())


@lru_cache(maxsize=8)
@single_threaded
def rope_scores(d_head: int, n_positions: int = MAX_OFFSET + max(STARTS) + 1, seed: int = 0) -> np.ndarray:
    """q_m · k_n for one random query and key, rotated to every pair of positions m, n (RoPE). (P, P)"""
    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, d_head, generator=gen, dtype=torch.float64)
    angles = torch.tensor(rope_angles(n_positions, d_head))              # (P, d_head/2)
    cos, sin = angles.cos(), angles.sin()
    q_rot = rope_rotate(q.expand(n_positions, d_head), cos, sin)         # (P, d_head)
    k_rot = rope_rotate(k.expand(n_positions, d_head), cos, sin)
    return (q_rot @ k_rot.T).numpy()


def rope_diagonal_spread(scores: np.ndarray) -> float:
    """Largest spread of q_m · k_n along any diagonal n - m = const: 0 when only m - n matters."""
    n = scores.shape[0]
    return float(max(np.ptp(np.diagonal(scores, offset)) for offset in range(-(n - 1), n)))


def learned_table_params(max_len: int, d_model: int) -> int:
    """What a learned table adds to one stack, read off param_count (learned minus sinusoidal)."""
    cfg = ModelConfig(arch="encoder", src_vocab_size=16, d_model=d_model, n_heads=1, n_encoder_layers=1,
                      max_len=max_len, n_classes=2)
    return param_count(cfg.replace(pos_encoding="learned"))["total"] - param_count(cfg)["total"]


@lru_cache(maxsize=8)
@single_threaded
def causal_check(changed: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Change the decoder's input token at position `changed`: (largest |Δ logit| at every position,
    the first layer's masked self-attention of head 0 (T, T), position labels)."""
    model = small_seq2seq()
    src = torch.tensor([TOKENS])
    tgt = [1, 4, 6, 10, 12, 11, 13]                                     # BOS then target tokens
    other = list(tgt)
    other[changed] = 15 if tgt[changed] != 15 else 14
    with torch.inference_mode(), capture(model, kinds=("dec_self",)) as cache:
        a = model(src, torch.tensor([tgt]))                              # (1, T, V)
    with torch.inference_mode():
        b = model(src, torch.tensor([other]))
    delta = (a - b).abs().amax(-1)[0].numpy()                           # (T,)
    pattern = cache.stacked("dec_self")[0, 0, 0].numpy()                # (T, T)
    return delta, pattern, [f"{i}" for i in range(len(tgt))]


def encoder_block_shares(d_model: int, d_ff: int) -> dict[str, int]:
    """The chapter's rule for one block without biases: attention 4·d², FFN 2·d·d_ff."""
    return {"attention": 4 * d_model * d_model, "feed-forward": 2 * d_model * d_ff}


def chapter_rule(n_layers: int, d_model: int, d_ff: int) -> int:
    """The chapter's total N(4d² + 2·d·d_ff)."""
    return n_layers * (4 * d_model ** 2 + 2 * d_model * d_ff)


RULE = "rule"   # N(4d² + 2·d·d_ff): the header stays short so the table fits its column
BLOCKS, CROSS, EMBEDDINGS = "self-attention and FFN, both stacks", "cross-attention", "embeddings and output"


def reference_table(rule: bool = False) -> pd.DataFrame:
    """The chapter's reference configurations with their parameters computed from the configs; N is the
    blocks of one stack (the chapter's N); d_ff is 4·d_model in every row, so it is left out.
    `rule` adds the rule of thumb's N(4d² + 2·d·d_ff)."""
    rows = []
    for p in REFERENCE_PRESETS.values():
        cfg = p.config
        n = cfg.n_encoder_layers if cfg.uses_encoder else cfg.n_decoder_layers
        row = {"model": p.name, "d_model": cfg.d_model, "N": n}
        if rule:
            row[RULE] = human(chapter_rule(n, cfg.d_model, cfg.d_ff))
        rows.append({**row, "total": human(param_count(cfg)["total"]), "chapter": p.seed_params or "—"})
    return pd.DataFrame(rows)


def base_parts() -> dict[str, int]:
    """Base's parameters split the way the rule counts (the blocks of both stacks) and what it leaves out."""
    story = param_story(REFERENCE_PRESETS["Base"].config)
    return {(BLOCKS if k == "self-attention and FFN blocks" else k): v for k, v in story.items()}


def base_cross_attention() -> int:
    cfg = REFERENCE_PRESETS["Base"].config
    return cfg.n_decoder_layers * attention_params(cfg.d_model)


# --- label smoothing: the chapter's formula, its code, and what this app's loss trains against ----------

def formula_row(k: int, target: int, eps: float) -> np.ndarray:
    """The chapter's formula as written: (1 - eps)·onehot + eps/K on every one of the K classes."""
    row = np.full(k, eps / k)
    row[target] += 1 - eps
    return row


def code_row(k: int, target: int, eps: float, pad: int = 0) -> np.ndarray:
    """The chapter's code: eps/(K - 2) everywhere, then the confidence 1 - eps on the target, 0 on pad."""
    row = np.full(k, eps / (k - 2))
    row[target] = 1 - eps
    row[pad] = 0.0
    return row


@single_threaded
def library_row(k: int, target: int, eps: float, pad: int = 0) -> np.ndarray:
    """The target explorer.losses trains against, measured: its loss is -Σ t_j log p_j, linear in log p,
    so K losses at K random logit rows give t by solving one linear system."""
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(k, k, generator=gen, dtype=torch.float64) * 3          # (K rows, K classes)
    logp = logits.log_softmax(-1)
    losses = torch.stack([label_smoothing_loss(logits[i:i + 1], torch.tensor([target]), eps, ignore_index=pad)
                          for i in range(k)])                                    # (K,)
    row = torch.linalg.solve(-logp, losses).numpy()
    return np.where(np.abs(row) < 1e-12, 0.0, row)                              # rounding, not mass


def smoothing_rows(k: int = 8, target: int = 3, eps: float = 0.1) -> dict[str, np.ndarray]:
    return {"chapter's formula": formula_row(k, target, eps), "chapter's code": code_row(k, target, eps),
            "this app's loss (measured)": library_row(k, target, eps)}


def smoothing_table(rows: dict[str, np.ndarray], target: int, pad: int = 0) -> pd.DataFrame:
    return pd.DataFrame([{"row": name, "target": float(r[target]), "padding": float(r[pad]),
                          "each other": float(np.delete(r, [target, pad]).mean()), "sum": float(r.sum())}
                         for name, r in rows.items()])
