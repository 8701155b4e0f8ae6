"""Reference seq2seq models the benchmarks compare against, with the same sizes as explorer's.

`TorchTransformer` wraps `torch.nn.Transformer` with embeddings, sinusoidal PE and an output head;
`TextbookTransformer` is the straightforward way a course writes it: separate Q/K/V/O projections,
an explicit softmax, boolean masks. Both are Pre-LN, like explorer's default.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from explorer.positional import sinusoidal_table


class _Embed(nn.Module):
    def __init__(self, vocab: int, d_model: int, max_len: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=0)
        self.register_buffer("pe", torch.tensor(sinusoidal_table(max_len, d_model), dtype=torch.float32))
        self.scale = math.sqrt(d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.embed(x) * self.scale + self.pe[: x.size(1)]


class TorchTransformer(nn.Module):
    def __init__(self, vocab, d_model, n_heads, n_layers, d_ff, max_len=64) -> None:
        super().__init__()
        self.src_embed = _Embed(vocab, d_model, max_len)
        self.tgt_embed = _Embed(vocab, d_model, max_len)
        self.transformer = nn.Transformer(d_model, n_heads, n_layers, n_layers, d_ff, dropout=0.0,
                                          batch_first=True, norm_first=True)
        self.out = nn.Linear(d_model, vocab)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        src_pad, tgt_pad = src == 0, tgt == 0
        h = self.transformer(self.src_embed(src), self.tgt_embed(tgt), tgt_mask=causal, tgt_is_causal=True,
                             src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                             memory_key_padding_mask=src_pad)
        return self.out(h)


class _Attention(nn.Module):
    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.h, self.dk = n_heads, d_model // n_heads
        self.q, self.k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v, self.o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def _split(self, x: Tensor) -> Tensor:
        return x.view(x.size(0), x.size(1), self.h, self.dk).transpose(1, 2)

    def forward(self, x: Tensor, kv: Tensor, mask: Tensor) -> Tensor:
        q, k, v = self._split(self.q(x)), self._split(self.k(kv)), self._split(self.v(kv))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.dk)
        weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)
        out = (weights @ v).transpose(1, 2).reshape(x.size(0), x.size(1), -1)
        return self.o(out)


class _Block(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, cross: bool) -> None:
        super().__init__()
        self.attn = _Attention(d_model, n_heads)
        self.cross = _Attention(d_model, n_heads) if cross else None
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(3 if cross else 2))

    def forward(self, x, mask, memory=None, memory_mask=None):
        h = self.norms[0](x)
        x = x + self.attn(h, h, mask)
        if self.cross is not None:
            x = x + self.cross(self.norms[1](x), memory, memory_mask)
        return x + self.ff(self.norms[-1](x))


class TextbookTransformer(nn.Module):
    def __init__(self, vocab, d_model, n_heads, n_layers, d_ff, max_len=64) -> None:
        super().__init__()
        self.src_embed = _Embed(vocab, d_model, max_len)
        self.tgt_embed = _Embed(vocab, d_model, max_len)
        self.enc = nn.ModuleList(_Block(d_model, n_heads, d_ff, False) for _ in range(n_layers))
        self.dec = nn.ModuleList(_Block(d_model, n_heads, d_ff, True) for _ in range(n_layers))
        self.enc_norm, self.dec_norm = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.out = nn.Linear(d_model, vocab)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        src_mask = (src != 0)[:, None, None, :]                                     # (B, 1, 1, S)
        t = tgt.size(1)
        tgt_mask = (tgt != 0)[:, None, None, :] & torch.ones(t, t, dtype=torch.bool).tril()
        x = self.src_embed(src)
        for block in self.enc:
            x = block(x, src_mask)
        memory = self.enc_norm(x)
        y = self.tgt_embed(tgt)
        for block in self.dec:
            y = block(y, tgt_mask, memory, src_mask)
        return self.out(self.dec_norm(y))


def seq2seq_loss(logits: Tensor, target: Tensor) -> Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1), ignore_index=0)
