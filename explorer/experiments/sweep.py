"""Sweep: two axes (d_model x n_heads, n_layers x lr, ...), every cell trained for the same budget,
a heatmap of the final validation metric.

The sweep is an Optuna study with a grid sampler over its two axes and its seeds, run by the search's
driver (explorer/search), so a cell is a trial like any other. Cells run through an executor
(explorer/search/executors.py): `ProcessExecutor` spreads them over the machine's cores (one torch thread
per worker process), `SerialExecutor` runs them in turn (tests, or a server that must keep its cores),
a `RayExecutor` on a cluster. A cell whose configuration is invalid (d_model not divisible by n_heads,
...) is reported as NaN with the reason, not as a failure of the whole sweep.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np
import pandas as pd

from explorer.experiments.base import Context, Experiment, Result, build_result, choice, number, whole
from explorer.figures.results import sweep_heatmap
from explorer.search.executors import ProcessExecutor, SerialExecutor
from explorer.tasks import TASK_PRESETS, own_data, presets

# axis -> (which config it sets, value type)
AXES: dict[str, tuple[str, type]] = {
    "d_model": ("model", int), "n_heads": ("model", int), "n_layers": ("model", int), "d_ff": ("model", int),
    "pos_encoding": ("model", str), "norm": ("model", str), "residual": ("model", str),
    "attn_scale": ("model", str), "dropout": ("model", float),
    "lr": ("train", float), "steps": ("train", int), "batch_size": ("train", int), "warmup": ("train", int),
    "label_smoothing": ("train", float),
}
METRICS = ("val_exact", "val_token_acc")
GRID_COLUMNS = ["x", "y", "seed", "value", "seconds", "error"]


class SweepExecutor(Protocol):
    """Where the cells run (explorer/search/executors.py): `workers`, `ready()`, `submit(fn, arg)` returning a
    Future, `cancel(future)`, `close()`."""

    workers: int

    def submit(self, fn: Callable[[Any], Any], arg: Any) -> Future: ...


@dataclass(frozen=True)
class SweepParams:
    takes_own_data: ClassVar[bool] = True   # task="pairs": a teacher's TSV
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
    data: str = field(default="", repr=False)   # task "pairs": the TSV's text

    def __post_init__(self) -> None:
        choice("task", self.task, (*TASK_PRESETS, own_data.OWN))
        presets.preset_or_pairs(self.task, self.data)  # a refused TSV names its line
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


def search_spec(p: SweepParams):
    """The sweep as a study (explorer.search.SearchSpec): a grid over its two axes and its seeds (each seed
    draws its own task data)."""
    from explorer.search.study import SearchSpec  # Optuna loads when a sweep runs, not with the app

    base = {k: getattr(p, k) for k in ("d_model", "n_heads", "n_layers", "steps", "batch_size", "lr", "warmup")
            if k not in (p.x_axis, p.y_axis)}
    space = tuple(f"{axis}={','.join(str(v) for v in values)}"
                  for axis, values in ((p.x_axis, p.x_values), (p.y_axis, p.y_values)))
    return SearchSpec(task=p.task, space=(*space, "seed=" + ",".join(str(s) for s in range(p.seeds))),
                      trials=len(_cells(p)), sampler="grid", metric=p.metric, storage="memory", base=base, data=p.data,
                      eval_examples=p.eval_examples, keep_runs=False, data_seed_from_trial=True,
                      refuse_invalid=False)


def _row(p: SweepParams, trial: dict) -> dict:
    value = math.nan if trial["value"] is None or trial["state"] != "COMPLETE" else trial["value"]
    return dict(x=trial["params"][p.x_axis], y=trial["params"][p.y_axis], seed=trial["params"]["seed"],
                value=value, seconds=trial["seconds"] or 0.0, error=trial["error"] or "")


def _label(p: SweepParams, x, y) -> str:
    return f"{p.x_axis}={x}, {p.y_axis}={y}"


def run(p: SweepParams, ctx: Context) -> Result:
    cells = _cells(p)
    executor = ctx.executor or (ProcessExecutor() if len(cells) > 1 else SerialExecutor())
    ctx.report(0.0, f"{len(cells)} cells, {type(executor).__name__}", force=True)

    def recorded(study) -> None:
        done = [t for t in study.get_trials(deepcopy=False) if t.state.is_finished()]
        if done:
            last = max(done, key=lambda t: t.datetime_complete)
            ctx.report(len(done) / len(cells), f"cell {_label(p, last.params[p.x_axis], last.params[p.y_axis])} "
                                               f"done ({len(done)}/{len(cells)})", force=True)

    from explorer.search.driver import run_search  # Optuna again: loaded when a sweep runs, not with the app

    outcome = run_search(search_spec(p), executor, on_record=recorded, stop=ctx.stop)
    rows = [_row(p, t) for t in outcome["trials"] if t["state"] != "INTERRUPTED"]
    ctx.stopped = outcome["stopped"] and len(rows) < len(cells)
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
