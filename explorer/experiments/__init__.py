"""Experiments: every claim of the seeds, reproduced with error bars, in one call.

    from explorer.experiments import EXPERIMENTS, run_cached, cached

    exp = EXPERIMENTS["pe-order"]          # name, title, question, prediction, source, params, tiny
    result = cached("pe-order")            # instant if someone already ran this configuration, else None
    result = run_cached("pe-order", {"seeds": 3}, progress=lambda f, text: ..., stop=threading.Event())
    result.table, result.figures, result.verdict, result.holds

Registry
    EXPERIMENTS (`registry`): dict name -> Experiment, in the order a page should list them. An Experiment has
    `name`, `title`, `question` (one sentence), `prediction` (what the seed claims), `source` (where in
    the seeds), `params` (a frozen dataclass type; its defaults are the default budget, about a minute or
    two on one core), `tiny` (a params instance that runs in seconds) and `make_params(overrides, tiny)`.
    Parameters validate themselves: a bad value raises ValueError naming the field.

Running
    run_cached(name, params=None, progress=None, stop=None, cache_dir=None, executor=None, refresh=False)
        -> Result. params: None (defaults), a dict of overrides, or a params instance. progress(fraction,
        text) is called from the running thread (throttled to ~10/s). stop: a threading.Event; it is
        honoured between seeds and between training steps. A stopped run returns what finished
        (`partial=True`, not cached) or raises `Stopped` when nothing had. `executor` runs the sweep's
        cells (default: ProcessExecutor over all cores; pass SerialExecutor() to stay on this thread).
    cached(name, params=None, cache_dir=None) -> Result | None      never computes anything
    run(name, params=None, progress=None, stop=None, executor=None) -> Result   always computes, no cache
    The cache lives in runs_dir()/experiments/cache/<name>/<key>/ (key: name, version, params).

Result (frozen)
    table     DataFrame: condition, metric, mean, std, n, expected, prediction — one row per
              condition and metric; mean ± std over seeds (std with n - 1; 0 for one seed); `expected`
              is the seed's number when it gives one (NaN otherwise), `prediction` its words.
    samples   DataFrame: condition, seed, metric, value — the per-seed numbers behind the table.
    curves    DataFrame or None: condition, seed, step, metric, value (for gradient profiles, step = layer).
    extra     dict of further frames a figure needs (alignment-heads: ranking, attention, labels;
              sweep: grid with x, y, seed, value, seconds, error).
    figures   tuple of plotly go.Figure, built by explorer.figures from the frames (so cached results
              have them too); a page only renders them.
    verdict   what was measured, then one sentence per claim of the seed: "As predicted: ... (difference
              1.3, 95% CI [0.8, 1.9], Welch's t, 3 seeds each)", "NOT as predicted: ...", or "Inconclusive
              whether ...: too few seeds (n=1; at least 3 decide)" / "the 95% interval [a, b] spans 0" /
              "run stopped after 3 of 10 runs"; an open question reports its interval ("Open question, ...").
    holds     Claims are decided over at least MIN_SEEDS (3) seeds per condition, by a 95% interval on
              one side of the claim's threshold. True when every claim holds, False when one is decided
              against, None otherwise (one inconclusive, an open question, or a stopped run).
    evidence  tuple of Evidence, one per claim: test ("Welch's t", "one-sample t", "paired t"), claim,
              metric, conditions, estimate, interval (low, high), threshold, above, n, df, holds, reason.
    params (dict), seconds, partial, cached.

Work cap
    work_units(name, params) -> int: training runs per seed x seeds x steps (the sweep: its cells' steps
    added up). refusal_of(name, params) -> str | None: one line naming MAX_WORK when the configuration
    is over it, else None; run() and run_cached() raise ValueError with that line.

Also: `save_csv(result, folder)` writes table.csv, samples.csv, curves.csv, extra-*.csv and result.json;
`load_result(folder)` reads them back; `own_data_experiments()` names those that take a teacher's pairs;
`parse_values("16, 32")` reads a tuple parameter as the page and the command line take it (`params`).
The CLI is `python -m explorer experiment NAME` (explorer/cli/experiment.py).
"""

from __future__ import annotations

from explorer.analysis.evidence import MIN_SEEDS, Claim, Evidence
from explorer.experiments.base import CURVE_COLUMNS, SAMPLE_COLUMNS, TABLE_COLUMNS, Context, Experiment, Result, Stopped
from explorer.experiments.params import auto_value, parse_values, takes_own_data
from explorer.experiments.registry import EXPERIMENTS, own_data_experiments
from explorer.experiments.runner import (
    CODE_VERSION,
    MAX_WORK,
    cache_key,
    cache_path,
    cached,
    load_result,
    refusal_of,
    run,
    run_cached,
    save_csv,
    work_units,
)
from explorer.experiments.sweep import ProcessExecutor, SerialExecutor, SweepExecutor

__all__ = ["EXPERIMENTS", "Experiment", "Result", "Context", "Stopped", "TABLE_COLUMNS", "SAMPLE_COLUMNS",
           "CURVE_COLUMNS", "run", "run_cached", "cached", "cache_key", "cache_path", "save_csv", "load_result",
           "CODE_VERSION", "SweepExecutor", "ProcessExecutor", "SerialExecutor", "Evidence", "Claim", "MIN_SEEDS",
           "MAX_WORK", "work_units", "refusal_of", "own_data_experiments", "takes_own_data", "parse_values",
           "auto_value"]
