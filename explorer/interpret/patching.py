"""Activation patching: run a corrupted input, put back one head's output (or one layer's residual at one
position) from the clean run, and measure how much of the clean answer comes back.

The measure is the logit difference at the output row the corruption changes: logit(clean answer) -
logit(corrupted answer); `restored` = (patched - corrupted) / (clean - corrupted), 1 = all of it back,
0 = nothing. Every patch of a pair runs in one batch: row i of the corrupted batch gets patch i.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from explorer.analysis.views import single_threaded
from explorer.interpret.parts import Inputs, Part, head_columns, inputs, module, parts
from explorer.tasks import SPECIALS, Task


@dataclass(frozen=True)
class Pair:
    """Two inputs that differ in one token, and where to read the answer: output row `row`, where the clean
    input's answer is `clean_token` and the corrupted one's `corrupt_token`."""

    clean: Inputs
    corrupt: Inputs
    changed: int            # the input position that differs
    row: int
    clean_token: int
    corrupt_token: int
    text: str               # in words, for a caption


def make_pair(task: Task, example: int = 0, position: int | None = None, src=None) -> Pair:
    """The validation example and a copy with one token changed. seq2seq: source token `position` (default:
    the first) becomes the next symbol; the decoder reads the clean target in both runs. lm: the character at
    `position` (default: the last but one) becomes the next one of the vocabulary, the answer read at the
    last position. classify: A and B swap places (`position` unused), which swaps the label. `src`: an input
    of one's own instead of the example."""
    src, answer = task.example("val", example) if src is None else (list(src), task.solve(src))
    src = list(src)
    if task.kind == "lm" and len(answer) < len(src):
        raise ValueError("this text does not occur in the task's text, so its next character is unknown; "
                         "pick a validation example")
    if task.kind == "classify":
        a, b = (task.vocab.index(s) for s in ("A", "B")) if "A" in task.vocab else (None, None)
        if a is None or a not in src:
            raise ValueError("patching a classifier needs a task with A and B tokens (order)")
        i, j = src.index(a), src.index(b)
        bad = list(src)
        bad[i], bad[j] = b, a
        clean, corrupt = inputs(task, src, answer), inputs(task, bad, task.solve(bad))
        return Pair(clean, corrupt, i, 0, clean.correct[0], corrupt.correct[0], f"A and B swap places ({i} ↔ {j})")
    n = len(src)
    pos = (0 if task.kind == "seq2seq" else n - 2) if position is None else position
    if not 0 <= pos < n - (task.kind == "lm"):
        raise ValueError(f"position={pos} is out of range; this input has positions 0..{n - 1 - (task.kind == 'lm')}")
    bad = list(src)
    first = len(SPECIALS)
    bad[pos] = first + (src[pos] - first + 1) % (len(task.vocab) - first)   # the next ordinary token
    clean = inputs(task, src, answer)
    if task.kind == "seq2seq":   # the decoder reads the clean target in both runs
        corrupt_answer = task.solve(bad)
        corrupt = replace(inputs(task, bad, corrupt_answer), args=(torch.tensor([bad]), clean.args[1]))
        row = next(t for t, (x, y) in enumerate(zip(answer, corrupt_answer)) if x != y)
        said = f"source token {pos} changes from {task.tokens([src[pos]])[0]} to {task.tokens([bad[pos]])[0]}"
        return Pair(clean, corrupt, pos, row, clean.correct[row], corrupt_answer[row], said)
    corrupt = inputs(task, bad, task.solve(bad))
    return Pair(clean, corrupt, pos, n - 1, clean.correct[-1], -1,
                f"character {pos} changes from {task.tokens([src[pos]])[0]!r} to {task.tokens([bad[pos]])[0]!r}")


def _sites(model: nn.Module) -> list[tuple[str, str, int]]:
    """("head", kind, layer) for every attention sublayer, ("resid", stack, layer) for every block."""
    out = [("head", p.kind, p.layer) for p in parts(model) if p.head is None and not p.kind.endswith("ffn")]
    for name in ("encoder", "decoder"):
        where = getattr(model, name, None)
        out += [("resid", name, layer) for layer in range(len(where.layers))] if where is not None else []
    return out


def _site_module(model: nn.Module, site) -> nn.Module:
    what, kind, layer = site
    if what == "head":
        return module(model, Part(kind, layer)).out_proj
    return getattr(model, kind).layers[layer].hook_resid


def _run(model: nn.Module, task: Task, args, patches: list[list[tuple]], clean: dict | None) -> tuple[Tensor, dict]:
    """The model on len(patches) copies of args; patch i of row i is a list of (site, index) taken from `clean`
    (site -> activation (1, T, d_model)): a head's columns, or a residual's position. Returns the logits
    (rows, T, V) and every site's activation of row 0."""
    rows = max(1, len(patches))
    seen, handles = {}, []
    for site in _sites(model):
        mask = None
        if clean is not None:
            act = clean[site]
            mask = torch.zeros(rows, *act.shape[1:], dtype=torch.bool)
            for i, patch in enumerate(patches):
                for s, index in patch:
                    if s != site:
                        continue
                    if site[0] == "head":
                        mask[i, :, head_columns(model, Part(site[1], site[2], index))] = True
                    else:
                        mask[i, index] = True

        def hook(mod, inp, out=None, site=site, mask=mask):
            x = inp[0] if site[0] == "head" else out
            seen[site] = x[:1].detach()
            if mask is not None and bool(mask.any()):
                x = torch.where(mask, clean[site], x)
                return (x,) if site[0] == "head" else x
            return None
        m = _site_module(model, site)
        handles.append(m.register_forward_pre_hook(hook) if site[0] == "head" else m.register_forward_hook(hook))
    try:
        batch = tuple(a.expand(rows, *a.shape[1:]) for a in args)
        with torch.inference_mode():
            logits = model(*batch)
    finally:
        for h in handles:
            h.remove()
    return (logits[:, None] if task.kind == "classify" else logits), seen


@single_threaded
def patch(model: nn.Module, task: Task, pair: Pair, patches: list[list[tuple]] | None = None) -> pd.DataFrame:
    """Every head (site ("head", kind, layer), index head) and every block's residual at every position (site
    ("resid", stack, layer), index position) patched alone from the clean run into the corrupted one, or the
    given `patches` (each a list of (site, index) patched together). One row per patch: what, kind (or stack),
    layer, index, logit_diff and restored; `table.attrs` holds the clean and corrupted logit differences."""
    model = copy.deepcopy(model).eval()
    clean_logits, clean = _run(model, task, pair.clean.args, [[]], None)
    corrupt_logits, _ = _run(model, task, pair.corrupt.args, [[]], None)
    other = pair.corrupt_token
    if other < 0:   # lm: the corrupted run's own favourite, or its runner-up when that is the clean answer
        ranked = corrupt_logits[0, pair.row].argsort(descending=True).tolist()
        other = next(t for t in ranked if t != pair.clean_token)

    def diff(logits: Tensor) -> np.ndarray:
        return (logits[:, pair.row, pair.clean_token] - logits[:, pair.row, other]).float().numpy()
    d_clean, d_corrupt = float(diff(clean_logits)[0]), float(diff(corrupt_logits)[0])
    if patches is None:
        patches = []
        for site in _sites(model):
            n = (module(model, Part(site[1], site[2])).n_heads if site[0] == "head"
                 else clean[site].shape[1])
            patches += [[(site, i)] for i in range(n)]
    logits, _ = _run(model, task, pair.corrupt.args, patches, clean)
    got = diff(logits)
    span = d_clean - d_corrupt
    rows = [{"what": p[0][0][0] if len(p) == 1 else "several", "kind": p[0][0][1] if len(p) == 1 else "",
             "layer": p[0][0][2] if len(p) == 1 else -1, "index": p[0][1] if len(p) == 1 else -1,
             "logit_diff": float(g), "restored": float((g - d_corrupt) / span) if abs(span) > 1e-9 else np.nan}
            for p, g in zip(patches, got)]
    table = pd.DataFrame(rows, columns=["what", "kind", "layer", "index", "logit_diff", "restored"])
    table.attrs.update(clean=d_clean, corrupt=d_corrupt, clean_token=pair.clean_token, corrupt_token=other,
                       row=pair.row, text=pair.text)
    return table


def every_head(model: nn.Module) -> list[tuple]:
    """All heads of all attention sublayers as one patch."""
    return [(site, h) for site in _sites(model) if site[0] == "head"
            for h in range(module(model, Part(site[1], site[2])).n_heads)]


@single_threaded
def patched_logits(model: nn.Module, task: Task, pair: Pair, patch_list: list[tuple]) -> tuple[Tensor, Tensor]:
    """(clean logits, corrupted logits with `patch_list` put back from the clean run), each (T, V)."""
    model = copy.deepcopy(model).eval()
    clean_logits, clean = _run(model, task, pair.clean.args, [[]], None)
    logits, _ = _run(model, task, pair.corrupt.args, [patch_list], clean)
    return clean_logits[0], logits[0]


def grid(table: pd.DataFrame, what: str, kind: str) -> pd.DataFrame:
    """One site family as a layer x index grid of `restored` (heads: layer x head; resid: layer x position)."""
    rows = table[(table["what"] == what) & (table["kind"] == kind)]
    return rows.pivot(index="layer", columns="index", values="restored").sort_index()


__all__ = ["Pair", "every_head", "grid", "make_pair", "patch", "patched_logits"]
