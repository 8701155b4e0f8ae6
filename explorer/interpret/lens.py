"""Logit lens: the residual stream after each layer read as if it were the last one.

Each decoder (or LM) layer's residual goes through the final LayerNorm (Identity for Post-LN, whose blocks
end in a norm already) and the output projection; a classifier's encoder layers through the final norm, the
mean pool and the classifier. The last layer's lens is then the model's own output.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from explorer.analysis.views import single_threaded
from explorer.inspect import capture
from explorer.interpret.parts import Inputs, example_inputs, output_logits
from explorer.tasks import Task


@dataclass(frozen=True)
class Lens:
    """probs (L, T, V): the softmax each layer's residual gives at each output row; `output` (T, V) the
    model's own. p_correct (L, T): the probability of the right token; top (L, T, k) the k likeliest ids."""

    probs: np.ndarray
    output: np.ndarray
    correct: tuple[int, ...]
    rows: tuple[str, ...]
    vocab: tuple[str, ...]

    @property
    def p_correct(self) -> np.ndarray:
        return np.take_along_axis(self.probs, np.asarray(self.correct)[None, :, None], axis=-1)[..., 0]

    def top(self, k: int = 3) -> np.ndarray:
        return np.argsort(-self.probs, axis=-1, kind="stable")[..., :k]

    def records(self, k: int = 3) -> list[dict]:
        """Per layer: `layer`, `top` (per position, the k likeliest tokens), `p_top` and `p_correct`."""
        top = self.top(k)
        out = []
        for layer in range(len(self.probs)):
            out.append({"layer": layer, "top": [[self.vocab[i] for i in row] for row in top[layer]],
                        "p_top": [[round(float(self.probs[layer, t, i]), 4) for i in row]
                                  for t, row in enumerate(top[layer])],
                        "p_correct": [round(float(p), 4) for p in self.p_correct[layer]]})
        return out


def _readout(model: nn.Module, task: Task, resid: Tensor, args) -> Tensor:
    """What the model's head makes of one residual stream (B, T, d_model): logits (T, V) or (1, n_classes)."""
    if task.kind == "classify":
        x = model.encoder.final_norm(resid)
        mask = None if model.encoder.embed is None else args[0] != model.cfg.pad_idx   # (B, S)
        keep = torch.ones(x.shape[:2], dtype=x.dtype) if mask is None else mask.to(x.dtype)
        pooled = (x * keep[..., None]).sum(1) / keep.sum(1, keepdim=True)
        return model.classifier(pooled)
    return model.output_proj(model.decoder.final_norm(resid))[0]


@single_threaded
def lens_of(model: nn.Module, task: Task, inp: Inputs, vocab: tuple[str, ...]) -> Lens:
    """The lens on one input, run on a private copy of the model (hooks never touch a model others share)."""
    layers, out = readouts(copy.deepcopy(model).eval(), task, inp)
    return Lens(layers.float().softmax(-1).numpy(), out.float().softmax(-1).numpy(), inp.correct, inp.rows, vocab)


def readouts(model: nn.Module, task: Task, inp: Inputs) -> tuple[Tensor, Tensor]:
    """(each layer's logits (L, T, V), the model's own (T, V)) from one forward pass of `model` itself."""
    stack = "encoder" if task.kind == "classify" else "decoder"
    with torch.inference_mode(), capture(model, attention=False, residual=True) as cache:
        out = output_logits(model, task, inp.args)
        layers = torch.stack([_readout(model, task, r, inp.args) for r in cache.residual[stack]])   # (L, T, V)
    return layers, out


def logit_lens(model: nn.Module, task: Task, example: int = 0) -> Lens:
    """The lens on validation example `example`; a seq2seq decoder reads the correct target (teacher forcing)."""
    vocab = tuple(task.class_names) if task.kind == "classify" else tuple(task.vocab)
    return lens_of(model, task, example_inputs(task, example), vocab)


__all__ = ["Lens", "lens_of", "logit_lens", "readouts"]
