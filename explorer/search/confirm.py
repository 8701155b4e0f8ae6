"""Confirm the best: a study's best K configurations trained again over N fresh seeds each, and ranked by
the mean of their (first) metric with its 95% t interval, the best compared with each other by Welch's t,
as the experiments decide their claims (explorer/analysis/evidence.py).

    out = run_confirm(spec, seeds=3, top=3, executor=SerialExecutor(), owner=owner)
    out["configurations"]   # rank, trial, params, search_value, seeds, values, mean, interval, n, runs, versus_best

A study of several metrics picks its best by Pareto rank (its front first, then the front of what is left,
each by the first metric), as the front is what it found; the reruns' means per metric are ranked the same
way (`on_front`: no other configuration's means are as good on every metric and better on one), and #1 is
compared with the others by Welch's t on the first metric, the one the search ranks by.

A single trial's score is one seed, and the best of many trials is the luckiest as much as the best; the
seeds here are fresh (CONFIRM_SEED + i, never a trial's seed*10_000 + n), so that luck does not count twice.
The reruns are a study of their own (the search's name + "-confirm-" + a digest of what it reruns), every
rerun a trial enqueued with its configuration and seed: the same driver, executors, stop, resume, limits
and run ownership as the search itself.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math

import optuna
import pandas as pd

from explorer.analysis.evidence import Claim, equivalence_text, measured, one_sample, weigh
from explorer.search.driver import run_search
from explorer.search.objectives import pareto_ranks, ranked
from explorer.search.study import SearchSpec, metric_names, open_study

CONFIRM_SEED = 1_000_000_000
MAX_SEEDS, MAX_TOP = 20, 10
UNITS = {"val_exact": "%", "val_token_acc": "%", "val_loss": "nats", "params": "parameters", "seconds": "s"}
# The smallest difference between two configurations that matters, in the metric's unit: the experiments'
# own margins (heads: 2 points of accuracy; d-head: 0.01 nats). Within it, the verdict is "no meaningful difference".
MARGINS = {"val_exact": 0.02, "val_token_acc": 0.02, "val_loss": 0.01}


def check_counts(seeds: int, top: int) -> None:
    """ValueError unless 2 <= seeds <= MAX_SEEDS and 1 <= top <= MAX_TOP (whole numbers)."""
    for name, value, low, high in (("seeds", seeds, 2, MAX_SEEDS), ("configurations", top, 1, MAX_TOP)):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"confirm: {name}={value!r} must be a whole number from {low} to {high}"
                             + (" (an interval needs two seeds; three decide)" if name == "seeds" else ""))


def _key(params: dict) -> str:
    return json.dumps({k: v for k, v in params.items() if k != "seed"}, sort_keys=True)


def best_configurations(study, top: int) -> list[dict]:
    """The study's best `top` complete trials with distinct settings (seed aside), best first on its first
    metric (several metrics: by Pareto rank first): number, params (without a searched seed), value."""
    done = ranked(study, metric_names(study))
    if len(study.directions) > 1:
        up = [d == optuna.study.StudyDirection.MAXIMIZE for d in study.directions]
        ranks = pareto_ranks([list(t.values) for t in done], up)
        done = [t for _, t in sorted(zip(ranks, done), key=lambda pair: pair[0])]   # stable: first metric next
    out, seen = [], set()
    for t in done:
        key = _key(t.params)
        if key not in seen:
            seen.add(key)
            out.append({"number": t.number, "params": json.loads(key), "value": float(t.values[0])})
        if len(out) == top:
            break
    return out


def confirm_spec(spec: SearchSpec, picks: list[dict], seeds: int) -> SearchSpec:
    """The reruns as a study: the search's settings, a seed dimension of the fresh seeds, and every
    configuration x seed enqueued (so the sampler never draws)."""
    fresh = [CONFIRM_SEED + i for i in range(seeds)]
    settings = spec.settings()
    space = tuple(d.spec() for name, d in spec.dims().items() if name != "seed") + (
        "seed=" + ",".join(map(str, fresh)),)
    digest = hashlib.sha256(json.dumps([[p["params"] for p in picks], fresh], sort_keys=True).encode()).hexdigest()
    return spec.replace(space=space, trials=len(picks) * seeds, sampler="random", pruner="none",
                        steps=settings["steps"], base={k: v for k, v in settings.items() if k != "steps"},
                        study=f"{spec.study_name()}-confirm-{digest[:8]}", data_seed_from_trial=False,
                        enqueue=tuple({**p["params"], "seed": s} for p in picks for s in fresh))


def _versus(best: dict, other: dict, metric: str, maximize: bool, samples: pd.DataFrame):
    """The best against another configuration by Welch's t, as an experiment's claim that one beats another."""
    names = (f"#1 (trial {best['trial']})", f"#{other['rank']} (trial {other['trial']})")
    claim = Claim(f"configuration {names[0]} has a {'higher' if maximize else 'lower'} {metric} than "
                  f"configuration {names[1]}", metric, best["_label"], other["_label"], above=maximize,
                  unit=UNITS.get(metric, ""), margin=MARGINS.get(metric))
    return dataclasses.replace(weigh(claim, samples), conditions=names)


def _sentence(ev, rank: int) -> str:
    """The comparison in words: #1 better (the interval on its side), or no difference shown, and why."""
    if ev.holds is True:
        return f"#1 is better than #{rank} ({measured(ev)})"
    if ev.holds is False:
        return f"#{rank} is better than #1 ({measured(ev)})"
    if ev.equivalent:
        return f"No meaningful difference between #1 and #{rank}: {equivalence_text(ev)} ({measured(ev)})"
    spans = ev.reason.startswith(f"the {ev.level:.0%} interval")
    return f"No difference shown between #1 and #{rank}: {ev.reason}; measured {measured(ev, interval=not spans)}"


def summarise(picks: list[dict], rows: list[dict], objectives: list[tuple[str, str]]) -> list[dict]:
    """Each configuration's reruns: mean and 95% interval per metric of `objectives` ((name, direction),
    first the one ranked by), ranked by the first (several: by the Pareto rank of the means first); the best
    against each other configuration by Welch's t on the first."""
    names = [n for n, _ in objectives]
    metric, maximize = names[0], objectives[0][1] == "maximize"
    by_key = {_key(p["params"]): i for i, p in enumerate(picks)}
    seeds: list[list] = [[] for _ in picks]
    samples = []
    for r in rows:
        i = by_key.get(_key(r["params"]))
        if i is None or r["state"] != "COMPLETE":
            continue
        values = r.get("values") or {metric: r["value"]}
        seeds[i].append((r["params"].get("seed"), values, r["run"]))
        samples += [{"condition": f"#{i}", "seed": r["params"].get("seed"), "metric": m, "value": v}
                    for m, v in values.items() if v is not None]
    frame = pd.DataFrame(samples, columns=["condition", "seed", "metric", "value"])
    entries = []
    for i, p in enumerate(picks):
        got = sorted(seeds[i], key=lambda s: s[0])
        stats = {m: one_sample([v[m] for _, v, _ in got if v.get(m) is not None]) for m in names}
        main = stats[metric]
        entries.append({"trial": p["number"], "params": p["params"], "search_value": p["value"],
                        "seeds": [s for s, _, _ in got], "values": [v.get(metric) for _, v, _ in got],
                        "mean": main.estimate, "interval": [main.low, main.high], "n": len(got),
                        "runs": [run for _, _, run in got], "_label": f"#{i}",
                        **({"metrics": {m: {"mean": s.estimate, "interval": [s.low, s.high]}
                                        for m, s in stats.items()}} if len(names) > 1 else {})})
    worst = -math.inf if maximize else math.inf
    entries.sort(key=lambda e: (-(e["mean"] if math.isfinite(e["mean"]) else worst) if maximize
                                else (e["mean"] if math.isfinite(e["mean"]) else worst)))
    if len(names) > 1:   # the front of the means first; a configuration missing a mean is ranked last
        means = [[e["metrics"][m]["mean"] for m in names] for e in entries]
        known = [i for i, m in enumerate(means) if all(math.isfinite(v) for v in m)]
        rank = dict(zip(known, pareto_ranks([means[i] for i in known], [d == "maximize" for _, d in objectives])))
        for i, e in enumerate(entries):
            e["on_front"] = rank.get(i) == 0
        entries = [e for _, e in sorted(enumerate(entries), key=lambda pair: rank.get(pair[0], math.inf))]
    for rank, e in enumerate(entries, 1):
        e["rank"] = rank
    for e in entries:
        if e["rank"] == 1 or not entries[0]["n"]:
            e["versus_best"], e["verdict"] = None, ""
            continue
        ev = _versus(entries[0], e, metric, maximize, frame)
        e["versus_best"], e["verdict"] = ev.to_json(), _sentence(ev, e["rank"])
    for e in entries:
        del e["_label"]
    return entries


def run_confirm(spec: SearchSpec, seeds: int, top: int, executor=None, on_record=None, stop=None,
                owner: str | None = None, study=None) -> dict:
    """Rerun the best `top` configurations of `spec`'s study over `seeds` fresh seeds each (see the module
    docstring); ValueError before anything runs when the counts are out of range or nothing completed."""
    check_counts(seeds, top)
    study = study or open_study(spec)
    picks = best_configurations(study, top)
    if not picks:
        raise ValueError(f"study {study.study_name!r} has no complete trial to confirm yet; run the search first")
    rerun = confirm_spec(spec, picks, seeds)
    out = run_search(rerun, executor, on_record=on_record, stop=stop, owner=owner)
    metric, direction = spec.objectives()[0]
    entries = summarise(picks, out["trials"], list(spec.objectives()))
    return {"study": out["study"], "metric": metric, "direction": direction, "seeds": seeds,
            "configurations": entries, "stopped": out["stopped"], "failure": out["failure"]}


__all__ = ["CONFIRM_SEED", "MAX_SEEDS", "MAX_TOP", "check_counts", "best_configurations", "confirm_spec",
           "summarise", "run_confirm"]
