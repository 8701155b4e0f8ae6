"""Naming the parts of a model an interpretation acts on: attention sublayers by kind and layer, their heads,
and each layer's FFN; and the model's inputs for one example of its task.

Kinds are those of `explorer.inspect.ATTENTION_KINDS` ("enc_self", "dec_self", "cross") plus "enc_ffn" and
"dec_ffn" for the feed-forward networks of the encoder and decoder stacks.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from explorer.model import MultiHeadAttention
from explorer.tasks import BOS, EOS, Task

FFN_KINDS = {"enc_ffn": "Encoder FFN", "dec_ffn": "Decoder FFN"}
_STACK = {"enc_self": "encoder", "dec_self": "decoder", "cross": "decoder", "enc_ffn": "encoder",
          "dec_ffn": "decoder"}
_MODULE = {"enc_self": "self_attn", "dec_self": "self_attn", "cross": "cross_attn", "enc_ffn": "ffn",
           "dec_ffn": "ffn"}


@dataclass(frozen=True)
class Part:
    """One thing to knock out or patch: a head (head >= 0), a whole attention sublayer or an FFN (head None)."""

    kind: str
    layer: int
    head: int | None = None

    @property
    def label(self) -> str:
        return f"{self.kind} L{self.layer}" + ("" if self.head is None else f" H{self.head}")


def stack(model: nn.Module, kind: str) -> nn.Module | None:
    return getattr(model, _STACK[kind], None)


def module(model: nn.Module, part: Part) -> nn.Module:
    """The sublayer a part names; ValueError (saying what exists) if the model has none."""
    where = stack(model, part.kind)
    layers = where.layers if where is not None else []
    sub = getattr(layers[part.layer], _MODULE[part.kind], None) if 0 <= part.layer < len(layers) else None
    if sub is None:
        raise ValueError(f"this model has no {part.label}; it has {', '.join(kinds(model)) or 'no layers'}")
    return sub


def kinds(model: nn.Module) -> list[str]:
    """The attention kinds and FFN kinds this model has, in forward order."""
    out = []
    for kind in ("enc_self", "enc_ffn", "dec_self", "cross", "dec_ffn"):
        where = stack(model, kind)
        if where is not None and len(where.layers) and getattr(where.layers[0], _MODULE[kind], None) is not None:
            out.append(kind)
    return out


def parts(model: nn.Module) -> list[Part]:
    """Every head of every attention sublayer, then each whole sublayer, then each FFN, per kind and layer."""
    out = []
    for kind in kinds(model):
        for layer in range(len(stack(model, kind).layers)):
            sub = module(model, Part(kind, layer))
            if isinstance(sub, MultiHeadAttention):
                out.extend(Part(kind, layer, h) for h in range(sub.n_heads))
            out.append(Part(kind, layer))
    return out


def head_columns(model: nn.Module, part: Part) -> slice:
    """The columns of the output projection's input that carry one head's output (heads are concatenated)."""
    sub = module(model, part)
    return slice(part.head * sub.d_head, (part.head + 1) * sub.d_head)


# ------------------------------------------------------------------------------------ inputs
@dataclass(frozen=True)
class Inputs:
    """One example as the model reads it: the arguments of its forward pass and what each output row answers."""

    args: tuple[Tensor, ...]     # model(*args)
    correct: tuple[int, ...]     # the right token (or class) of each output row
    rows: tuple[str, ...]        # a label per output row (the token it reads)


def inputs(task: Task, src, solution=None) -> Inputs:
    """seq2seq: source and BOS + target (teacher forcing); classify: source; lm: the text and its next characters."""
    if task.kind == "seq2seq":
        tgt = list(task.solve(src) if solution is None else solution)
        tgt_in = [BOS, *tgt]
        return Inputs((torch.tensor([list(src)]), torch.tensor([tgt_in])), (*tgt, EOS), tuple(task.tokens(tgt_in)))
    if task.kind == "classify":
        x = torch.tensor([list(src)], dtype=task.val.src.dtype)
        label = task.solve(src) if solution is None else solution
        return Inputs((x,), (int(label[0]),), ("pooled",))
    nxt = list(task.solve(src) if solution is None else solution)
    return Inputs((torch.tensor([list(src)]),), tuple(nxt), tuple(task.position_labels(src)))


def example_inputs(task: Task, index: int) -> Inputs:
    """The validation example `index` (ValueError names the valid range)."""
    src, answer = task.example("val", index)
    return inputs(task, src, answer)


def output_logits(model: nn.Module, task: Task, args) -> Tensor:
    """The model's logits for one example: (T, V), a classifier's as one row (1, n_classes)."""
    out = model(*args)
    return out if task.kind == "classify" else out[0]


__all__ = ["FFN_KINDS", "Part", "Inputs", "example_inputs", "head_columns", "inputs", "kinds", "module",
           "output_logits", "parts", "stack"]
