"""Head ablation: knock out one head (or a whole sublayer, or an FFN) and measure the validation metrics again.

A knock-out is a weight edit, so every code path (packed training forward, greedy decoding) sees it alike and
costs exactly what the model costs: a head's output enters the model only through its slice of the output
projection's input, so zeroing those columns of `out_proj.weight` removes it ("zero"); "mean" also adds to the
bias what the slice averages over the validation split, replacing the head by a constant. A sublayer or an
FFN is knocked out at its last linear layer the same way. `ablate` recomputes only what a knock-out changes
(`replay.py`): what lies upstream of the part comes from the intact pass.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager

import pandas as pd
import torch
from torch import Tensor, nn

from explorer.analysis.views import single_threaded
from explorer.evaluation import evaluate
from explorer.interpret.parts import Part, head_columns, module, parts
from explorer.interpret.replay import Tapes
from explorer.task_kinds import KINDS
from explorer.tasks import Task

MODES = ("zero", "mean")
METRICS = ("exact", "token_acc", "loss")   # exact: greedy exact match (seq2seq), accuracy (classify), next-token (lm)
COLUMNS = ["kind", "layer", "head", *METRICS, "exact_drop", "token_acc_drop", "loss_rise"]


def _last_linear(sub: nn.Module) -> nn.Linear:
    """The linear layer a sublayer's output comes out of."""
    return sub.out_proj if hasattr(sub, "out_proj") else sub.linear2


def val_means(model: nn.Module, task: Task) -> dict[tuple[str, int], tuple[Tensor, Tensor]]:
    """(kind, layer) -> (mean input, mean output) of each sublayer's last linear layer over the validation
    split, read by the teacher-forced pass (one batch per 500 examples)."""
    sums: dict[tuple[str, int], list] = {}
    handles = []
    for part in parts(model):
        if part.head is not None:
            continue
        def keep(_mod, inp, out, key=(part.kind, part.layer)):
            x, y = inp[0].detach().reshape(-1, inp[0].size(-1)), out.detach().reshape(-1, out.size(-1))
            row = sums.setdefault(key, [0.0, 0.0, 0])
            row[0], row[1], row[2] = row[0] + x.sum(0), row[1] + y.sum(0), row[2] + len(x)
        handles.append(_last_linear(module(model, part)).register_forward_hook(keep))
    was = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for batch in task.iter_val(500):
                KINDS[task.kind].logits(model, batch)
    finally:
        model.train(was)
        for h in handles:
            h.remove()
    return {key: (x / n, y / n) for key, (x, y, n) in sums.items()}


def _knock(model: nn.Module, part: Part, mode: str, means: dict | None) -> tuple[nn.Linear, Tensor, Tensor]:
    """Edit the weights in place; returns the linear layer and its weight and bias as they were."""
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is not known; choose one of {', '.join(MODES)}")
    if mode == "mean" and means is None:
        raise ValueError("mode 'mean' needs the validation means: pass means=val_means(model, task)")
    linear = _last_linear(module(model, part))
    saved = linear.weight.detach().clone(), linear.bias.detach().clone()
    with torch.no_grad():
        if part.head is None:                          # the whole sublayer: a constant (0, or its mean output)
            linear.weight.zero_()
            linear.bias.copy_(means[part.kind, part.layer][1] if mode == "mean" else 0.0)
        else:
            cols = head_columns(model, part)
            if mode == "mean":
                linear.bias.add_(linear.weight[:, cols] @ means[part.kind, part.layer][0][cols])
            linear.weight[:, cols] = 0.0
    return linear, *saved


@contextmanager
def knocked_out(model: nn.Module, part: Part, mode: str = "zero",
                means: dict | None = None) -> Iterator[nn.Module]:
    """The model with `part` knocked out while the block runs (its weights are restored afterwards).
    mode "mean" needs `means` (val_means)."""
    linear, weight, bias = _knock(model, part, mode, means)
    try:
        yield model
    finally:
        with torch.no_grad():
            linear.weight.copy_(weight)
            linear.bias.copy_(bias)


def without(model: nn.Module, task: Task, part: Part, mode: str = "zero") -> nn.Module:
    """A copy of the model with `part` knocked out for good, for the views that take a model."""
    model = copy.deepcopy(model).eval()
    _knock(model, part, mode, val_means(model, task) if mode == "mean" else None)
    return model


def metrics(model: nn.Module, task: Task, n: int | None = None) -> dict[str, float]:
    """exact, token_acc and loss on the first n validation examples (all by default), in one batch."""
    n = len(task.val) if n is None else min(n, len(task.val))
    got = evaluate(model, task, max_examples=n, batch_size=n)
    return {"exact": got["val_exact"], "token_acc": got["val_token_acc"], "loss": got["val_loss"]}


@single_threaded
def ablate(model: nn.Module, task: Task, mode: str = "zero", n: int | None = None,
           which: list[Part] | None = None) -> pd.DataFrame:
    """Every head of every attention kind and layer knocked out in turn, then each whole attention sublayer and
    each FFN (`which` to choose), with the validation metrics each leaves. One row per (kind, layer, head); head
    is <NA> for a whole sublayer or an FFN. The drops are from the intact model's metrics, which
    `table.attrs["baseline"]` holds (with the mode and the number of examples). Each knock-out's pass replays
    what lies upstream of the part from the intact pass (`replay.Tapes`): the same numbers, less to compute."""
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is not known; choose one of {', '.join(MODES)}")
    model = copy.deepcopy(model).eval()     # weight edits, mode switches and tapes stay private
    means = val_means(model, task) if mode == "mean" else None
    todo = parts(model) if which is None else which
    tapes = Tapes(model)
    with tapes.record():
        base = metrics(model, task, n)
    rows = []
    for part in todo:
        with knocked_out(model, part, mode, means), tapes.replay(part):
            got = metrics(model, task, n)
        rows.append({"kind": part.kind, "layer": part.layer, "head": part.head, **got,
                     "exact_drop": base["exact"] - got["exact"], "token_acc_drop": base["token_acc"] - got["token_acc"],
                     "loss_rise": got["loss"] - base["loss"]})
    return table_of(rows, base, mode, len(task.val) if n is None else min(n, len(task.val)))


def table_of(rows: list[dict], baseline: dict, mode: str, n: int) -> pd.DataFrame:
    """An ablation table from its rows (dicts with COLUMNS), as `ablate` returns it."""
    columns = {c: [row[c] for row in rows] for c in COLUMNS}    # by column: a fifth of astype's cost
    columns["head"] = pd.array(columns["head"], dtype="Int64")
    table = pd.DataFrame(columns, columns=COLUMNS)
    table.attrs.update(baseline=dict(baseline), mode=mode, n=n)
    return table


def heads_grid(table: pd.DataFrame, kind: str, column: str = "exact_drop") -> pd.DataFrame:
    """One kind's heads as a layer x head grid of `column` (rows: layers, columns: heads)."""
    heads = table[(table["kind"] == kind) & table["head"].notna()]
    return heads.pivot(index="layer", columns="head", values=column).sort_index()


__all__ = ["COLUMNS", "METRICS", "MODES", "ablate", "heads_grid", "knocked_out", "metrics", "table_of", "val_means",
           "without"]
