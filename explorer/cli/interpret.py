"""`python -m explorer interpret ablate|lens|patch|geometry|heads --model NAME [--json]`.

NAME is a shipped model or a saved run. The JSON fields are a contract (a figure-export tool reads them):
  ablate  {"model", "mode", "n", "baseline": {exact, token_acc, loss},
           "ablations": [{kind, layer, head, exact, token_acc, loss, exact_drop, token_acc_drop, loss_rise}]}
  lens    {"model", "example", "rows", "correct", "layers": [{layer, top, p_top, p_correct}]}
  patch   {"model", "example", "pair", "row", "clean_logit_diff", "corrupt_logit_diff",
           "patches": [{what, kind, layer, index, logit_diff, restored}]}
head is null for a whole sublayer or an FFN; NaN is written as null. `ablate --store` writes a shipped model's
tables in both modes for the page's first view instead (pretrained/ablation/NAME.json, `interpret.stored`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

import pandas as pd
import torch

from explorer.cli.common import UsageError
from explorer.interpret.ablation import MODES, ablate
from explorer.interpret.geometry import embedding_geometry
from explorer.interpret.lens import logit_lens
from explorer.interpret.over_training import heads_over_training, replay_snapshots
from explorer.interpret.patching import make_pair, patch
from explorer.interpret.stored import STORED_N, store
from explorer.store.checkpoints import pretrained_manifest
from explorer.store.shipped import KERNELS
from explorer.store.subject import load_model


def _clean(value):
    """JSON-safe: NaN and pandas' NA become null, numpy numbers plain ones."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def _records(table: pd.DataFrame) -> list[dict]:
    return [_clean(row) for row in table.astype(object).to_dict("records")]


def _model(args):
    try:
        return load_model(args.model)
    except ValueError as err:
        raise UsageError(str(err)) from None


def _ablate(args) -> dict:
    model, task = _model(args)
    if args.examples is not None and args.examples < 1:
        raise UsageError(f"--examples {args.examples} must be at least 1")
    if args.store:
        if args.model not in [e["name"] for e in pretrained_manifest()]:
            raise UsageError(f"--store is for shipped models; {args.model!r} is not one")
        path = store(args.model, STORED_N if args.examples is None else args.examples)
        return {"model": args.model, "path": str(path)}
    table = ablate(model, task, mode=args.mode, n=args.examples)
    return {"model": args.model, "mode": args.mode, "n": table.attrs["n"], "baseline": _clean(table.attrs["baseline"]),
            "ablations": _records(table)}


def _example(task, args) -> int:
    if not 0 <= args.example < len(task.val):
        raise UsageError(f"--example {args.example} is out of range; the validation split has examples "
                         f"0..{len(task.val) - 1}")
    return args.example


def _lens(args) -> dict:
    model, task = _model(args)
    lens = logit_lens(model, task, _example(task, args))
    return {"model": args.model, "example": args.example, "rows": list(lens.rows),
            "correct": [lens.vocab[i] for i in lens.correct], "layers": lens.records(args.top)}


def _patch(args) -> dict:
    model, task = _model(args)
    try:
        pair = make_pair(task, _example(task, args), args.position)
    except ValueError as err:
        raise UsageError(str(err)) from None
    table = patch(model, task, pair)
    return {"model": args.model, "example": args.example, "pair": pair.text, "row": pair.row,
            "clean_logit_diff": table.attrs["clean"], "corrupt_logit_diff": table.attrs["corrupt"],
            "patches": _records(table)}


def _geometry(args) -> dict:
    model, task = _model(args)
    out = {}
    for name, p in embedding_geometry(model, task, k=args.dims).items():
        out[name] = {"labels": list(p.labels), "coords": p.coords.round(4).tolist(),
                     "explained": p.explained.round(4).tolist()}
    return {"model": args.model, "tables": out}


def _heads(args) -> dict:
    try:
        table = heads_over_training(args.model)
    except (ValueError, FileNotFoundError) as err:
        raise UsageError(str(err)) from None
    return {"model": args.model, "uniform": table.attrs["uniform"], "heads": _records(table)}


def _snapshots(args) -> dict | int:
    if args.model not in [e["name"] for e in pretrained_manifest()]:
        raise UsageError(f"{args.model!r} is not a shipped model; a saved run keeps its own snapshots "
                         "(train with --snapshot-every N)")
    code = _with_kernels(["interpret", "snapshots", "--model", args.model, "--every", str(args.every)])
    if code is not None:
        return code
    try:
        path = replay_snapshots(args.model, args.every)
    except ValueError as err:
        raise UsageError(str(err)) from None
    return {"model": args.model, "path": str(path)}


def _with_kernels(argv: list[str]) -> int | None:
    """Run again in a child process with the kernels the shipped weights were built with (explorer.store.shipped:
    they act only when set before PyTorch starts); its exit code, or None when they are set already."""
    if all(os.environ.get(k) == v for k, v in KERNELS.items()):
        return None
    return subprocess.run([sys.executable, "-m", "explorer", *argv], env={**os.environ, **KERNELS},
                          check=False).returncode


WHAT = {  # subcommand -> (help, run)
    "ablate": ("knock out each head, attention sublayer and FFN; validation metrics and their drops", _ablate),
    "lens": ("logit lens: each layer's residual read through the output head, per position", _lens),
    "patch": ("activation patching: restore each head / residual of a clean input in a corrupted one", _patch),
    "geometry": ("token embeddings and positional tables projected by PCA", _geometry),
    "heads": ("a saved run's heads over training: entropy and match per recorded step", _heads),
    "snapshots": ("replay a shipped model's training to record its heads over training (pretrained/snapshots/)",
                  _snapshots),
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="what", required=True, metavar="WHAT")
    for name, (text, _) in WHAT.items():
        q = sub.add_parser(name, help=text, description=text)
        q.add_argument("--model", required=True, metavar="NAME", help="a shipped model or a saved run"
                       + (" (with snapshots)" if name == "heads" else ""))
        q.add_argument("--json", action="store_true", help="print JSON instead of a table")
        if name == "ablate":
            q.add_argument("--mode", choices=MODES, default="zero", help="zero the part, or put its mean over "
                                                                         "the validation split")
            q.add_argument("--examples", type=int, metavar="N", help="validation examples (default: all; 200 "
                                                                         "with --store)")
            q.add_argument("--store", action="store_true", help="store a shipped model's tables in both modes for "
                                                                "the page's first view (pretrained/ablation/)")
        if name in ("lens", "patch"):
            q.add_argument("--example", type=int, default=0, metavar="I", help="validation example (default 0)")
        if name == "lens":
            q.add_argument("--top", type=int, default=3, choices=range(1, 11), metavar="K", help="top tokens shown")
        if name == "patch":
            q.add_argument("--position", type=int, metavar="P", help="input position to change (default: the "
                                                                     "first source token; an LM's last but one)")
        if name == "snapshots":
            q.add_argument("--every", type=int, default=20, metavar="N", help="a snapshot every N steps")
        if name == "geometry":
            q.add_argument("--dims", type=int, choices=(2, 3), default=2, help="2-D or 3-D")


def _text(what: str, doc: dict) -> str:
    """The human-readable form: the main table of each answer."""
    if what == "ablate" and "path" in doc:
        return f"{doc['model']}: ablation tables written to {doc['path']}"
    if what == "ablate":
        base = ", ".join(f"{k} {v:.3f}" for k, v in doc["baseline"].items())
        table = pd.DataFrame(doc["ablations"]).astype({"head": "Int64"}).round(3).to_string(index=False)
        return f"{doc['model']}: {doc['mode']} ablation on {doc['n']} validation examples; intact: {base}\n{table}"
    if what == "lens":
        lines = [f"{doc['model']} example {doc['example']}; rows: {' '.join(doc['rows'])}"]
        for layer in doc["layers"]:
            cells = [f"{top[0]}({p:.2f})" for top, p in zip(layer["top"], layer["p_correct"])]
            lines.append(f"layer {layer['layer']}: top(p_correct) " + " ".join(cells))
        return "\n".join(lines)
    if what == "patch":
        table = pd.DataFrame(doc["patches"]).round(3).to_string(index=False)
        return (f"{doc['model']} example {doc['example']}: {doc['pair']}; logit difference clean "
                f"{doc['clean_logit_diff']:.2f}, corrupted {doc['corrupt_logit_diff']:.2f}\n{table}")
    if what == "snapshots":
        return f"{doc['model']}: snapshots written to {doc['path']}"
    if what == "geometry":
        return "\n".join(f"{name}: explained {t['explained']}" for name, t in doc["tables"].items())
    return pd.DataFrame(doc["heads"]).round(3).to_string(index=False)


def run_command(args: argparse.Namespace) -> int:
    torch.set_num_threads(1)  # tiny models: one thread is fastest and leaves the other core alone
    doc = WHAT[args.what][1](args)
    if isinstance(doc, int):   # it ran in a child process, which printed its answer
        return doc
    print(json.dumps(doc) if args.json else _text(args.what, doc))
    return 0


__all__ = ["WHAT", "add_arguments", "run_command"]
