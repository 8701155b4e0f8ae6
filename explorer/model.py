"""The Transformer: attention, Pre-LN/Post-LN blocks, and three models built from one ModelConfig.

Internals are exposed through `HookPoint`s (identity modules) rather than extra return values:
`explorer.inspect.capture` registers forward hooks on them. Attention always computes its softmax
explicitly, with the heads folded into the batch of one `baddbmm` and one `bmm`: at this app's sizes
(T ~ 20, d_head 16) that trains faster on a CPU than PyTorch's fused `scaled_dot_product_attention`,
whose kernel works block by block per (row, head) (bench/README.md has the figures), and a capture
reads the very pattern the model used.
In training (`EncoderDecoder.forward`) a padded batch runs its position-wise layers on the real tokens
only (`Packing`); every real position gets what it gets alone, unpadded (a test checks that too).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from explorer.config import ModelConfig
from explorer.packing import Packing, from_heads, pack_if, to_heads, unpack_if
from explorer.positional import make_positional

# Why scores are divided by sqrt(d_k): q·k of unit-variance entries has variance d_k (chapter §2.1);
# "none" leaves them unscaled, the ablation of the `attn-scale` experiment.
ATTN_SCALE = {"sqrt_d_k": lambda d_head: 1 / math.sqrt(d_head), "none": lambda d_head: 1.0}


class HookPoint(nn.Identity):
    """Identity whose output a capture can record; `active` is True while a hook listens."""

    @property
    def active(self) -> bool:
        return bool(self._forward_hooks)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with the parameter layout of `nn.MultiheadAttention`
    (packed `in_proj_weight`, `out_proj`), so weights copy across one to one."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d = cfg.d_model
        self.n_heads, self.d_head, self.dropout = cfg.n_heads, cfg.d_head, cfg.dropout
        self.scale = ATTN_SCALE[cfg.attn_scale](cfg.d_head)            # multiplies q k^T
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d, d))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * d))
        self.out_proj = nn.Linear(d, d)
        self.hook_pattern = HookPoint()                                 # (B, H, Tq, Tk)

    def forward(self, x: Tensor, memory: Tensor | None = None, mask: Tensor | None = None,
                causal: bool = False, pos=None, packing: Packing | None = None,
                mem_packing: Packing | None = None) -> Tensor:
        """x: queries (B, Tq, d_model); memory: keys/values source, None for self-attention.
        mask: bool, True where attention is allowed, broadcastable to (B, H, Tq, Tk).
        pos: the stack's positional encoding (rotates q and k, biases the scores); None: neither.
        packing / mem_packing: x / memory hold only the real tokens (N, d_model) of a padded batch;
        the projections run on those rows, attention on the padded layout."""
        d = x.size(-1)
        w, bias = self.in_proj_weight, self.in_proj_bias
        if memory is None:   # one matmul for q, k, v
            q, k, v = to_heads(packing, F.linear(x, w, bias), 3, self.n_heads)
        else:                # cross-attention: q from the decoder, k and v from the encoder
            q = to_heads(packing, F.linear(x, w[:d], bias[:d]), 1, self.n_heads)[0]
            k, v = to_heads(mem_packing, F.linear(memory, w[d:], bias[d:]), 2, self.n_heads)
        bias = _bias(mask, causal, q, k)
        if pos is not None:
            q, k = pos.rotate(q), pos.rotate(k)
            bias = _with_position(bias, pos.bias(q.size(-2), k.size(-2)))
        out = self._attend(q, k, v, bias)                               # (B, H, Tq, d_head)
        return self.out_proj(from_heads(packing, out))

    def _attend(self, q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None) -> Tensor:
        """softmax(scale * q k^T + bias) v, scale 1/sqrt(d_head) by default; q (B, H, Tq, d_head),
        k and v (B, H, Tk, d_head)."""
        b, h, tq, dh = q.shape
        tk = k.size(-2)
        q, k, v = (x.reshape(b * h, -1, dh) for x in (q, k, v))        # heads folded into the batch
        if bias is None:
            scores = torch.bmm(q, k.transpose(1, 2)) * self.scale
        else:  # a (Tq, Tk) bias broadcasts as it is; a per-row one is laid out per (row, head), its
            # query axis left at 1 when it masks keys only (padding): baddbmm broadcasts it over queries
            if bias.dim() == 4:
                bias = bias.expand(b, h, -1, tk).reshape(b * h, -1, tk)
            scores = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=self.scale)
        pattern = self.hook_pattern(scores.softmax(dim=-1).view(b, h, tq, tk))
        pattern = F.dropout(pattern, self.dropout, self.training).view(b * h, tq, tk)
        return torch.bmm(pattern, v).view(b, h, tq, dh)                 # (B, H, Tq, d_head)


def _bias(mask: Tensor | None, causal: bool, q: Tensor, k: Tensor) -> Tensor | None:
    """What may be attended as an additive bias: 0 where `mask` (True = allowed) and, if causal, the
    lower triangle (query i sees keys 0..i) allow it, -inf elsewhere; None when everything is allowed."""
    allowed = mask
    if causal:
        tril = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool, device=q.device).tril()
        allowed = tril if mask is None else mask & tril
    if allowed is None:
        return None
    return torch.zeros(allowed.shape, dtype=q.dtype, device=q.device).masked_fill_(~allowed, float("-inf"))


def _with_position(bias: Tensor | None, position: Tensor | None) -> Tensor | None:
    """The mask's bias plus a positional one (H, Tq, Tk), laid out as (B or 1, H, Tq, Tk) for `_attend`."""
    if position is None:
        return bias
    position = position[None]                                           # (1, H, Tq, Tk)
    return position if bias is None else bias + position


def _swiglu(h: Tensor) -> Tensor:
    value, gate = h.chunk(2, dim=-1)
    return F.silu(gate) * value


ACTIVATION = {"relu": F.relu, "gelu": F.gelu, "swiglu": _swiglu}


class FeedForward(nn.Module):
    """Position-wise FFN: linear2(dropout(act(linear1(x)))); SwiGLU packs gate and value in linear1."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        width = 2 * cfg.d_ff if cfg.activation == "swiglu" else cfg.d_ff
        self.linear1 = nn.Linear(cfg.d_model, width)
        self.linear2 = nn.Linear(cfg.d_ff, cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)
        self.act = ACTIVATION[cfg.activation]

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.act(self.linear1(x))))


# Where LayerNorm sits around a sublayer f (the two placements the chapter compares), keyed by
# (norm, residual); residual "none" drops the x + (the ablation of the `residuals` experiment).
RESIDUAL = {
    ("pre", "add"): lambda x, f, norm: x + f(norm(x)),    # x + Sublayer(LayerNorm(x))
    ("post", "add"): lambda x, f, norm: norm(x + f(x)),   # LayerNorm(x + Sublayer(x))
    ("pre", "none"): lambda x, f, norm: f(norm(x)),       # Sublayer(LayerNorm(x))
    ("post", "none"): lambda x, f, norm: norm(f(x)),      # LayerNorm(Sublayer(x))
}


class EncoderBlock(nn.Module):
    """Self-attention then FFN, each wrapped in Add&Norm (pre or post; no Add with residual "none")."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg)
        self.ffn = FeedForward(cfg)
        self.norm1, self.norm2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)
        self.residual = RESIDUAL[cfg.norm, cfg.residual]
        self.hook_resid = HookPoint()                                   # (B, T, d_model)

    def forward(self, x: Tensor, mask: Tensor | None = None, pos=None, causal: bool = False,
                packing: Packing | None = None) -> Tensor:
        def attend(h):
            return self.dropout(self.self_attn(h, mask=mask, causal=causal, pos=pos, packing=packing))
        x = self.residual(x, attend, self.norm1)
        x = self.residual(x, lambda h: self.dropout(self.ffn(h)), self.norm2)
        return _record(self.hook_resid, x, packing)


class DecoderBlock(nn.Module):
    """Masked self-attention, cross-attention over the encoder output (absent in a decoder-only
    language model), then FFN; each wrapped in Add&Norm."""

    def __init__(self, cfg: ModelConfig, cross: bool = True) -> None:
        super().__init__()
        d = cfg.d_model
        self.self_attn = MultiHeadAttention(cfg)
        self.cross_attn = MultiHeadAttention(cfg) if cross else None
        self.ffn = FeedForward(cfg)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.norm3 = nn.LayerNorm(d) if cross else None
        self.dropout = nn.Dropout(cfg.dropout)
        self.residual = RESIDUAL[cfg.norm, cfg.residual]
        self.hook_resid = HookPoint()                                   # (B, T, d_model)

    def forward(self, x: Tensor, memory: Tensor | None = None, tgt_mask: Tensor | None = None,
                src_mask: Tensor | None = None, pos=None, packing: Packing | None = None,
                mem_packing: Packing | None = None) -> Tensor:
        def attend(h):
            return self.dropout(self.self_attn(h, mask=tgt_mask, causal=True, pos=pos, packing=packing))
        x = self.residual(x, attend, self.norm1)
        if self.cross_attn is not None:
            def cross(h):
                return self.dropout(self.cross_attn(h, memory, mask=src_mask, packing=packing,
                                                    mem_packing=mem_packing))
            x = self.residual(x, cross, self.norm2)
        last = self.norm3 if self.cross_attn is not None else self.norm2
        x = self.residual(x, lambda h: self.dropout(self.ffn(h)), last)
        return _record(self.hook_resid, x, packing)


def padding_mask(tokens: Tensor, pad_idx: int) -> Tensor | None:
    """(B, 1, 1, T) bool, True at real tokens; None when nothing is padded (the fastest path)."""
    keep = tokens != pad_idx
    return None if bool(keep.all()) else keep[:, None, None, :]


def _record(hook: HookPoint, x: Tensor, packing: Packing | None) -> Tensor:
    """Pass x through a hook point; a capture records the padded (B, T, d_model) layout."""
    if packing is None:
        return hook(x)
    if hook.active:
        hook(packing.unpack(x))
    return x


class Stack(nn.Module):
    """Embedding, positional encoding, N blocks and (for Pre-LN) the final LayerNorm."""

    def __init__(self, cfg: ModelConfig, vocab_size: int, n_layers: int, block) -> None:
        super().__init__()
        d = cfg.d_model
        self.embed = nn.Embedding(vocab_size, d, padding_idx=cfg.pad_idx) if vocab_size else None
        self.scale = math.sqrt(d)  # embeddings are scaled by sqrt(d_model) as in the paper
        self.pos = make_positional(cfg)
        self.dropout = nn.Dropout(cfg.dropout)
        self.layers = nn.ModuleList(block() for _ in range(n_layers))
        self.final_norm = nn.LayerNorm(d) if cfg.norm == "pre" else nn.Identity()

    def embed_inputs(self, x: Tensor) -> Tensor:
        if self.embed is not None:
            x = self.embed(x) * self.scale                              # (B, T, d_model)
        return self.dropout(self.pos(x))


def init_weights(model: nn.Module, pad_idx: int) -> None:
    """Xavier-uniform for every matrix, as in the chapter; padding embeddings start at zero."""
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Embedding) and m.padding_idx is not None:
                m.weight[m.padding_idx].zero_()


class EncoderDecoder(nn.Module):
    """Sequence-to-sequence Transformer trained with teacher forcing."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.encoder = Stack(cfg, cfg.src_vocab_size, cfg.n_encoder_layers, lambda: EncoderBlock(cfg))
        self.decoder = Stack(cfg, cfg.tgt_vocab_size, cfg.n_decoder_layers, lambda: DecoderBlock(cfg))
        self.output_proj = nn.Linear(cfg.d_model, cfg.tgt_vocab_size)
        init_weights(self, cfg.pad_idx)
        if cfg.tie_embeddings:
            self.output_proj.weight = self.decoder.embed.weight
        if cfg.shares_src_tgt_embedding:
            self.encoder.embed = self.decoder.embed

    def encode(self, src: Tensor, packed: bool = False) -> tuple[Tensor, Tensor | None]:
        """(memory (B, S, d_model), source mask); packed: memory holds the real tokens only (N, d_model)."""
        mask = padding_mask(src, self.cfg.pad_idx)                      # (B, 1, 1, S)
        packing = Packing(mask) if packed and mask is not None else None
        x = pack_if(packing, self.encoder.embed_inputs(src))
        for layer in self.encoder.layers:
            x = layer(x, mask, self.encoder.pos, packing=packing)
        return self.encoder.final_norm(x), mask

    def decode(self, tgt_in: Tensor, memory: Tensor, src_mask: Tensor | None, packed: bool = False) -> Tensor:
        """Logits (B, T, tgt_vocab). packed: memory came from encode(..., packed=True), and the target's
        pads are left out too (their logits are 0)."""
        # No padding mask on the target: pads sit at the end of a row, so under the causal mask a
        # real query never sees a pad key, and what pad queries compute is never read (the loss
        # ignores them). The causal mask alone is one (T, T) bias shared by the whole batch.
        tgt_mask = padding_mask(tgt_in, self.cfg.pad_idx) if packed else None
        packing = Packing(tgt_mask) if tgt_mask is not None else None
        mem_packing = Packing(src_mask) if packed and src_mask is not None else None
        x = pack_if(packing, self.decoder.embed_inputs(tgt_in))
        for layer in self.decoder.layers:
            x = layer(x, memory, src_mask=src_mask, pos=self.decoder.pos, packing=packing,
                      mem_packing=mem_packing)
        return unpack_if(packing, self.output_proj(self.decoder.final_norm(x)))

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        memory, src_mask = self.encode(src, packed=True)
        return self.decode(tgt_in, memory, src_mask, packed=True)


class EncoderClassifier(nn.Module):
    """Encoder, mean-pooled over real tokens, then a linear classifier (order detection)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.encoder = Stack(cfg, cfg.src_vocab_size, cfg.n_encoder_layers, lambda: EncoderBlock(cfg))
        self.classifier = nn.Linear(cfg.d_model, cfg.n_classes)
        init_weights(self, cfg.pad_idx)

    def forward(self, src: Tensor) -> Tensor:
        """src: token ids (B, S), or vectors (B, S, d_model) when src_vocab_size == 0."""
        mask = padding_mask(src, self.cfg.pad_idx) if self.encoder.embed is not None else None
        x = self.encoder.embed_inputs(src)
        for layer in self.encoder.layers:
            x = layer(x, mask, self.encoder.pos)
        x = self.encoder.final_norm(x)                                  # (B, S, d_model)
        if mask is None:
            pooled = x.mean(dim=1)
        else:
            keep = mask[:, 0, 0, :, None].to(x.dtype)                   # (B, S, 1)
            pooled = (x * keep).sum(1) / keep.sum(1)
        return self.classifier(pooled)                                  # (B, n_classes)


class DecoderLM(nn.Module):
    """Decoder-only language model: causal self-attention blocks and an output projection."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.decoder = Stack(cfg, cfg.tgt_vocab_size, cfg.n_decoder_layers,
                             lambda: DecoderBlock(cfg, cross=False))
        self.output_proj = nn.Linear(cfg.d_model, cfg.tgt_vocab_size)
        init_weights(self, cfg.pad_idx)
        if cfg.tie_embeddings:
            self.output_proj.weight = self.decoder.embed.weight

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.decoder.embed_inputs(tokens)   # no padding mask: see EncoderDecoder.decode
        for layer in self.decoder.layers:
            x = layer(x, pos=self.decoder.pos)
        return self.output_proj(self.decoder.final_norm(x))             # (B, T, vocab)


MODELS = {"encoder-decoder": EncoderDecoder, "encoder": EncoderClassifier, "decoder": DecoderLM}


def build_model(cfg: ModelConfig, seed: int | None = None) -> nn.Module:
    """A fresh model for cfg; with a seed, its initial weights are reproducible."""
    if seed is None:
        return MODELS[cfg.arch](cfg)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return MODELS[cfg.arch](cfg)
