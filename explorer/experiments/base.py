"""What every experiment shares: its description (`Experiment`), its outcome (`Result`), the
`Context` that carries progress and the stop event, and small helpers to summarise seeds.

Long-format frames keep results plain data, so a result written to CSV and read back rebuilds
the same figures:

    samples  condition, seed, metric, value          one final number per seed
    table    condition, metric, mean, std, n, expected, prediction
    curves   condition, seed, step, metric, value    values along training (or along layers)
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import torch
from torch import nn

from explorer.analysis.evidence import FAILS, HOLDS, INCONCLUSIVE, Claim, Evidence, overall, verdict
from explorer.evaluation import evaluate
from explorer.limits import check_run
from explorer.search.ray_cluster import RayExecutor
from explorer.tasks import Task
from explorer.train_config import TrainConfig
from explorer.training import StepMetrics, train_steps

SAMPLE_COLUMNS = ("condition", "seed", "metric", "value")
TABLE_COLUMNS = ("condition", "metric", "mean", "std", "n", "expected", "prediction")
CURVE_COLUMNS = ("condition", "seed", "step", "metric", "value")

ProgressFn = Callable[[float, str], None]


class Stopped(Exception):
    """The stop event was set before a single unit of work finished: there is nothing to show."""


class Interrupted(Exception):
    """Raised inside a unit of work when the stop event is set; the unit is dropped."""


# ---------------------------------------------------------------------------------------------
# Description and outcome
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Result:
    """One run of one experiment. Frames are described in the module docstring; `extra` holds
    any further long-format frames an experiment's figures need (e.g. attention patterns).
    `holds` is True when every claim of the seed holds over enough seeds (see .evidence), False when
    one is decided against, None when one is inconclusive or the seed asks an open question.
    `evidence` holds one Evidence per claim (test, estimate, 95% interval, n per condition, reason)."""

    name: str
    table: pd.DataFrame
    samples: pd.DataFrame
    curves: pd.DataFrame | None
    verdict: str
    holds: bool | None
    params: dict
    seconds: float = 0.0
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    partial: bool = False          # stopped early: fewer seeds than asked (never cached)
    cached: bool = False           # read from the cache rather than computed now
    figures: tuple[go.Figure, ...] = ()
    evidence: tuple[Evidence, ...] = ()

    @property
    def outcome(self) -> str:
        """holds, does not hold, equivalent ("no meaningful difference") or inconclusive (evidence.overall)."""
        if self.holds is not None or not self.evidence or self.partial:
            return {True: HOLDS, False: FAILS}.get(self.holds, INCONCLUSIVE)
        return overall(self.evidence)


@dataclass(frozen=True)
class Experiment:
    """A claim of the seeds, made runnable.

    `params` is a frozen dataclass type whose defaults are the default budget; `tiny` an instance
    of it that finishes in seconds (tests, CI). `run(params, ctx)` does the work and returns a
    Result without figures; `figures(result)` draws them from the result's frames alone, so a
    cached result gets the same figures without rerunning anything.

    Work (`work_units`) is training runs per seed x seeds x steps. Runs per seed are `conditions`
    times the length of every tuple parameter (epsilons, heads, ...); `work(params)`, if given,
    replaces the whole count (the sweep, whose steps may be an axis).
    """

    name: str
    title: str
    question: str
    prediction: str
    source: str
    params: type
    tiny: Any
    run: Callable[[Any, Context], Result]
    figures: Callable[[Result], list[go.Figure]]
    version: int = 1   # bump when a change makes old cached results wrong
    conditions: int = 1
    work: Callable[[Any], int] | None = None

    def runs_per_seed(self, params) -> int:
        n = self.conditions
        for f in dataclasses.fields(params):
            value = getattr(params, f.name)
            if isinstance(value, tuple):
                n *= len(value)
        return n

    def work_units(self, params) -> int:
        """Training steps this configuration takes in all: runs per seed x seeds x steps."""
        if self.work is not None:
            return int(self.work(params))
        return self.runs_per_seed(params) * params.seeds * params.steps

    def make_params(self, overrides: dict | None = None, tiny: bool = False):
        """Defaults (or the tiny budget) with `overrides` applied; unknown names raise ValueError."""
        base = self.tiny if tiny else self.params()
        overrides = dict(overrides or {})
        known = {f.name for f in dataclasses.fields(self.params)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"experiment {self.name!r} has no parameter {', '.join(unknown)}; "
                             f"valid: {', '.join(sorted(known))}")
        typed = {k: tuple(v) if isinstance(getattr(base, k), tuple) and isinstance(v, list) else v
                 for k, v in overrides.items()}  # JSON gives lists where the params hold tuples
        return dataclasses.replace(base, **typed)


# ---------------------------------------------------------------------------------------------
# Parameter checks (each names the field and what is valid)
# ---------------------------------------------------------------------------------------------

def whole(name: str, value, low: int = 1, high: int | None = None) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
    if not ok or (high is not None and value > high):
        span = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{name}={value!r} must be a whole number {span}")


def number(name: str, value, low: float = 0.0, below: float = math.inf, low_open: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value > low if low_open else value >= low) and value < below
    if not ok:
        bound = f"> {low}" if low_open else f">= {low}"
        upper = "" if below == math.inf else f" and < {below}"
        raise ValueError(f"{name}={value!r} must be a number {bound}{upper}")


def choice(name: str, value, valid: Sequence) -> None:
    if value not in valid:
        raise ValueError(f"{name}={value!r} is not valid; choose one of {', '.join(map(str, valid))}")


# ---------------------------------------------------------------------------------------------
# Progress, stop, and training inside an experiment
# ---------------------------------------------------------------------------------------------

class Context:
    """Handed to `Experiment.run`: reports progress, honours the stop event between units of work
    (and between training steps, dropping the unfinished unit), and carries the sweep executor."""

    def __init__(self, progress: ProgressFn | None = None, stop: threading.Event | None = None,
                 executor=None) -> None:
        self._progress, self.stop, self.executor = progress, stop, executor
        self.stopped = False
        self.finished, self.total = 0, 0   # units of work done and asked for (set by collect, or the sweep)
        self._start, self._width, self._text, self._last = 0.0, 1.0, "", 0.0

    @property
    def stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def stopped_reason(self) -> str | None:
        """Why no claim can be decided because of a stop ("run stopped after 3 of 10 runs"), or None."""
        if not self.stopped:
            return None
        return f"run stopped after {self.finished} of {self.total} runs"

    def report(self, within: float, text: str | None = None, force: bool = False) -> None:
        """Progress `within` (0..1) of the current unit; throttled to ten reports a second."""
        now = time.monotonic()
        if self._progress is None or (not force and now - self._last < 0.1):
            return
        self._last = now
        self._progress(min(1.0, self._start + self._width * within), text or self._text)

    def __getstate__(self) -> dict:
        # sent with `work` to a Ray worker: there nothing reports or stops (the driver cancels the task)
        return {**self.__dict__, "_progress": None, "stop": None, "executor": None}

    def collect(self, units: Sequence, work: Callable[[Any], Any], describe: Callable[[Any], str] = str) -> list:
        """[(unit, work(unit))] for every unit finished before a stop; sets `stopped` if cut short. With a
        RayExecutor the units run at once on the cluster's CPUs, one task each."""
        if isinstance(self.executor, RayExecutor):
            return self._collect_on(self.executor, units, work)
        done, n = [], len(units)
        self.total = n
        for i, unit in enumerate(units):
            if self.stopping:
                self.stopped = True
                break
            self._start, self._width, self._text = i / n, 1 / n, f"{describe(unit)} ({i + 1}/{n})"
            self.report(0.0, force=True)
            try:
                done.append((unit, work(unit)))
                self.finished = len(done)
            except Interrupted:
                self.stopped = True
                break
        self._start, self._width = 0.0, 1.0
        self.report(1.0, "stopped" if self.stopped else "done", force=True)
        return done

    def _collect_on(self, executor, units: Sequence, work: Callable[[Any], Any]) -> list:
        """collect's units as tasks of `executor`, `executor.workers` at a time; a stop cancels the unfinished
        ones (as a local stop drops the unit it was in)."""
        n, results, running, todo = len(units), {}, {}, list(enumerate(units))
        self.total = n
        try:
            while todo or running:
                if self.stopping:
                    self.stopped = True
                    break
                while todo and len(running) < executor.workers:
                    i, unit = todo.pop(0)
                    running[executor.submit(run_unit, (work, unit))] = i
                finished, _ = wait(running, timeout=0.25, return_when=FIRST_COMPLETED)
                for future in finished:
                    results[running.pop(future)] = future.result()
                self.finished = len(results)
                self.report(len(results) / n, f"{len(results)}/{n} runs done on the Ray cluster", force=bool(finished))
        finally:
            for future in running:
                executor.cancel(future)
        self.report(1.0, "stopped" if self.stopped else "done", force=True)
        return [(units[i], results[i]) for i in sorted(results)]

    def train(self, model: nn.Module, task: Task, cfg: TrainConfig,
              each: Callable[[StepMetrics], None] | None = None) -> list[StepMetrics]:
        """Run the trainer to the end (or to a divergence); raises Interrupted on stop, and ValueError (the Train
        page's message) for a run over the limits every run shares, before it trains."""
        check_run(model.cfg, cfg, task)
        history, steps = [], train_steps(model, task, cfg)
        try:
            for rec in steps:
                history.append(rec)
                if each is not None:
                    each(rec)
                if self.stopping:
                    raise Interrupted
                self.report(rec.step / cfg.steps, f"{self._text} · step {rec.step}/{cfg.steps}")
        finally:
            steps.close()
        return history


def run_unit(arg: tuple) -> Any:
    """One unit of `Context.collect` in a worker (a Ray task): single-threaded, as the search's trials."""
    work, unit = arg
    torch.set_num_threads(1)
    return work(unit)


def measuring(**fields) -> TrainConfig:
    """A TrainConfig with the loss-spike guard off: the app stops a run whose loss jumps 2 nats above its
    first value, but an experiment measures what training does, and such runs often recover (a deep
    stack at lr 0.01 does). Non-finite losses still end a run, which then reports it."""
    return TrainConfig(**{"spike_nats": 0.0, **fields})


def final_metrics(model: nn.Module, task: Task, history: list[StepMetrics], examples: int) -> dict:
    """The validation metrics after training; a diverged run (no final evaluation) is evaluated now."""
    last = history[-1] if history else None
    if last is not None and last.val_exact is not None and last.stopped is None:
        return {"val_loss": last.val_loss, "val_token_acc": last.val_token_acc, "val_exact": last.val_exact}
    return evaluate(model, task, examples)


def history_curves(history: list[StepMetrics], condition: str, seed: int, metrics: Iterable[str]) -> list[dict]:
    """Long-format curve rows for the given StepMetrics fields (None = not measured that step)."""
    rows = []
    for rec in history:
        for m in metrics:
            value = getattr(rec, m)
            if value is not None:
                rows.append(dict(condition=condition, seed=seed, step=rec.step, metric=m, value=float(value)))
    return rows


# ---------------------------------------------------------------------------------------------
# Frames and summaries
# ---------------------------------------------------------------------------------------------

def frame(rows: list[dict], columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns))


def summarise(samples: pd.DataFrame, predictions: dict | None = None) -> pd.DataFrame:
    """Mean, std (over seeds, n - 1 in the denominator; 0 for one seed) and n per (condition, metric),
    in order of first appearance. `predictions` maps (condition, metric) to (expected number or
    None, prediction text)."""
    predictions = predictions or {}
    rows = []
    keys = list(dict.fromkeys(zip(samples["condition"], samples["metric"])))
    for cond, metric in keys:
        v = samples.loc[(samples["condition"] == cond) & (samples["metric"] == metric), "value"].astype(float)
        v = v[np.isfinite(v)]
        expected, text = predictions.get((cond, metric), (None, ""))
        rows.append(dict(condition=cond, metric=metric, mean=float(v.mean()) if len(v) else math.nan,
                         std=float(v.std(ddof=1)) if len(v) > 1 else 0.0, n=int(len(v)),
                         expected=math.nan if expected is None else float(expected), prediction=text))
    return frame(rows, TABLE_COLUMNS)


def build_result(name: str, params, outputs: list, predictions: dict,
                 measure: Callable[[pd.DataFrame], tuple[str, Sequence[Claim]]], ctx: Context | None,
                 extra: dict | None = None, with_curves: bool = True) -> Result:
    """A Result from collected [(unit, (sample rows, curve rows))]. `measure(table)` gives (what was
    measured, in words; the seed's claims); the claims are decided over the per-seed samples by
    `evidence.verdict`, inconclusive whatever the numbers if `ctx` was stopped. Seconds, partial and
    figures are filled in by the runner."""
    sample_rows = [r for _, (s, _c) in outputs for r in s]
    curve_rows = [r for _, (_s, c) in outputs for r in c]
    samples = frame(sample_rows, SAMPLE_COLUMNS)
    table = summarise(samples, predictions)
    text, claims = measure(table)
    judged = verdict(claims, samples, None if ctx is None else ctx.stopped_reason())
    text = ". ".join(t for t in (text.rstrip("."), judged.text) if t)
    return Result(name=name, table=table, samples=samples,
                  curves=frame(curve_rows, CURVE_COLUMNS) if with_curves else None, verdict=text,
                  holds=judged.holds, params=dataclasses.asdict(params), extra=dict(extra or {}),
                  evidence=judged.evidence)


def seed_major(seeds: int, conditions: Sequence) -> list[tuple[int, Any]]:
    """Units in the order (seed 0: every condition), (seed 1: ...): a stop after the first round
    still leaves every condition measured."""
    return [(seed, c) for seed in range(seeds) for c in conditions]


__all__ = ["SAMPLE_COLUMNS", "TABLE_COLUMNS", "CURVE_COLUMNS", "Result", "Experiment", "Context", "Stopped",
           "Interrupted", "measuring", "build_result", "seed_major", "summarise", "frame", "final_metrics",
           "history_curves", "whole", "number", "choice", "Claim", "Evidence"]
