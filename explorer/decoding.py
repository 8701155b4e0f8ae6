"""Turning a trained model's probabilities into sequences: greedy, beam search, LM continuation.

The encoder runs once; the decoder re-reads the whole growing prefix at every step. The models are
tiny, so this is simpler than a key/value cache and costs little.
"""

from __future__ import annotations

import contextlib

import torch
from torch import Tensor, nn

from explorer.tasks import BOS, EOS, PAD


@contextlib.contextmanager
def inference(model: nn.Module):
    """No dropout and no autograd while decoding; the model's mode is restored afterwards."""
    was = model.training
    model.eval()
    try:
        with torch.inference_mode():
            yield
    finally:
        model.train(was)


def _never(logp: Tensor) -> Tensor:
    """PAD and BOS are never a next token: an untrained model may rank them first, but the output
    must stay a sequence. Applied after the softmax, so scores remain the model's log-probabilities."""
    logp = logp.clone()
    logp[..., [PAD, BOS]] = float("-inf")
    return logp


def greedy(model: nn.Module, src: Tensor, max_len: int) -> Tensor:
    """Most likely token (never PAD or BOS) at each step. Returns (B, <= max_len) ids after BOS, PAD after EOS;
    stops early once every row has emitted EOS."""
    with inference(model):
        memory, src_mask = model.encode(src)                            # (B, S, d_model)
        ys = torch.full((src.size(0), 1), BOS, dtype=torch.long)        # (B, 1)
        done = torch.zeros(src.size(0), dtype=torch.bool)
        for _ in range(max_len):
            nxt = _never(model.decode(ys, memory, src_mask)[:, -1]).argmax(-1)  # (B,)
            nxt = nxt.masked_fill(done, PAD)
            ys = torch.cat([ys, nxt[:, None]], dim=1)
            done |= nxt == EOS
            if bool(done.all()):
                break
    return ys[:, 1:]


def _length_norm(lengths: Tensor, alpha: float) -> Tensor:
    """GNMT length penalty ((5 + |Y|) / 6) ** alpha; alpha = 0 ranks by total log-probability."""
    return ((5.0 + lengths.float()) / 6.0) ** alpha


def beam_search(model: nn.Module, src: Tensor, k: int = 4, max_len: int = 32,
                length_penalty: float = 0.0) -> tuple[Tensor, Tensor]:
    """Keep the k most probable prefixes per row (batched over rows and beams).

    Returns the best sequence per row (B, L) in greedy's format and its total log-probability (B,).
    With length_penalty alpha > 0 the finished beams are ranked by log-prob / ((5 + len) / 6) ** alpha.
    k = 1 is greedy decoding.
    """
    if k < 1:
        raise ValueError(f"k={k} must be a whole number >= 1")
    b = src.size(0)
    with inference(model):
        memory, src_mask = model.encode(src)                            # (B, S, d_model)
        memory = memory.repeat_interleave(k, dim=0)                     # (B*k, S, d_model)
        if src_mask is not None:
            src_mask = src_mask.repeat_interleave(k, dim=0)
        ys = torch.full((b * k, 1), BOS, dtype=torch.long)              # (B*k, 1)
        scores = torch.full((b, k), float("-inf"))
        scores[:, 0] = 0.0  # all beams start identical: expand only the first
        done = torch.zeros(b, k, dtype=torch.bool)
        for _ in range(max_len):
            logp = _never(model.decode(ys, memory, src_mask)[:, -1].log_softmax(-1))  # (B*k, V)
            v = logp.size(-1)
            logp = logp.view(b, k, v)
            # a finished beam may only append PAD, at no cost, so it keeps its score and its place
            pad_only = torch.full((v,), float("-inf"))
            pad_only[PAD] = 0.0
            logp = torch.where(done[..., None], pad_only, logp)
            cand = (scores[..., None] + logp).view(b, k * v)            # (B, k*V)
            scores, idx = cand.topk(k, dim=-1)                          # (B, k)
            beam, tok = idx // v, idx % v
            rows = (beam + torch.arange(b)[:, None] * k).view(-1)      # (B*k,) parent of each new beam
            ys = torch.cat([ys[rows], tok.view(-1, 1)], dim=1)
            done = done.gather(1, beam) | (tok == EOS) | scores.isneginf()  # -inf: a beam that never was
            if bool(done.all()):
                break
        seqs = ys[:, 1:].view(b, k, -1)                                 # (B, k, L)
        best = scores.argmax(-1)
        if length_penalty:
            lengths = (seqs != PAD).sum(-1).clamp_min(1)                # tokens up to and including EOS
            best = (scores / _length_norm(lengths, length_penalty)).argmax(-1)
        pick = torch.arange(b)
        return seqs[pick, best], scores[pick, best]


def sequence_logprob(model: nn.Module, src: Tensor, ids: Tensor) -> Tensor:
    """Total log-probability (B,) the model gives to ids (B, L) in greedy's format (PAD after EOS)."""
    tgt_in = torch.cat([torch.full_like(ids[:, :1], BOS), ids[:, :-1]], dim=1)   # (B, L)
    with inference(model):
        logp = model(src, tgt_in).log_softmax(-1).gather(-1, ids[..., None])[..., 0]  # (B, L)
    return logp.masked_fill(ids == PAD, 0.0).sum(-1)


def generate(model: nn.Module, prompt: Tensor, n_new: int, temperature: float = 0.0,
             generator: torch.Generator | None = None) -> Tensor:
    """Continue a DecoderLM's prompt (B, T) by n_new tokens: argmax at temperature 0, else sampled
    from softmax(logits / temperature). Returns only the new tokens (B, n_new). The model sees at
    most its last max_len tokens."""
    if temperature < 0:
        raise ValueError(f"temperature={temperature} must be >= 0 (0 = always the most likely token)")
    window = model.cfg.max_len
    tokens = prompt
    with inference(model):
        for _ in range(n_new):
            logits = _never(model(tokens[:, -window:])[:, -1])          # (B, V)
            if temperature == 0:
                nxt = logits.argmax(-1, keepdim=True)
            else:
                probs = (logits / temperature).softmax(-1)
                nxt = torch.multinomial(probs, 1, generator=generator)  # (B, 1)
            tokens = torch.cat([tokens, nxt], dim=1)
    return tokens[:, prompt.size(1):]


def strip(ids) -> list[int]:
    """Token ids up to (not including) the first EOS, without PAD and BOS."""
    out = []
    for t in (ids.tolist() if isinstance(ids, Tensor) else ids):
        t = int(t)
        if t == EOS:
            break
        if t not in (PAD, BOS):
            out.append(t)
    return out


__all__ = ["inference", "greedy", "beam_search", "sequence_logprob", "generate", "strip"]
