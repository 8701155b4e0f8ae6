"""`python -m explorer experiment NAME [--tiny] [--seeds N] [--set key=value ...] [--out DIR]`.

Progress goes to stderr, the table, the verdict and its evidence (95% intervals over seeds) to stdout,
CSV files to --out (default runs_dir()/experiments/NAME/). Results go through the same cache as the app,
so a configuration run here shows up at once on the Experiments page (and the other way round); --fresh
recomputes. A configuration over the work cap (runner.MAX_WORK training steps in all) is refused with
one line and exit code 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import threading
from pathlib import Path

import pandas as pd

from explorer.analysis.evidence import OPEN, equivalence_text, fmt, fmt_interval
from explorer.cli.common import Progress, UsageError, on_ctrl_c, own_file
from explorer.experiments import (
    EXPERIMENTS,
    ProcessExecutor,
    Result,
    SerialExecutor,
    Stopped,
    own_data_experiments,
    parse_values,
    refusal_of,
    run_cached,
    save_csv,
)
from explorer.store.runs import runs_dir
from explorer.tasks import own_data


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", metavar="NAME", help=f"one of: {', '.join(EXPERIMENTS)}")
    p.add_argument("--list", action="store_true", help="list the experiments and their parameters")
    p.add_argument("--tiny", action="store_true", help="the tiny budget (seconds; for tests and CI)")
    p.add_argument("--seeds", type=int, metavar="N", help="number of seeds (default: the experiment's)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="change a parameter, e.g. --set steps=200 --set x_values=16,32 (repeatable)")
    p.add_argument("--data", metavar="FILE.tsv", help="your own pairs (source<TAB>target a line) as the task, for "
                                                      f"{', '.join(own_data_experiments())}")
    p.add_argument("--out", type=Path, metavar="DIR", help="CSV folder (default: runs/experiments/NAME)")
    p.add_argument("--fresh", action="store_true", help="recompute even if the result is cached")
    p.add_argument("--workers", type=int, metavar="N", help="sweep: worker processes (default: all cores; 1 = "
                                                            "in this process)")


def parse_value(field: str, default, text: str):
    """A --set value converted to the type of the parameter's default."""
    try:
        if isinstance(default, bool):
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError
            return text.lower() in ("true", "1", "yes")
        if isinstance(default, tuple):
            return parse_values(text)
        return type(default)(text)
    except ValueError:
        raise UsageError(f"--set {field}={text}: expected a {type(default).__name__}") from None


def overrides(exp, args: argparse.Namespace) -> dict:
    defaults = exp.tiny if args.tiny else exp.params()
    out = {}
    for item in args.set:
        key, sep, text = item.partition("=")
        if not sep or not hasattr(defaults, key.strip()):
            valid = ", ".join(f.name for f in dataclasses.fields(defaults))
            raise UsageError(f"--set {item!r}: use KEY=VALUE with KEY one of {valid}")
        out[key.strip()] = parse_value(key.strip(), getattr(defaults, key.strip()), text)
    if args.seeds is not None:
        out["seeds"] = args.seeds
    if args.data is not None:
        if exp.name not in own_data_experiments():
            raise UsageError(f"--data: experiment {exp.name!r} makes its own data; the experiments that take your "
                             f"pairs are {', '.join(own_data_experiments())}")
        out.update(task=own_data.OWN, data=own_file(args.data).text)
    return out


def describe() -> str:
    lines = []
    for exp in EXPERIMENTS.values():
        params = ", ".join(f"{f.name}={getattr(exp.params(), f.name)!r}" for f in dataclasses.fields(exp.params))
        lines += [f"{exp.name}: {exp.title}", f"    {exp.question}", f"    predicts: {exp.prediction}",
                  f"    params: {params}", ""]
    return "\n".join(lines)


def format_table(table: pd.DataFrame) -> str:
    def cell(m, s):
        return "" if math.isnan(m) else f"{m:.4g} ± {s:.2g}"
    shown = pd.DataFrame({"condition": table["condition"], "metric": table["metric"],
                          "mean ± std": [cell(m, s) for m, s in zip(table["mean"], table["std"])],
                          "n": table["n"], "the seed predicts": table["prediction"]})
    return shown.to_string(index=False)


def format_evidence(result: Result) -> str:
    """One line per claim: the test, what it compares, the estimate and its 95% interval, n, df, outcome."""
    lines = []
    for e in result.evidence:
        what = " - ".join(e.conditions) + f", {e.metric}"
        interval = ("no interval (n < 2)" if math.isnan(e.interval[0]) else
                    f"{e.level:.0%} CI {fmt_interval(*e.interval, e.unit, e.difference)}")
        df = "" if math.isnan(e.df) else f", df {e.df:.1f}"
        decided = {True: "holds", False: "does not hold"}.get(e.holds, f"inconclusive: {e.reason}")
        if e.equivalent:
            decided = "no meaningful difference"
        if e.reason == OPEN:
            decided = "open question"
        tost = equivalence_text(e)
        margin = "" if e.margin is None else f", margin ±{fmt(e.margin, e.unit, True)}" + (f" ({tost})" if tost else "")
        lines.append(f"  {e.test} ({what}): {fmt(e.estimate, e.unit, e.difference)}, {interval}, claimed "
                     f"{'>' if e.above else '<'} {fmt(e.threshold, e.unit, e.difference)}{margin}, "
                     f"n={'/'.join(map(str, e.n))}{df}: {decided}")
    return "\n".join(["Evidence:", *lines]) if lines else ""


def run_command(args: argparse.Namespace) -> int:
    if args.list:
        print(describe())
        return 0
    if args.name not in EXPERIMENTS:
        raise UsageError(f"experiment {args.name!r} is not known; choose one of {', '.join(EXPERIMENTS)}"
                         if args.name else f"name an experiment ({', '.join(EXPERIMENTS)}) or use --list")
    exp = EXPERIMENTS[args.name]
    try:
        params = exp.make_params(overrides(exp, args), tiny=args.tiny)
        refused = refusal_of(exp.name, params)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if refused:
        raise UsageError(refused)
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers {args.workers}: use a whole number >= 1")
    executor = SerialExecutor() if args.workers == 1 else ProcessExecutor(args.workers)
    stop, progress = threading.Event(), Progress()
    with on_ctrl_c(stop.set):
        try:
            result = run_cached(exp.name, params, progress, stop, executor=executor, refresh=args.fresh)
        except Stopped as e:
            progress.close()
            print(str(e), file=sys.stderr)
            return 130
        except ValueError as e:   # a run over the limits (explorer/limits.py), refused before it trains
            progress.close()
            raise UsageError(str(e)) from None
    progress.close()
    out = args.out or runs_dir() / "experiments" / exp.name
    paths = save_csv(result, out)
    source = "from the cache" if result.cached else f"in {result.seconds:.1f}s"
    print(f"{exp.title} ({exp.name}, {source})\n{exp.question}\nThe seed predicts: {exp.prediction}\n")
    print(format_table(result.table))
    print(f"\n{result.verdict}")
    evidence = format_evidence(result)
    if evidence:
        print(evidence)
    print(f"CSV written to {out}: {', '.join(p.name for p in paths)}")
    return 130 if result.partial else 0


__all__ = ["add_arguments", "run_command", "parse_value", "format_table", "format_evidence"]
