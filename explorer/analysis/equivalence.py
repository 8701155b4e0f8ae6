"""Our modules against PyTorch's own, and what the chapter's initialisation changes.

    check = attention_check(cfg)   # ours against nn.MultiheadAttention, our weights copied into it
    check.max_diff                 # max |ours - theirs| on one seeded random input; None: no counterpart
    check.reason                   # why PyTorch has no module for this config (RoPE, SwiGLU), else None
    block_check(cfg)               # the config's self-attention block against nn.TransformerEncoderLayer
    study = init_study(cfg)        # Xavier uniform (the chapter) against PyTorch's defaults
    study.grad["Xavier uniform"]   # (L,) gradient norm of each block after one backward pass

Both checks run in eval mode (dropout off) on a small batch; the notebook makes the same two checks.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from explorer.analysis.views import single_threaded
from explorer.config import ModelConfig
from explorer.inspect import grad_groups, grad_norms
from explorer.model import DecoderBlock, EncoderBlock, MultiHeadAttention, build_model, init_weights

TOL = 1e-5  # float32 rounding over a few matmuls and a LayerNorm stays orders of magnitude below


def from_torch(state: dict) -> dict:
    """A state dict of nn.Transformer*Layer under our names: linear1/linear2 sit in .ffn, and
    nn.TransformerDecoderLayer's multihead_attn is our cross_attn."""
    return {("ffn." + k if k.startswith("linear") else k.replace("multihead_attn", "cross_attn")): v
            for k, v in state.items()}


def torch_name(name: str) -> str:
    """Our parameter's name in nn.Transformer*Layer (the inverse of `from_torch`)."""
    return name.removeprefix("ffn.").replace("cross_attn", "multihead_attn")


def sci(x: float) -> str:
    """2.4e-07; an exact 0 as 0 (the same operations in the same order round alike)."""
    return "0" if x == 0 else f"{x:.1e}"


@dataclass(frozen=True, eq=False)
class Check:
    """One of our modules against its PyTorch counterpart, on the same input with the same weights."""

    module: str                      # "MultiHeadAttention", "EncoderBlock", ...
    reference: str                   # the PyTorch module as constructed; its class when there is none
    reason: str | None = None        # why there is no counterpart; then nothing below was computed
    max_diff: float | None = None    # max |ours - theirs| after copying the weights
    before_copy: float | None = None  # the same with PyTorch's own weights: the check is not vacuous
    ours: np.ndarray | None = None   # (B, T, d_model)
    theirs: np.ndarray | None = None  # (B, T, d_model)
    copied: tuple[tuple[str, str, tuple[int, ...]], ...] = ()  # (our name, PyTorch's name, shape)

    @property
    def equal(self) -> bool:
        return self.max_diff is not None and self.max_diff < TOL

    def verdict(self) -> str:
        if self.max_diff is None:
            return f"No PyTorch counterpart: {self.reason}."
        found = f"max |diff| {sci(self.max_diff)} over {self.ours.size:,} values"
        if self.equal:
            return f"Equal to float rounding: {found}"
        return f"Different: {found}, above the {TOL:.0e} float rounding stays under"

    def sample(self, n: int = 5) -> pd.DataFrame:
        """The first n values of the first position of the first row, ours beside PyTorch's."""
        if self.ours is None or self.theirs is None:
            return pd.DataFrame(columns=["dim", "ours", "PyTorch", "|diff|"])
        a, b = self.ours[0, 0, :n], self.theirs[0, 0, :n]
        return pd.DataFrame({"dim": np.arange(len(a)), "ours": a, "PyTorch": b, "|diff|": np.abs(a - b)})


def _rope_reason(what: str) -> str:
    return (f"RoPE rotates the queries and keys inside attention by their position, and {what} has no "
            "rotation; switch the positional encoding to see the check")


def _no_counterpart(cfg: ModelConfig, block: bool) -> str | None:
    what = "nn.TransformerEncoderLayer" if block else "nn.MultiheadAttention"
    if cfg.pos_encoding == "rope":
        return _rope_reason(what)
    if cfg.pos_encoding == "alibi":
        return (f"ALiBi adds a distance penalty per head to the attention scores inside the module, and {what} "
                "adds none by itself; switch the positional encoding to see the check")
    if cfg.attn_scale == "none":
        return (f"{what} always divides the scores by sqrt(d_k); set the attention scale back to ÷ √d_k "
                "(sqrt_d_k) to see the check")
    if block and cfg.residual == "none":
        return ("nn.TransformerEncoderLayer always adds each sublayer to its input (x + f(x)); switch the "
                "residual connections back on to see the check")
    if block and cfg.activation == "swiglu":
        return ("SwiGLU gates the FFN (silu(gate) · value, both from linear1), and "
                "nn.TransformerEncoderLayer's FFN is linear2(act(linear1(x))) with ReLU or GELU only")
    return None


def _compare(ours: nn.Module, theirs: nn.Module, run_ours, run_theirs, x: Tensor
             ) -> tuple[float, float, Tensor, Tensor, tuple]:
    """Max |diff| with each side's own weights, then ours copied into theirs; both outputs after."""
    with torch.no_grad():
        before = float((run_ours(x) - run_theirs(x)).abs().max())
        state = ours.state_dict()
        theirs.load_state_dict({torch_name(k): v for k, v in state.items()})  # strict: every name pairs
        a, b = run_ours(x), run_theirs(x)
    copied = tuple((k, torch_name(k), tuple(v.shape)) for k, v in state.items())
    return float((a - b).abs().max()), before, a, b, copied


@contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """The global CPU generator seeded for a block, and restored after: module constructors draw from it.
    (torch.manual_seed would also queue a CUDA seeding, a few ms each, for nothing here.)"""
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(seed)
        yield


def _input(cfg: ModelConfig, batch: int, seq_len: int) -> Tensor:
    return torch.randn(batch, seq_len, cfg.d_model)                    # (B, T, d_model)


@single_threaded
def attention_check(cfg: ModelConfig, seed: int = 0, batch: int = 2, seq_len: int = 5) -> Check:
    """Our MultiHeadAttention (causal in a decoder-only model) against nn.MultiheadAttention."""
    reason = _no_counterpart(cfg, block=False)
    if reason:
        return Check("MultiHeadAttention", "nn.MultiheadAttention", reason)
    causal = cfg.arch == "decoder"
    ref = f"nn.MultiheadAttention({cfg.d_model}, {cfg.n_heads}, batch_first=True)" + (", causal mask" if causal else "")
    mask = nn.Transformer.generate_square_subsequent_mask(seq_len) if causal else None
    with _seeded(seed):
        ours = MultiHeadAttention(cfg).eval()
        init_weights(ours, cfg.pad_idx)                                 # as the model initialises it
        theirs = nn.MultiheadAttention(cfg.d_model, cfg.n_heads, dropout=cfg.dropout, batch_first=True).eval()
        x = _input(cfg, batch, seq_len)
    diff, before, a, b, copied = _compare(
        ours, theirs, lambda x: ours(x, causal=causal),
        lambda x: theirs(x, x, x, attn_mask=mask, need_weights=False)[0], x)
    return Check("MultiHeadAttention", ref, None, diff, before, a.numpy(), b.numpy(), copied)


@single_threaded
def block_check(cfg: ModelConfig, seed: int = 0, batch: int = 2, seq_len: int = 5) -> Check:
    """The config's self-attention block against nn.TransformerEncoderLayer: the encoder's block, or
    in a decoder-only model its causal block (the same layer with a causal mask)."""
    causal = cfg.arch == "decoder"
    name = "DecoderBlock (no cross-attention)" if causal else "EncoderBlock"
    reason = _no_counterpart(cfg, block=True)
    if reason:  # no call to show: PyTorch's layer takes no such activation
        return Check(name, "nn.TransformerEncoderLayer", reason)
    ref = (f"nn.TransformerEncoderLayer({cfg.d_model}, {cfg.n_heads}, {cfg.d_ff}, activation={cfg.activation!r}, "
           f"norm_first={cfg.norm == 'pre'}, batch_first=True)" + (", causal mask" if causal else ""))
    mask = nn.Transformer.generate_square_subsequent_mask(seq_len) if causal else None
    with _seeded(seed):
        ours = (DecoderBlock(cfg, cross=False) if causal else EncoderBlock(cfg)).eval()
        init_weights(ours, cfg.pad_idx)
        theirs = nn.TransformerEncoderLayer(cfg.d_model, cfg.n_heads, cfg.d_ff, dropout=cfg.dropout,
                                            activation=cfg.activation, batch_first=True,
                                            norm_first=cfg.norm == "pre").eval()
        x = _input(cfg, batch, seq_len)
    diff, before, a, b, copied = _compare(
        ours, theirs, ours, lambda x: theirs(x, src_mask=mask, is_causal=causal), x)
    return Check(name, ref, None, diff, before, a.numpy(), b.numpy(), copied)


# ---------------------------------------------------------------------------------------------
# Initialisation: Xavier uniform (init_weights, the chapter's _init_weights) against what PyTorch's
# modules do by themselves
# ---------------------------------------------------------------------------------------------

XAVIER, DEFAULTS = "Xavier uniform", "PyTorch defaults"


def pytorch_defaults(model: nn.Module) -> nn.Module:
    """Re-initialise `model` as PyTorch's modules initialise themselves, with no explicit init: each
    module's own reset_parameters() (nn.Linear: uniform ±1/√fan_in; nn.Embedding: N(0, 1); LayerNorm: 1
    and 0), and our attention as nn.MultiheadAttention does (Xavier-uniform in_proj, zero biases). A
    shared (tied) weight keeps the init of its first owner; the learned positional table keeps its own."""
    seen: set[int] = set()
    with torch.no_grad():
        for m in model.modules():
            reset = getattr(m, "reset_parameters", None)
            if reset is None:
                continue
            own = list(m.parameters(recurse=False))
            kept = {id(p): p.clone() for p in own if id(p) in seen}
            reset()
            for p in own:
                if id(p) in kept:
                    p.copy_(kept[id(p)])
                seen.add(id(p))
        for m in model.modules():
            if isinstance(m, MultiHeadAttention):
                nn.init.xavier_uniform_(m.in_proj_weight)
                m.in_proj_bias.zero_()
                m.out_proj.bias.zero_()
    return model


def _random_batch(cfg: ModelConfig, batch: int, seq_len: int, gen: torch.Generator):
    """(model inputs, targets, classes): random tokens from 1.. (no padding), random targets."""
    def tokens(vocab):
        return torch.randint(1, vocab, (batch, seq_len), generator=gen)  # (B, T)
    if cfg.arch == "encoder":
        src = (torch.randn(batch, seq_len, cfg.d_model, generator=gen) if cfg.src_vocab_size == 0
               else tokens(cfg.src_vocab_size))
        return (src,), torch.randint(0, cfg.n_classes, (batch,), generator=gen), cfg.n_classes
    target = tokens(cfg.tgt_vocab_size)
    inputs = (tokens(cfg.src_vocab_size), tokens(cfg.tgt_vocab_size)) if cfg.arch == "encoder-decoder" \
        else (tokens(cfg.tgt_vocab_size),)
    return inputs, target, cfg.tgt_vocab_size


@dataclass(frozen=True, eq=False)
class InitStudy:
    """One forward and backward pass of the same model and batch under each initialisation."""

    layers: tuple[str, ...]           # "enc 0", "enc 1", "dec 0", ...
    grad: dict[str, np.ndarray]       # init -> (L,) gradient norm of each block's parameters
    loss: dict[str, float]            # init -> initial cross-entropy
    total_grad: dict[str, float]      # init -> gradient norm over every parameter
    uniform_loss: float               # ln(classes): the loss of a uniform guess
    embed_std: dict[str, float]       # init -> std of the token embedding's weights (empty: vector inputs)

    def spread(self, init: str) -> float:
        """Largest over smallest block: 1 is perfectly even across depth."""
        g = self.grad[init]
        return float(g.max() / max(g.min(), 1e-30))

    def ratio(self) -> float:
        """PyTorch's defaults against Xavier: the blocks' gradient norms, geometric mean over blocks."""
        logs = np.log(np.clip(self.grad[DEFAULTS], 1e-30, None) / np.clip(self.grad[XAVIER], 1e-30, None))
        return float(np.exp(logs.mean()))

    def table(self) -> pd.DataFrame:
        """One row a measure, one column an init."""
        rows = {"Initial loss": self.loss, "Gradient norm, all weights": self.total_grad,
                "Blocks, largest ÷ smallest": {init: self.spread(init) for init in self.grad}}
        if self.embed_std:
            rows["Token embedding std"] = self.embed_std
        return pd.DataFrame([{"measure": name, **values} for name, values in rows.items()])

    def summary(self) -> str:
        return (f"Against Xavier, PyTorch's defaults give the blocks ×{self.ratio():.2g} the gradient (geometric "
                f"mean over the {len(self.layers)} blocks) and start at a loss of {self.loss[DEFAULTS]:.3f} "
                f"against {self.loss[XAVIER]:.3f}; a uniform guess scores ln {round(math.exp(self.uniform_loss))}"
                f" = {self.uniform_loss:.3f}.")


@single_threaded
def init_study(cfg: ModelConfig, seed: int = 0, batch: int = 4, seq_len: int = 12) -> InitStudy:
    """The config's model built with the same seed, initialised with Xavier uniform (the project's
    init_weights) and with PyTorch's defaults, one cross-entropy backward on one seeded random batch
    (random tokens, random targets; eval mode, so dropout is off and only the init differs)."""
    seq_len = min(seq_len, cfg.max_len)
    inputs, target, classes = _random_batch(cfg, batch, seq_len, torch.Generator().manual_seed(seed))
    grad, loss, total, embed_std, labels = {}, {}, {}, {}, ()
    for init in (XAVIER, DEFAULTS):
        with _seeded(seed):
            model = build_model(cfg).eval()
            if init == DEFAULTS:
                pytorch_defaults(model)
        logits = model(*inputs)
        value = F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1))
        value.backward()
        groups = grad_groups(model)
        labels = tuple(label for label, _ in groups)
        grad[init] = np.array(list(grad_norms(groups).values()))
        total[init] = grad_norms([("all", list(model.parameters()))])["all"]
        loss[init] = float(value.detach())
        embed = next((m for m in model.modules() if isinstance(m, nn.Embedding)), None)
        if embed is not None:
            embed_std[init] = float(embed.weight.detach().std())
    return InitStudy(labels, grad, loss, total, math.log(classes), embed_std)


__all__ = ["TOL", "sci", "Check", "attention_check", "block_check", "from_torch", "torch_name", "InitStudy",
           "init_study", "pytorch_defaults", "XAVIER", "DEFAULTS"]
