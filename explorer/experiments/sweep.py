"""Sweep: two axes (d_model x n_heads, n_layers x lr, ...), every cell trained for the same budget,
a heatmap of the final validation metric.

Cells are independent, so they run through a `SweepExecutor`: anything with
`map(fn, cells) -> iterator of fn(cell)` in completion order. `ProcessExecutor` spreads them over
the machine's cores (one torch thread per worker process); `SerialExecutor` runs them in turn (tests,
or a server that must keep its cores). Another executor (a job queue, a cluster) only needs `map`.
A cell whose configuration is invalid (d_model not divisible by n_heads, ...) is reported as NaN
with the reason, not as a failure of the whole sweep.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd
import torch

from explorer.figures.results import sweep_heatmap
from explorer.model import build_model
from explorer.tasks import TASK_PRESETS, make_task
from explorer.training import train_steps

from .base import Context, Experiment, Result, build_result, choice, measuring, number, whole

# axis -> (which config it sets, value type)
AXES: dict[str, tuple[str, type]] = {
    "d_model": ("model", int), "n_heads": ("model", int), "n_layers": ("model", int), "d_ff": ("model", int),
    "pos_encoding": ("model", str), "norm": ("model", str), "dropout": ("model", float),
    "lr": ("train", float), "steps": ("train", int), "batch_size": ("train", int), "warmup": ("train", int),
    "label_smoothing": ("train", float),
}
METRICS = ("val_exact", "val_token_acc")
GRID_COLUMNS = ["x", "y", "seed", "value", "seconds", "error"]


class SweepExecutor(Protocol):
    def map(self, fn: Callable[[Any], Any], cells: Sequence) -> Iterator[Any]:
        """fn(cell) for every cell, yielded as each finishes (any order). Closing the iterator early
        cancels the cells not yet started."""


class SerialExecutor:
    def map(self, fn, cells):
        for cell in cells:
            yield fn(cell)


class ProcessExecutor:
    """One worker process per core (spawned, so no torch state is forked), one torch thread each."""

    def __init__(self, max_workers: int | None = None) -> None:
        self.max_workers = max_workers or os.cpu_count() or 1

    def map(self, fn, cells):
        workers = min(self.max_workers, max(1, len(cells)))
        pool = ProcessPoolExecutor(max_workers=workers, initializer=torch.set_num_threads, initargs=(1,),
                                   mp_context=multiprocessing.get_context("spawn"))
        try:
            for future in as_completed([pool.submit(fn, c) for c in cells]):
                yield future.result()
        finally:  # cells already running finish in the background; the rest never start
            pool.shutdown(wait=False, cancel_futures=True)


@dataclass(frozen=True)
class SweepParams:
    task: str = "reversal-fast"
    x_axis: str = "d_model"
    x_values: tuple = (16, 32, 64)
    y_axis: str = "n_heads"
    y_values: tuple = (1, 2, 4)
    d_model: int = 32            # every cell starts from these and changes its two axes
    n_heads: int = 4
    n_layers: int = 2
    steps: int = 300
    batch_size: int = 64
    lr: float = 3e-3
    warmup: int = 50
    metric: str = "val_exact"
    eval_examples: int = 200
    seeds: int = 1

    def __post_init__(self) -> None:
        choice("task", self.task, tuple(TASK_PRESETS))
        choice("metric", self.metric, METRICS)
        for axis, values, name in ((self.x_axis, self.x_values, "x"), (self.y_axis, self.y_values, "y")):
            choice(f"{name}_axis", axis, tuple(AXES))
            typ = AXES[axis][1]
            kinds = (int, float) if typ is float else (typ,)
            if not values or not all(isinstance(v, kinds) and not isinstance(v, bool) for v in values):
                raise ValueError(f"{name}_values={values!r} must list one or more {typ.__name__} values for "
                                 f"{name}_axis={axis!r}")
        if self.x_axis == self.y_axis:
            raise ValueError(f"x_axis and y_axis are both {self.x_axis!r}; pick two different axes")
        for name in ("d_model", "n_heads", "n_layers", "steps", "batch_size", "eval_examples", "seeds"):
            whole(name, getattr(self, name))
        whole("warmup", self.warmup, 0)
        number("lr", self.lr, 0.0, low_open=True)


def _cells(p: SweepParams) -> list[dict]:
    base = dict(task=p.task, d_model=p.d_model, n_heads=p.n_heads, n_layers=p.n_layers, steps=p.steps,
                batch_size=p.batch_size, lr=p.lr, warmup=p.warmup, metric=p.metric, eval_examples=p.eval_examples)
    return [dict(base, **{p.x_axis: x, p.y_axis: y}, x=x, y=y, seed=s)
            for s in range(p.seeds) for y in p.y_values for x in p.x_values]


def train_cell(cell: dict) -> dict:
    """Train one cell from scratch; runs in a worker process, so it takes and returns plain data."""
    start = time.perf_counter()
    out = dict(x=cell["x"], y=cell["y"], seed=cell["seed"], value=math.nan, seconds=0.0, error="")
    try:
        data = TASK_PRESETS[cell["task"]].replace(seed=cell["seed"])
        if data.name == "order-vectors":  # the notebook's vectors are d_model wide
            data = data.replace(dim=cell["d_model"])
        task = make_task(data)
        fields = {k: cell[k] for k, (where, _) in AXES.items() if where == "model" and k in cell}
        layers = fields.pop("n_layers")
        fields.setdefault("d_ff", 2 * cell["d_model"])
        # every field as an override, so the task cannot quietly swap an invalid choice for a valid one
        model_cfg = task.model_config(None, n_encoder_layers=layers, n_decoder_layers=layers, **fields)
        train = measuring(steps=cell["steps"], batch_size=cell["batch_size"], lr=cell["lr"],
                            warmup=min(cell["warmup"], cell["steps"] - 1),
                            label_smoothing=cell.get("label_smoothing", 0.0), seed=cell["seed"], eval_every=0,
                            eval_examples=cell["eval_examples"])
        model = build_model(model_cfg, seed=cell["seed"])
        last = list(train_steps(model, task, train))[-1]
        out["value"] = math.nan if last.stopped else float(getattr(last, cell["metric"]))
        out["error"] = last.stopped or ""
    except ValueError as e:  # an invalid combination: this cell only
        out["error"] = str(e)
    out["seconds"] = time.perf_counter() - start
    return out


def _label(p: SweepParams, x, y) -> str:
    return f"{p.x_axis}={x}, {p.y_axis}={y}"


def run(p: SweepParams, ctx: Context) -> Result:
    cells = _cells(p)
    executor = ctx.executor or (ProcessExecutor() if len(cells) > 1 else SerialExecutor())
    rows = []
    ctx.report(0.0, f"{len(cells)} cells, {type(executor).__name__}", force=True)
    results = executor.map(train_cell, cells)
    try:
        for out in results:
            rows.append(out)
            ctx.report(len(rows) / len(cells), f"cell {_label(p, out['x'], out['y'])} done "
                                               f"({len(rows)}/{len(cells)})", force=True)
            if ctx.stopping and len(rows) < len(cells):
                ctx.stopped = True
                break
    finally:
        close = getattr(results, "close", None)  # a generator cancels the cells not yet started
        if close is not None:
            close()
    place = {(c["seed"], c["y"], c["x"]): i for i, c in enumerate(cells)}   # grid order, not completion order
    rows.sort(key=lambda r: place[(r["seed"], r["y"], r["x"])])
    grid = pd.DataFrame(rows, columns=GRID_COLUMNS)
    samples = [dict(condition=_label(p, r["x"], r["y"]), seed=r["seed"], metric=p.metric, value=r["value"])
               for r in rows]
    outputs = [(None, ([s], [])) for s in samples]
    best = max(rows, key=lambda r: -math.inf if math.isnan(r["value"]) else r["value"], default=None)

    def measure(table) -> tuple[str, list]:
        if best is None or math.isnan(best["value"]):
            return "no cell finished with a value", []
        worst = table.loc[table["mean"].idxmin()]
        bad = int(grid["error"].astype(bool).sum())
        budget = "" if "steps" in (p.x_axis, p.y_axis) else f" after {p.steps} steps"
        return (f"best {p.metric} {table['mean'].max():.3f} at {table.loc[table['mean'].idxmax(), 'condition']}, "
                f"worst {worst['mean']:.3f} at {worst['condition']}{budget}"
                + (f"; {bad} cell(s) could not run (see the grid's error column)" if bad else "")
                + "; the seeds make no claim here", [])
    ctx.finished, ctx.total = len(rows), len(cells)
    return build_result(NAME, p, outputs, {}, measure, ctx, with_curves=False, extra={"grid": grid})


def _matrix(grid: pd.DataFrame, params: dict, column: str) -> np.ndarray:
    xs, ys = [str(v) for v in params["x_values"]], [str(v) for v in params["y_values"]]
    z = np.full((len(ys), len(xs)), np.nan)
    g = grid.assign(xs=grid["x"].astype(str), ys=grid["y"].astype(str)).groupby(["ys", "xs"])[column].mean()
    for (y, x), v in g.items():
        if x in xs and y in ys:
            z[ys.index(y), xs.index(x)] = v
    return z


def draw(r: Result) -> list:
    p, grid = r.params, r.extra["grid"]
    # cached grids come back from CSV with x/y as numbers or text: compare as text
    values, seconds = _matrix(grid, p, "value"), _matrix(grid, p, "seconds")
    top = float(np.nanmax(seconds)) if np.isfinite(seconds).any() else 1.0
    budget = "" if "steps" in (p["x_axis"], p["y_axis"]) else f" after {p['steps']} steps"
    return [sweep_heatmap(values, p["x_values"], p["y_values"], p["x_axis"], p["y_axis"],
                          f"Final {p['metric']}{budget} (mean over seeds)"),
            sweep_heatmap(seconds, p["x_values"], p["y_values"], p["x_axis"], p["y_axis"],
                          "Training seconds per cell", zmax=max(top, 1e-9))]


NAME = "sweep"
EXPERIMENT = Experiment(
    name=NAME, title="Hyperparameter sweep",
    question="Over two settings at once, which combinations learn the task within a fixed training budget?",
    prediction="No single claim: the chapter's rules of thumb (d_ff = 4 d_model, heads that divide d_model, "
               "warmup for Post-LN) say where to look.",
    source="chapter §2.8 hyperparameter reference",
    params=SweepParams, tiny=SweepParams(x_values=(16, 32), y_values=(1, 2), steps=15, n_layers=1,
                                         eval_examples=10),
    run=run, figures=draw, work=lambda p: sum(cell["steps"] for cell in _cells(p)))
