"""Looking inside a model without changing what it returns.

    with capture(model) as cache:
        logits = model(src, tgt_in)
    cache.attention["cross"][layer]     # (B, H, T_tgt, S) weights of decoder layer `layer`

Capture registers forward hooks on the model's `HookPoint`s for as long as the block runs and
removes them afterwards; with no hook registered the model runs its fast path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from explorer.model import DecoderBlock, EncoderBlock, HookPoint

ATTENTION_KINDS = {
    "enc_self": "Encoder self-attention",
    "dec_self": "Decoder masked self-attention",
    "cross": "Cross-attention",
}

_HOOK_NAME = re.compile(r"(encoder|decoder)\.layers\.(\d+)\.(?:(self_attn|cross_attn)\.hook_pattern|hook_resid)$")


def _hook_key(name: str) -> tuple[str, str, int] | None:
    """'decoder.layers.1.cross_attn.hook_pattern' -> ('attention', 'cross', 1)."""
    m = _HOOK_NAME.search(name)
    if m is None:
        return None
    stack, layer, attn = m.group(1), int(m.group(2)), m.group(3)
    if attn is None:
        return "residual", stack, layer
    kind = "cross" if attn == "cross_attn" else ("enc_self" if stack == "encoder" else "dec_self")
    return "attention", kind, layer


@dataclass
class Cache:
    """What one capture recorded. Lists are indexed by layer; a later forward pass (e.g. the
    next step of greedy decoding) overwrites an earlier one."""

    attention: dict[str, list[Tensor]] = field(default_factory=dict)   # kind -> [(B, H, Q, K)]
    residual: dict[str, list[Tensor]] = field(default_factory=dict)    # stack -> [(B, T, d_model)]
    logits: Tensor | None = None                                        # the model's output

    def _put(self, table: dict, key: str, layer: int, value: Tensor) -> None:
        rows = table.setdefault(key, [])
        rows.extend([None] * (layer + 1 - len(rows)))
        rows[layer] = value

    def stacked(self, kind: str) -> Tensor:
        """All layers of one attention kind: (L, B, H, Q, K)."""
        return torch.stack(self.attention[kind])


@contextmanager
def capture(model: nn.Module, attention: bool = True, residual: bool = False,
            outputs: bool = False, kinds: tuple[str, ...] | None = None) -> Iterator[Cache]:
    """Record what is asked while the block runs. Tensors are detached copies."""
    cache, handles = Cache(), []
    for name, module in model.named_modules():
        if not isinstance(module, HookPoint):
            continue
        key = _hook_key(name)
        if key is None:
            continue
        what, kind, layer = key
        wanted = (attention and what == "attention" and (kinds is None or kind in kinds)) or (
            residual and what == "residual")
        if not wanted:
            continue
        table = cache.attention if what == "attention" else cache.residual

        def hook(_mod, _inp, out, table=table, kind=kind, layer=layer):
            cache._put(table, kind, layer, out.detach())
        handles.append(module.register_forward_hook(hook))
    if outputs:
        def keep_logits(_mod, _inp, out):
            cache.logits = out.detach()
        handles.append(model.register_forward_hook(keep_logits))
    try:
        yield cache
    finally:
        for h in handles:
            h.remove()


# ---------------------------------------------------------------------------------------------
# Gradients and entropy
# ---------------------------------------------------------------------------------------------

def blocks(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """('enc 0', block), ('dec 0', block) ... in forward order."""
    out = []
    for name, module in model.named_modules():
        if isinstance(module, (EncoderBlock, DecoderBlock)):
            stack, _, idx = name.split(".")[-3:]   # "...encoder.layers.0"
            out.append((f"{stack[:3]} {idx}", module))
    return out


def grad_groups(model: nn.Module, per: str = "layer") -> list[tuple[str, list[nn.Parameter]]]:
    """Parameter groups whose gradient norms are reported: one per block ("layer"), or one per
    sublayer ("sublayer": self_attn, cross_attn, ffn, norms)."""
    groups = []
    for label, block in blocks(model):
        if per == "layer":
            groups.append((label, list(block.parameters())))
            continue
        parts: dict[str, list[nn.Parameter]] = {}
        for pname, p in block.named_parameters():
            top = pname.split(".")[0]
            parts.setdefault("norms" if top.startswith("norm") else top, []).append(p)
        groups.extend((f"{label} {part}", ps) for part, ps in parts.items())
    return groups


def grad_norms(groups: list[tuple[str, list[nn.Parameter]]]) -> dict[str, float]:
    """L2 norm of the gradient of each group (0 where no gradient has flowed)."""
    flat = [p.grad for _, ps in groups for p in ps if p.grad is not None]
    norms = iter(torch._foreach_norm(flat)) if flat else iter(())
    out = {}
    for label, ps in groups:
        sq = sum(float(next(norms)) ** 2 for p in ps if p.grad is not None)
        out[label] = sq ** 0.5
    return out


def entropy(logits: Tensor, dim: int = -1) -> Tensor:
    """Shannon entropy in nats of softmax(logits) along dim; log(V) is the uniform maximum."""
    logp = logits.log_softmax(dim)
    return -(logp.exp() * logp).sum(dim)


def attention_entropy(pattern: Tensor) -> Tensor:
    """Mean entropy (nats) of each head's attention rows: (B, H, Q, K) -> (H,).
    Masked keys have weight 0 and contribute nothing."""
    p = pattern.clamp_min(1e-12)
    rows = -(pattern * p.log()).sum(-1)                                 # (B, H, Q)
    return rows.mean(dim=(0, 2))
