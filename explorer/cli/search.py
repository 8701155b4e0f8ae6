"""`python -m explorer search --task PRESET --trials N --space lr=1e-4:1e-2:log --space d_model=16,32,64
[--steps S] [--set FIELD=VALUE ...] [--constraint "d_ff>=2*d_model" ...] [--enqueue lr=3e-3,d_model=32 ...]
[--metric val_exact [--metric params:min]] [--confirm N [--confirm-top K]] [--workers N | --ray ADDRESS]
[--storage sqlite:///FILE] [--json]`.

A progress bar goes to stderr; stdout gets a table of the trials and the best one, or with --json one
object: `driver` ("host:pid"), `trials` (each `number`, `params`, `value`, `state`, `worker` "host:pid",
`seconds`) and `best` (`params`, `value`, `run`). Running the same command again resumes the study (kept in
EXPLORER_DATABASE_URL, else runs/search.db, unless --storage says otherwise) and runs only the trials it still
lacks. The settings not searched are the task's recipe, each changed by `--set` (the Search page prints the
command that fixes them all as it does). A space whose trials cannot run is refused before any (exit 2); a
study whose trials all failed ends with the first one's reason (exit 1).

Constraints (explorer/search/constraints.py) keep the sampler from proposing a point that may not train;
enqueued trials run first with their values; two or more metrics make a multi-objective study, whose
Pareto front the JSON lists as `pareto` (each `number`, `params`, `values`, `run`). `--confirm N` then
trains the best K configurations over N fresh seeds each (explorer/search/confirm.py) and ranks them by
mean and 95% interval; the JSON holds them under `confirm` and the reruns' study under `confirm_study`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading

from explorer.cli.common import Progress, UsageError, on_ctrl_c, own_file
from explorer.search.confirm import MAX_SEEDS, MAX_TOP, check_counts, run_confirm
from explorer.search.driver import run_search
from explorer.search.executors import ProcessExecutor, SerialExecutor
from explorer.search.objectives import NAMES, parse_metrics
from explorer.search.ray_cluster import RayExecutor, RayUnavailable
from explorer.search.space import FIELDS, parse_space, parse_value
from explorer.search.study import METRICS, SAMPLERS, SearchSpec, base_settings, best, counts, open_study
from explorer.search.trial import PRUNERS
from explorer.tasks import TASK_PRESETS, own_data


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", choices=list(TASK_PRESETS), help="task preset (default: reversal-fast)")
    p.add_argument("--data", metavar="FILE.tsv", help="your own pairs (source<TAB>target a line) as the task")
    p.add_argument("--trials", type=int, default=8, metavar="N", help="finished trials the study holds at the end")
    p.add_argument("--space", action="append", default=[], metavar="FIELD=SPEC",
                   help=f"a dimension: FIELD=LOW:HIGH[:log] or FIELD=A,B,C (repeatable); FIELD one of "
                        f"{', '.join(FIELDS)}")
    p.add_argument("--steps", type=int, metavar="S", help="training steps per trial (default: the task's recipe)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="fix a setting every trial shares (repeatable), e.g. --set n_heads=2 --set warmup=30; "
                        "the others are the task's recipe")
    p.add_argument("--sampler", default="tpe", choices=SAMPLERS, help="tpe (default), random, or grid")
    p.add_argument("--pruner", default="none", choices=PRUNERS, help="stop poor trials early: median or "
                                                                     "successive halving")
    p.add_argument("--metric", action="append", default=[], metavar="NAME[:min|:max]",
                   help=f"objective (default: what the task reports), one of {', '.join(NAMES)}; repeat it for a "
                        "multi-objective study, e.g. --metric val_exact --metric params:min")
    p.add_argument("--constraint", action="append", default=[], metavar="EXPR",
                   help="a constraint every trial satisfies (repeatable), e.g. \"d_ff>=2*d_model\": numbers and "
                        "numeric fields with + - * / and one comparison; n_heads divides d_model is built in")
    p.add_argument("--enqueue", action="append", default=[], metavar="FIELD=VALUE,...",
                   help="a trial to run first with these values (repeatable), e.g. lr=3e-3,d_model=32")
    p.add_argument("--confirm", type=int, metavar="N", help="after the search, train the best configurations "
                                                            f"over N fresh seeds each (2 to {MAX_SEEDS})")
    p.add_argument("--confirm-top", type=int, default=3, metavar="K",
                   help=f"how many of the best configurations --confirm reruns (default 3, at most {MAX_TOP})")
    p.add_argument("--seed", type=int, default=0, help="the sampler's seed; trial n trains with seed*10000+n")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N", help="worker processes (default: the cores; 1 = in "
                                                                "this process)")
    where.add_argument("--ray", metavar="ADDRESS", help="run trials as Ray tasks on the cluster at ADDRESS "
                                                        "(HOST:PORT or ray://HOST:PORT); needs `pip install ray`")
    p.add_argument("--storage", metavar="URL", help="Optuna storage (default: $EXPLORER_DATABASE_URL, else sqlite:///runs/search.db)")
    p.add_argument("--study", metavar="NAME", help="study name (default: the task and a digest of the settings)")
    p.add_argument("--json", action="store_true", help="print the study as JSON on stdout")


def executor_for(args: argparse.Namespace):
    if args.ray:
        try:
            return RayExecutor(args.ray)
        except RayUnavailable as err:
            raise UsageError(str(err)) from None
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers {args.workers}: use a whole number >= 1")
    workers = args.workers or os.cpu_count() or 1
    return SerialExecutor() if workers == 1 else ProcessExecutor(workers)


class _Bar:
    """`[#####.....] 5/8 trials · best 0.93 · 2 running` on stderr, in place on a terminal (the status line
    of common.Progress, as the experiment command's)."""

    def __init__(self, total: int, stream=None) -> None:
        self.total, self.line = total, Progress(stream)

    def __call__(self, study) -> None:
        done, running = counts(study)
        top = best(study)
        fraction = min(1.0, done / self.total)
        filled = round(20 * fraction)
        text = f"[{'#' * filled}{'.' * (20 - filled)}] {done}/{self.total} trials"
        self.line(fraction, text + (f" · best {top['value']:.4g}" if top else "")
                  + (f" · {running} running" if running else ""))

    def close(self) -> None:
        self.line.close()


def _params(params: dict) -> str:
    return ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())


def _table(outcome: dict) -> str:
    lines = [f"study {outcome['study']} (driver {outcome['driver']})"]
    for t in outcome["trials"]:
        value = "—" if t["value"] is None else f"{t['value']:.4g}"
        seconds = "" if t["seconds"] is None else f"{t['seconds']:.1f}s"
        params = _params(t["params"])
        lines.append(f"  #{t['number']:<3} {t['state']:<11} {value:>8}  {seconds:>6}  {params}"
                     + (f"  ({t['error']})" if t["error"] else ""))
    for t in outcome["pareto"]:
        lines.append(f"pareto: #{t['number']} " + _params(t["values"]) + f" with {_params(t['params'])}")
    best = outcome["best"]
    lines.append("best: none completed" if best is None else
                 f"best: #{best['number']} {best['value']:.4g} with {best['params']} (run '{best['run']}')")
    return "\n".join(lines)


def task_of(args: argparse.Namespace) -> tuple[str, str]:
    """(task name, own data) of --task or --data; UsageError names a bad file's line."""
    if args.data is None:
        return args.task or "reversal-fast", ""
    if args.task:
        raise UsageError("give --task or --data, not both: the file is the task")
    return own_data.OWN, own_file(args.data).text


def fixed_settings(task: str, specs: list[str], sets: list[str]) -> dict:
    """The settings --set fixes, on top of the task's recipe ({} without --set: the recipe itself)."""
    fixed: dict = {}
    searched = {text.partition("=")[0].strip() for text in specs}
    for item in sets:
        name, sep, text = (part.strip() for part in item.partition("="))
        if not sep or name not in FIELDS:
            raise UsageError(f"--set {item!r}: use FIELD=VALUE with FIELD one of {', '.join(FIELDS)}")
        if name in ("steps", "seed"):
            raise UsageError(f"--set {name}: give --{name} instead (the study's own {name})")
        if name in searched:
            raise UsageError(f"--set {name}: {name} is searched (--space); give it once")
        if name in fixed:
            raise UsageError(f"--set {name} is given twice; give each field once")
        try:
            fixed[name] = parse_value(name, text)
        except ValueError as err:
            raise UsageError(f"--set {err}") from None
    if not fixed:
        return {}
    try:
        return {**base_settings(task, parse_space(specs)), **fixed}
    except ValueError:  # a bad space: SearchSpec names it
        return fixed


def metric_fields(texts: list[str]) -> dict:
    """SearchSpec's metric (one validation metric, as before there were several) or metrics (the rest)."""
    try:
        parsed = parse_metrics(texts)
    except ValueError as err:
        raise UsageError(f"--{err}") from None
    if len(parsed) == 1 and parsed[0][0] in METRICS and ":" not in texts[0]:
        return {"metric": parsed[0][0]}
    return {"metrics": tuple(texts)} if texts else {}


def _confirm_table(confirm: dict) -> str:
    lines = [f"confirm: the best {len(confirm['configurations'])} over {confirm['seeds']} fresh seeds each "
             f"(study {confirm['study']}), ranked by {confirm['metric']}"
             + (" within Pareto rank" if any("on_front" in e for e in confirm["configurations"]) else "")]
    for e in confirm["configurations"]:
        low, high = e["interval"]
        spread = "" if not math.isfinite(low) else f" ± {(high - low) / 2:.3g} [{low:.4g}, {high:.4g}]"
        others = "".join(f", {m} {s['mean']:.4g}" for m, s in e.get("metrics", {}).items() if m != confirm["metric"])
        front = " (on the front)" if e.get("on_front") else ""
        lines.append(f"  #{e['rank']} trial {e['trial']}: {e['mean']:.4g}{spread} over {e['n']} seeds{others}"
                     f"{front}  " + _params(e["params"]))
        if e["verdict"]:
            lines.append(f"     {e['verdict']}")
    return "\n".join(lines)


def _clean(value):
    """JSON without NaN (not JSON): a number not measured is null."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _confirm(args, spec: SearchSpec, stop: threading.Event) -> dict:
    bar = _Bar(args.confirm * args.confirm_top)
    try:
        with on_ctrl_c(stop.set):
            return run_confirm(spec, args.confirm, args.confirm_top, executor_for(args), on_record=bar, stop=stop)
    except ValueError as err:   # nothing completed to confirm
        raise UsageError(str(err)) from None
    finally:
        bar.close()


def run_command(args: argparse.Namespace) -> int:
    task, data = task_of(args)
    try:
        if args.confirm is not None:
            check_counts(args.confirm, args.confirm_top)
        spec = SearchSpec(task=task, data=data, space=tuple(args.space), trials=args.trials, steps=args.steps,
                          sampler=args.sampler, pruner=args.pruner, seed=args.seed, storage=args.storage,
                          study=args.study, base=fixed_settings(task, args.space, args.set),
                          constraints=tuple(args.constraint), enqueue=tuple(args.enqueue),
                          **metric_fields(args.metric))
        study = open_study(spec)
    except ValueError as err:
        raise UsageError(str(err)) from None
    executor = executor_for(args)
    stop, bar = threading.Event(), _Bar(spec.trials)
    try:
        with on_ctrl_c(stop.set):
            outcome = run_search(spec, executor, on_record=bar, stop=stop, study=study)
    except RuntimeError as err:   # constraints so tight the sampler found no point (explorer/search/sampling.py)
        print(f"search: {err}", file=sys.stderr)
        return 1
    finally:
        bar.close()
    confirm = None
    if args.confirm is not None and not outcome["stopped"] and not outcome["failure"]:
        confirm = _confirm(args, spec, stop)
    if args.json:
        keep = ("number", "params", "value", "state", "worker", "seconds", "run", "error")
        trials = [{k: t[k] for k in keep} | ({"values": t["values"]} if "values" in t else {})
                  for t in outcome["trials"]]
        top = outcome["best"]
        data = {"study": outcome["study"], "driver": outcome["driver"], "trials": trials,
                "best": None if top is None else {k: top[k] for k in ("number", "params", "value", "run")},
                "pareto": outcome["pareto"]}
        if confirm is not None:
            data.update(confirm=confirm["configurations"], confirm_study=confirm["study"])
        print(json.dumps(_clean(data), indent=1))
    else:
        print(_table(outcome) + ("" if confirm is None else "\n" + _confirm_table(confirm)))
    if outcome["stopped"] or (confirm is not None and confirm["stopped"]):
        return 130
    failure = outcome["failure"] or (confirm or {}).get("failure")
    if failure:
        print(f"search: {failure}", file=sys.stderr)
        return 1
    return 0


__all__ = ["add_arguments", "run_command", "executor_for"]
