"""What the Attention and Outputs pages show, computed from a model and one input.

Pure functions: plain ids in, numpy arrays and frozen records out; no Streamlit, no training.
The pages cache them keyed on `fingerprint(model)`. Every function runs a private copy of the model
on one thread, so forward hooks and mode switches never touch a model other sessions (or a training
job) share.

Conventions: for a sequence-to-sequence model the decoder reads `decoder_input(...)`: BOS followed by
either its own greedy output (what it actually says) or the correct target (teacher forcing); query
row t of every decoder pattern is the step that writes output token t.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from explorer.decoding import beam_search, generate, greedy, sequence_logprob
from explorer.inspect import capture
from explorer.tasks import BOS, EOS, PAD, Task

PAD_LABEL = "<pad>"
EXPECTED = "the task's expected pattern"
REFERENCES = (EXPECTED, "same position", "previous position", "first position")  # see reference_patterns


@contextmanager
def _one_thread() -> Iterator[None]:
    """These models are tiny: one thread runs them fastest, and leaves the other cores to training
    jobs and other sessions (two threads on a busy machine can be ten times slower). The setting
    is per OS thread, so it is restored for whoever runs next on this one."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def single_threaded(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with _one_thread():
            return fn(*args, **kwargs)
    return run


def _private(model: nn.Module) -> nn.Module:
    """A copy in eval mode: hooks, mode switches and a training job elsewhere never meet."""
    return copy.deepcopy(model).eval()


# ------------------------------------------------------------------------------------ inputs
def takes_vectors(task: Task) -> bool:
    """True for a task that feeds vectors (order-vectors): nothing to type, nothing to pad."""
    return task.val.src is not None and task.val.src.dim() == 3


def read_input(task: Task, text: str) -> tuple[int, ...]:
    """Typed text -> token ids. Raises ValueError whose message says what is valid, and nothing else."""
    if not isinstance(text, str):
        raise ValueError(f"the input must be text, not {type(text).__name__}")
    return tuple(int(i) for i in task.encode(text))


def solution(task: Task, src) -> tuple[int, ...]:
    """The correct output for src: the target (seq2seq), (label,) (classifier), or the characters
    that follow in the task's text (LM; empty when the text does not contain src)."""
    try:
        return tuple(int(i) for i in task.solve(src))
    except ValueError:
        return ()


def text_of(task: Task, src) -> str:
    """src as a user would type it (for prefilling the text box); '' for vector inputs."""
    if task.kind == "lm":
        return "".join(task.tokens(src))
    return "" if takes_vectors(task) else " ".join(task.tokens(src))


def _src_tensor(task: Task, src) -> torch.Tensor:
    dtype = torch.float32 if takes_vectors(task) else torch.long
    return torch.tensor([list(src)], dtype=dtype)                           # (1, S) or (1, S, dim)


def _padded(ids, length: int) -> list[int]:
    return list(ids) + [PAD] * max(0, length - len(ids))


# ---------------------------------------------------------------------------------- decoding
@single_threaded
def greedy_output(model: nn.Module, task: Task, src) -> tuple[int, ...]:
    """The tokens a seq2seq model writes for src, up to and including EOS (if it emits one)."""
    out = greedy(_private(model), _src_tensor(task, src), max_len=task.max_tgt_len)[0].tolist()
    return tuple(out[:out.index(EOS) + 1] if EOS in out else out)


def decoder_input(model: nn.Module, task: Task, src, teacher: bool) -> tuple[int, ...]:
    """BOS + target (teacher forcing), or BOS + the model's own greedy output minus its last token."""
    if teacher:
        return (BOS, *solution(task, src))
    return (BOS, *greedy_output(model, task, src)[:-1])


@dataclass(frozen=True)
class Decoded:
    """Greedy and beam search side by side; ids stop before EOS, logprob is the whole sequence's."""

    greedy: tuple[int, ...]
    greedy_logprob: float
    greedy_done: bool          # emitted EOS within the length limit
    beam: tuple[int, ...]
    beam_logprob: float
    beam_done: bool
    k: int


def _until_eos(ids: list[int]) -> tuple[tuple[int, ...], bool]:
    return (tuple(ids[:ids.index(EOS)]), True) if EOS in ids else (tuple(i for i in ids if i != PAD), False)


@single_threaded
def decode_both(model: nn.Module, task: Task, src, k: int = 4, length_penalty: float = 0.0) -> Decoded:
    x, model = _src_tensor(task, src), _private(model)
    g = greedy(model, x, max_len=task.max_tgt_len)                     # (1, <= max_tgt_len)
    b, b_logp = beam_search(model, x, k=k, max_len=task.max_tgt_len, length_penalty=length_penalty)
    g_ids, g_done = _until_eos(g[0].tolist())
    b_ids, b_done = _until_eos(b[0].tolist())
    g_logp = float(sequence_logprob(model, x, g)[0])
    return Decoded(g_ids, g_logp, g_done, b_ids, float(b_logp[0]), b_done, k)


@single_threaded
def continue_text(model: nn.Module, ids, n_new: int, temperature: float = 0.0, seed: int = 0) -> tuple[int, ...]:
    """A decoder LM's next n_new tokens after ids: greedy at temperature 0, else sampled (seeded)."""
    gen = torch.Generator().manual_seed(seed)
    out = generate(_private(model), torch.tensor([list(ids)]), n_new, temperature=temperature, generator=gen)
    return tuple(out[0].tolist())


# --------------------------------------------------------------------------------- attention
@dataclass(frozen=True)
class AttentionView:
    """Every attention pattern of one forward pass, with what the pages draw around them.

    Per kind ("enc_self", "dec_self", "cross"): patterns (L, H, Q, K), token labels of the query and
    key axes, mask (Q, K) True where attention is allowed (causal and padding), real_q (Q,) True for
    query rows that are real tokens, and (where the task defines one) the expected pattern (Q, K).
    """

    patterns: dict[str, np.ndarray]
    q_labels: dict[str, tuple[str, ...]]
    k_labels: dict[str, tuple[str, ...]]
    masks: dict[str, np.ndarray]
    real_q: dict[str, np.ndarray]
    expected: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.patterns)


def _sides(task: Task, src, tgt_in, pad: bool) -> tuple[list, int, list, int]:
    """(encoder input, its real length, decoder input, its real length); an LM's text is its
    decoder input. With pad, each is padded to the task's longest, as in a training batch."""
    enc, dec = ([], list(src)) if task.kind == "lm" else (list(src), list(tgt_in or ()))
    n_enc, n_dec = len(enc), len(dec)
    if pad and task.kind != "lm" and not takes_vectors(task):
        enc = _padded(enc, task.max_src_len)
        if task.kind == "seq2seq":
            dec = _padded(dec, task.max_tgt_len)
    return enc, n_enc, dec, n_dec


def _labels(task: Task, ids: list, n_real: int) -> tuple[str, ...]:
    shown = task.position_labels(ids[:n_real]) if n_real else []
    return tuple(str(t) for t in shown) + (PAD_LABEL,) * (len(ids) - n_real)


def _fit(pattern: np.ndarray, q: int, k: int) -> np.ndarray:
    """Crop or zero-pad an expected pattern to (q, k)."""
    out = np.zeros((q, k))
    rows, cols = min(q, pattern.shape[0]), min(k, pattern.shape[1])
    out[:rows, :cols] = pattern[:rows, :cols]
    return out


@single_threaded
def attention_for(model: nn.Module, task: Task, src, tgt_in=None, pad: bool = False) -> AttentionView:
    """Run src (and tgt_in for seq2seq) through a private copy of the model and record every
    attention pattern. With pad=True the sequences are padded with PAD to the task's longest, as
    in a training batch, so the padding mask shows."""
    model = _private(model)
    enc, n_enc, dec, n_dec = _sides(task, src, tgt_in, pad)
    with torch.inference_mode(), capture(model) as cache:
        if task.kind == "seq2seq":
            model(_src_tensor(task, enc), torch.tensor([dec]))
        elif task.kind == "classify":
            model(_src_tensor(task, enc))
        else:
            model(torch.tensor([dec]))
    patterns = {k: cache.stacked(k)[:, 0].float().numpy() for k in cache.attention}  # (L, H, Q, K)
    enc_side = (_labels(task, enc, n_enc), np.arange(len(enc)) < n_enc)  # labels, real positions
    dec_side = (_labels(task, dec, n_dec), np.arange(len(dec)) < n_dec)
    axes = {"enc_self": (enc_side, enc_side), "dec_self": (dec_side, dec_side), "cross": (dec_side, enc_side)}
    q_labels, k_labels, masks, real_q, expected = {}, {}, {}, {}, {}
    for kind in patterns:
        (q_lab, q_real), (k_lab, k_real) = axes[kind]
        mask = np.broadcast_to(k_real[None, :], (len(q_lab), len(k_lab))).copy()  # padding: no key
        if kind == "dec_self":
            mask &= np.tri(len(q_lab), len(k_lab), dtype=bool)                       # causal: no future
        q_labels[kind], k_labels[kind], masks[kind], real_q[kind] = q_lab, k_lab, mask, q_real
        # The decoder's self-attention uses the causal mask only (see model.EncoderDecoder.decode): a pad
        # query then spreads weight over earlier pads. Nothing reads those rows; shown renormalised over
        # the allowed keys, which is exactly the softmax with the padding mask (rows of real queries
        # are unchanged: they never reach a pad).
        kept = np.where(mask, patterns[kind], 0.0)
        total = kept.sum(-1, keepdims=True)
        patterns[kind] = np.divide(kept, total, out=kept, where=total > 0).astype(patterns[kind].dtype)
    want = task.expected_cross_attention(enc[:n_enc]) if "cross" in patterns else None
    if want is not None:
        expected["cross"] = _fit(np.asarray(want, dtype=float), len(dec), len(enc))
    return AttentionView(patterns, q_labels, k_labels, masks, real_q, expected)


def reference_patterns(view: AttentionView, kind: str) -> dict[str, np.ndarray]:
    """Patterns to compare heads with: the task's expected one (if any), then generic ones that
    heads often learn (each query on its own position, on the previous one, on the first one)."""
    q, k = view.masks[kind].shape
    first = np.zeros((q, k))
    first[:, 0] = 1.0
    refs = {EXPECTED: view.expected.get(kind), "same position": np.eye(q, k),
            "previous position": np.eye(q, k, -1), "first position": first}
    refs = {name: refs[name] for name in REFERENCES if refs[name] is not None}
    return {name: np.where(view.masks[kind] & view.real_q[kind][:, None], p, 0.0) for name, p in refs.items()}


def match_scores(patterns: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """How well each head follows `expected`: the attention weight that lands on the expected cells,
    averaged over the query rows that expect something. (L, H, Q, K) x (Q, K) -> (L, H) in 0..1,
    1.0 = perfect alignment; NaN when no row expects anything."""
    want = np.asarray(expected) > 0.5                                   # (Q, K)
    rows = want.any(axis=1)
    if not rows.any():
        return np.full(patterns.shape[:2], np.nan)
    on_cells = (np.asarray(patterns) * want).sum(-1)                    # (L, H, Q)
    return on_cells[..., rows].mean(-1)


def best_head(scores: np.ndarray) -> tuple[int, int, float] | None:
    """(layer, head, score) of the highest match score; None when every score is NaN."""
    if np.isnan(scores).all():
        return None
    layer, head = np.unravel_index(int(np.nanargmax(scores)), scores.shape)
    return int(layer), int(head), float(scores[layer, head])


def head_entropy(patterns: np.ndarray, real_q: np.ndarray) -> np.ndarray:
    """Mean entropy (nats) of each head's attention rows over the real query rows: (L, H, Q, K) -> (L, H).
    0 = every query looks at exactly one key; log(#keys) = spread evenly."""
    p = np.asarray(patterns, dtype=float)
    rows = -(p * np.log(np.clip(p, 1e-12, None))).sum(-1)               # (L, H, Q)
    return rows[..., np.asarray(real_q, dtype=bool)].mean(-1)


def uniform_entropy(mask: np.ndarray, real_q: np.ndarray) -> float:
    """The entropy a head would have if every real query spread its weight evenly over the keys it may see."""
    allowed = np.asarray(mask)[np.asarray(real_q, dtype=bool)].sum(-1)
    return float(np.log(np.clip(allowed, 1, None)).mean())


def masked_for_mosaic(patterns: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Masked cells become NaN so the mosaic leaves them blank: the causal triangle and the padding
    columns then show in every tile."""
    return np.where(np.asarray(mask, dtype=bool), patterns, np.nan)


# ----------------------------------------------------------------------------------- outputs
@single_threaded
def output_distribution(model: nn.Module, task: Task, src, tgt_in=None) -> np.ndarray:
    """Softmax of the model's output: (T, V) for seq2seq (one row per decoder input position) and
    LM (one row per character: the next one), (1, n_classes) for a classifier."""
    model = _private(model)
    with torch.inference_mode():
        if task.kind == "seq2seq":
            logits = model(_src_tensor(task, src), torch.tensor([list(tgt_in)]))[0]   # (T, V)
        elif task.kind == "classify":
            logits = model(_src_tensor(task, src))                                     # (1, n_classes)
        else:
            logits = model(torch.tensor([list(src)]))[0]                               # (T, V)
    return logits.float().softmax(-1).numpy()


def row_entropy(probs: np.ndarray) -> np.ndarray:
    """Entropy (nats) of each row of a probability table (T, V) -> (T,)."""
    p = np.asarray(probs, dtype=float)
    return -(p * np.log(np.clip(p, 1e-12, None))).sum(-1)


def fingerprint(model: nn.Module) -> str:
    """A short digest of the model's weights, for cache keys: a model trained further gets a new one."""
    h = hashlib.sha1()
    with torch.no_grad():
        for name, p in model.state_dict().items():
            h.update(name.encode())
            h.update(np.float64(p.double().sum()).tobytes())
            h.update(np.float64(p.double().abs().sum()).tobytes())
    return h.hexdigest()[:12]


__all__ = ["AttentionView", "Decoded", "EXPECTED", "PAD_LABEL", "REFERENCES", "attention_for", "best_head",
           "continue_text", "decode_both", "decoder_input", "fingerprint", "greedy_output", "head_entropy",
           "masked_for_mosaic", "match_scores", "output_distribution", "read_input", "reference_patterns",
           "row_entropy", "solution", "takes_vectors", "text_of", "uniform_entropy"]
