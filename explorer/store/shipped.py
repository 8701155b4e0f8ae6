"""The shipped models, each a `ShippedModel` in SHIPPED, rebuilt by `python -m explorer pretrain [NAME ...]`.

A shipped model fixes the task, the model, the training run (a task preset's recommended recipe,
explorer/tasks/recipes.py: "recipe" means that one thing) and the quality the model must keep. The build
trains each one on one thread from its seed (the same torch build gives the same weights bit for
bit) and writes pretrained/<name>/{model.safetensors, meta.json} plus pretrained/manifest.json, a
JSON list with one entry per model, the app's default first. pretrained/README.md lists the fields.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch

from explorer.config import ModelConfig, param_count
from explorer.evaluation import evaluate
from explorer.inspect import blocks
from explorer.model import build_model
from explorer.store.checkpoints import HISTORY_FILE, MODEL_FILE, PRETRAINED_DIR, load_checkpoint, save_checkpoint
from explorer.tasks import PAD, TASK_PRESETS, Batch, Task, TaskConfig, make_task
from explorer.tasks.recipes import recommended
from explorer.train_config import TrainConfig
from explorer.training import StepMetrics, train_steps

MANIFEST = "manifest.json"
FRESH_SEED_OFFSET = 1000   # the fresh validation set: the same task config, seed + 1000
FRESH_EXAMPLES = 500


@dataclass(frozen=True)
class Quality:
    """The level a shipped model must keep: metric >= min, or metric <= max (a model meant to fail)."""

    metric: str = "val_exact"
    min: float | None = None
    max: float | None = None

    def __post_init__(self) -> None:
        if (self.min is None) == (self.max is None):
            raise ValueError("Quality needs exactly one of min= or max=")

    def holds(self, metrics: dict) -> bool:
        value = metrics[self.metric]
        return value >= self.min if self.min is not None else value <= self.max

    def text(self) -> str:
        return f"{self.metric} >= {self.min}" if self.min is not None else f"{self.metric} <= {self.max}"

    def to_dict(self) -> dict:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class ShippedModel:
    """How one shipped model is made. `model` is the base config: vocabularies, arch and max_len
    are filled in from the task (Task.model_config)."""

    name: str
    description: str
    task: TaskConfig
    model: ModelConfig
    train: TrainConfig
    quality: Quality

    def model_config(self, task: Task) -> ModelConfig:
        return task.model_config(self.model)


def _preset(name: str) -> tuple[TaskConfig, ModelConfig, TrainConfig]:
    """A task preset with its recommended recipe (explorer.tasks.recipes): one source for the app and the builds."""
    overrides, train = recommended(name)
    return TASK_PRESETS[name], ModelConfig(max_len=32).replace(**overrides), train


_REVERSAL_TASK, _REVERSAL, _REVERSAL_TRAIN = _preset("reversal-fast")
_ORDER_TASK, _ORDER, _ORDER_TRAIN = _preset("order")
_INDUCTION_TASK, _INDUCTION, _INDUCTION_TRAIN = _preset("induction")
EXACT = "val_exact"
REPEAT = "repeat_acc"   # next-token accuracy on the repeated half (explorer/tasks/learning.py)

SHIPPED: tuple[ShippedModel, ...] = (
    ShippedModel("reversal-fast", "Reverses 4-8 digits (1-10). Pre-LN, sinusoidal positions, 2+2 layers: "
           "cross-attention draws the anti-diagonal.",
           _REVERSAL_TASK, _REVERSAL, _REVERSAL_TRAIN, Quality(EXACT, min=0.99)),
    ShippedModel("reversal-fast-postln", "Twin of reversal-fast with Post-LN (LayerNorm after each residual add, "
           "as in the 2017 paper); same data, seed and recipe.",
           _REVERSAL_TASK, _REVERSAL.replace(norm="post"), _REVERSAL_TRAIN,
           Quality(EXACT, min=0.99)),
    ShippedModel("reversal-fast-learned", "reversal-fast with a learned position table instead of sinusoids.",
           _REVERSAL_TASK, _REVERSAL.replace(pos_encoding="learned"), _REVERSAL_TRAIN,
           Quality(EXACT, min=0.99)),
    ShippedModel("reversal-fast-rope", "reversal-fast with rotary positions (RoPE) in self-attention; "
           "relative positions only, so it needs more steps to find where a sequence ends.",
           _REVERSAL_TASK, _REVERSAL.replace(pos_encoding="rope"), _REVERSAL_TRAIN.replace(steps=2000, lr=5e-3),
           Quality(EXACT, min=0.99)),
    ShippedModel("reversal-seed", "The chapter's exercise 2.3 setting: reverses 10-20 integers in 1..100.",
           *_preset("reversal-seed"), Quality(EXACT, min=0.99)),
    ShippedModel("copy", "Copies 4-8 digits: cross-attention draws the main diagonal.",
           *_preset("copy"), Quality(EXACT, min=0.99)),
    ShippedModel("sort", "Sorts 4-8 digits (1-10): each output attends to the next-smallest input.",
           *_preset("sort"), Quality(EXACT, min=0.98)),
    ShippedModel("order-pe", "Is A before B? Encoder + mean pool with sinusoidal positions: learns it.",
           _ORDER_TASK, _ORDER, _ORDER_TRAIN, Quality(EXACT, min=0.98)),
    ShippedModel("order-nope", "Twin of order-pe without positional encoding: the mean-pooled encoder cannot "
           "see order, so it stays near chance (50%).",
           _ORDER_TASK, _ORDER.replace(pos_encoding="none"), _ORDER_TRAIN, Quality(EXACT, max=0.65)),
    ShippedModel("char-lm", "Character language model on the built-in text (decoder only, 32-character context); "
           "metric is next-character accuracy on held-out text.",
           *_preset("char-lm"), Quality(EXACT, min=0.38)),
    ShippedModel("scan-simple", "SCAN commands to actions (Lake & Baroni 2018), its random split: nearly perfect on "
           "commands it never saw; experiment scan trains the same recipe on the length and add-jump splits.",
           *_preset("scan-simple"), Quality(EXACT, min=0.98)),
    ShippedModel("induction", "A random half, then the same half again: two layers (rotary positions) form an "
           "induction head, which finds the current token earlier on and copies the one after it.",
           _INDUCTION_TASK, _INDUCTION, _INDUCTION_TRAIN, Quality(REPEAT, min=0.9)),
    ShippedModel("induction-1l", "Twin of induction with one layer: no earlier layer can mark each token with the "
           "one before it, so no induction head forms and the repeated half stays mostly unpredicted.",
           _INDUCTION_TASK, _INDUCTION.replace(n_decoder_layers=1), _INDUCTION_TRAIN, Quality(REPEAT, max=0.6)),
    ShippedModel("modular-add", "a + b = (a + b) mod 59, trained full-batch on half the pairs with weight decay: "
           "it memorises them first and generalises (groks) to the other half much later.",
           *_preset("modular-add"), Quality(EXACT, min=0.98)),
)
SHIPPED_NAMES = tuple(r.name for r in SHIPPED)
DEFAULT_MODEL = SHIPPED[0].name


def shipped_model(name: str) -> ShippedModel:
    for r in SHIPPED:
        if r.name == name:
            return r
    raise ValueError(f"no shipped model named {name!r}; choose one of {', '.join(SHIPPED_NAMES)}")


# ---------------------------------------------------------------------------------------------
# Fresh validation data
# ---------------------------------------------------------------------------------------------

def _rows(batch: Batch) -> list[tuple]:
    """Each input row as a tuple, right padding dropped (each split is trimmed to its own longest row)."""
    x = batch.src if batch.src is not None else batch.tgt_in
    if x.is_floating_point():  # vectors: nothing is padding
        return [tuple(r) for r in x.flatten(1).tolist()]
    return [tuple(t for t in r if t != PAD) for r in x.tolist()]


def held_out_task(task_cfg: TaskConfig | dict, offset: int = FRESH_SEED_OFFSET) -> Task:
    """The task regenerated with seed + offset and at least 2 * FRESH_EXAMPLES validation rows, minus
    the rows the original training split contains: sequences the model never saw. (char-lm validates
    on the last tenth of its text whatever the seed, so its fresh set is that same held-out text.)"""
    cfg = TaskConfig.from_dict(task_cfg) if isinstance(task_cfg, dict) else task_cfg
    seen = set(_rows(make_task(cfg).train))
    n_val = cfg.n_val if cfg.name == "char-lm" else max(cfg.n_val, 2 * FRESH_EXAMPLES)
    fresh = make_task(cfg.replace(seed=cfg.seed + offset, n_val=n_val))
    keep = torch.tensor([r not in seen for r in _rows(fresh.val)])
    fields = (getattr(fresh.val, f.name) for f in dataclasses.fields(Batch))
    fresh.val = Batch(*(None if t is None else t[keep] for t in fields))
    return fresh


# ---------------------------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BuildProgress:
    """One training step of model `index` (1-based) of `total`; `rec` is None when a model starts."""

    index: int
    total: int
    name: str
    steps: int
    rec: StepMetrics | None


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def train_shipped(r: ShippedModel, progress: Callable[[StepMetrics], None] | None = None,
                  watch: Callable[[torch.nn.Module, StepMetrics], None] | None = None):
    """(trained model, task, history of StepMetrics): deterministic from r.train.seed on one thread. `watch`
    sees the model after each step (it must only read it: the replays record weights over training)."""
    task = make_task(r.task)
    model = build_model(r.model_config(task), seed=r.train.seed)
    threads = torch.get_num_threads()
    history = []
    try:
        for rec in train_steps(model, task, r.train):
            if rec.stopped:
                raise RuntimeError(f"{r.name}: {rec.stopped}")
            history.append(rec)
            if progress is not None:
                progress(rec)
            if watch is not None:
                watch(model, rec)
    finally:
        torch.set_num_threads(threads)  # train_steps set one thread; leave the caller's setting
    return model.eval(), task, history


def _rounded(metrics: dict) -> dict:
    return {k: round(float(v), 6) for k, v in metrics.items()}


# The CPU kernels the weights are built with. PyTorch's own kernels and MKL's matrix products round
# differently per instruction set and CPU vendor; PyTorch's AVX2 kernels and MKL's strict reproducible
# AVX2 mode compute the same bits on any x86 CPU with AVX2 (pretrained/README.md says more).
KERNELS = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2,STRICT"}


def built_with() -> dict:
    """What the weights depend on besides the recipe: the torch build and the CPU kernels."""
    return {"torch": torch.__version__, "python": platform.python_version(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "mkl_cbwr": os.environ.get("MKL_CBWR", "")}


def build_one(r: ShippedModel, out_dir: Path, progress: Callable[[StepMetrics], None] | None = None) -> dict:
    """Train, evaluate, save r into out_dir/<name>; returns its manifest entry."""
    model, task, history = train_shipped(r, progress)
    seconds = history[-1].elapsed
    metrics = _rounded(evaluate(model, task, max_examples=len(task.val)))
    fresh = _rounded(evaluate(model, held_out_task(r.task), max_examples=FRESH_EXAMPLES))
    cfg = model.cfg
    entry = {"name": r.name, "path": r.name, "default": r.name == DEFAULT_MODEL, "description": r.description,
             "task": r.task.to_dict(), "model": cfg.to_dict(), "train": r.train.to_dict(),
             "quality": r.quality.to_dict(), "metrics": metrics, "fresh_metrics": fresh,
             "train_seconds": round(seconds, 2), "params": param_count(cfg)["total"],
             "built_with": built_with()}
    labels = tuple(label for label, _ in blocks(model))
    (out_dir / r.name).mkdir(parents=True, exist_ok=True)
    pd.DataFrame([rec.to_row(labels) for rec in history]).to_csv(out_dir / r.name / HISTORY_FILE, index=False)
    folder = save_checkpoint(out_dir / r.name, model, {k: entry[k] for k in (
        "name", "description", "task", "train", "quality", "metrics", "fresh_metrics", "train_seconds")})
    for p in folder.iterdir():
        p.chmod(0o644)
    entry["size_bytes"] = _size(folder)
    return entry


def read_manifest(out_dir: Path) -> list[dict]:
    path = Path(out_dir) / MANIFEST
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def _write_manifest(out_dir: Path, entries: list[dict]) -> None:
    order = {n: i for i, n in enumerate(SHIPPED_NAMES)}
    entries = sorted(entries, key=lambda e: order.get(e["name"], len(order)))
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{MANIFEST}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(entries, indent=2) + "\n")
    os.chmod(tmp, 0o644)  # mkstemp makes it private; shipped files are for everyone to read
    os.replace(tmp, out_dir / MANIFEST)


def build(names=None, out_dir=PRETRAINED_DIR, progress: Callable[[BuildProgress], None] | None = None) -> list[dict]:
    """Train and save the named recipes (all by default) into out_dir and update its manifest
    (entries of other models already there are kept). Returns the new entries, in the order of SHIPPED."""
    chosen = [shipped_model(n) for n in names] if names else list(SHIPPED)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    built = []
    for i, r in enumerate(chosen, 1):
        if progress is not None:
            progress(BuildProgress(i, len(chosen), r.name, r.train.steps, None))
        step = (lambda rec, i=i, r=r: progress(BuildProgress(i, len(chosen), r.name, r.train.steps, rec))
                if progress is not None else None)
        entry = build_one(r, out_dir, step)
        built.append(entry)
        # a full build drops entries of models no longer in SHIPPED; a partial one keeps the other models
        kept = [e for e in read_manifest(out_dir)
                if e.get("name") != r.name and (names or e.get("name") in SHIPPED_NAMES)]
        _write_manifest(out_dir, kept + [entry])  # after each model: an interrupted build keeps its work
    return built


def load_seconds(out_dir: Path, entry: dict) -> float:
    start = time.perf_counter()
    load_checkpoint(Path(out_dir) / entry["path"])
    return time.perf_counter() - start


# ---------------------------------------------------------------------------------------------
# Command line: `python -m explorer pretrain [NAME ...] [--out DIR]`
# ---------------------------------------------------------------------------------------------

def _shipped_name(text: str) -> str:
    if text not in SHIPPED_NAMES:
        raise argparse.ArgumentTypeError(f"{text!r} is not a shipped model; choose from {', '.join(SHIPPED_NAMES)}")
    return text


def add_pretrain_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("names", nargs="*", metavar="NAME", type=_shipped_name,
                   help=f"models to rebuild (default: all): {', '.join(SHIPPED_NAMES)}")
    p.add_argument("--out", type=Path, default=PRETRAINED_DIR, help=f"output folder (default {PRETRAINED_DIR})")


class _Printer:
    """Progress lines on stderr: one when a model starts, one every `every` seconds, one at its end."""

    def __init__(self, stream=None, every: float = 2.0) -> None:
        self.stream, self.every, self.last = stream or sys.stderr, every, -math.inf

    def __call__(self, p: BuildProgress) -> None:
        now = time.monotonic()
        rec = p.rec
        if rec is None:
            line = f"[{p.index}/{p.total}] {p.name}: training {p.steps} steps"
        elif rec.step == p.steps or now - self.last >= self.every:
            line = (f"[{p.index}/{p.total}] {p.name}  step {rec.step}/{p.steps}  loss {rec.loss:.4f}  "
                    f"acc {rec.token_acc:.3f}  {rec.elapsed:.1f}s")
            if rec.val_exact is not None:
                line += f"  val_exact {rec.val_exact:.3f}"
        else:
            return
        self.last = now
        print(line, file=self.stream, flush=True)


def _with_kernels(args: argparse.Namespace) -> int | None:
    """Run this command again in a child process with KERNELS set (they act only when set before PyTorch
    and MKL start); its exit code, or None when they are set already."""
    if all(os.environ.get(k) == v for k, v in KERNELS.items()):
        return None
    cmd = [sys.executable, "-m", "explorer", "pretrain", *args.names, "--out", str(args.out)]
    return subprocess.run(cmd, env={**os.environ, **KERNELS}, check=False).returncode


def run_pretrain(args: argparse.Namespace) -> int:
    code = _with_kernels(args)
    if code is not None:
        return code
    out = Path(args.out)
    entries = build(args.names or None, out, progress=_Printer())
    failed = 0
    for e in entries:
        q = Quality(**e["quality"])
        ok = q.holds(e["metrics"]) and q.holds(e["fresh_metrics"])
        failed += not ok
        size = (out / e["path"] / MODEL_FILE).stat().st_size
        print(f"{e['name']:24s} {q.metric} {e['metrics'][q.metric]:.4f} (fresh {e['fresh_metrics'][q.metric]:.4f}, "
              f"needs {q.text().split(' ', 1)[1]})  {e['train_seconds']:7.1f}s  {e['params']:>7,} params  "
              f"{size / 1024:6.0f} KB  load {load_seconds(out, e) * 1000:.0f} ms  {'ok' if ok else 'FAILED'}")
    total = sum(e.get("size_bytes", 0) for e in read_manifest(out))
    print(f"manifest: {out / MANIFEST}  ({len(read_manifest(out))} models, {total / 2**20:.2f} MB)")
    if failed:
        print(f"{failed} model(s) missed their quality threshold", file=sys.stderr)
    return 1 if failed else 0


__all__ = ["Quality", "ShippedModel", "SHIPPED", "SHIPPED_NAMES", "DEFAULT_MODEL", "shipped_model", "held_out_task",
           "BuildProgress", "train_shipped", "build_one", "build", "read_manifest", "load_seconds",
           "add_pretrain_arguments", "run_pretrain", "FRESH_SEED_OFFSET", "FRESH_EXAMPLES", "MANIFEST"]
