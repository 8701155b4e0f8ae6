"""What a study optimises: one metric, or several at once (a multi-objective study and its Pareto front).

    parse_metric("params:min")          # ("params", "minimize"); "val_exact" -> ("val_exact", "maximize")
    pareto(study)                       # the Pareto front: number, params, values {metric: value}, run

A metric is a validation metric the trainer reports (val_exact, val_token_acc, val_loss), the model's
parameter count (`params`) or the trial's training seconds (`seconds`); its direction follows from it
(accuracy up, loss, parameters and seconds down), and `:min` / `:max` may say it outright.
"""

from __future__ import annotations

import math

import optuna
from optuna.trial import TrialState

VALIDATION = ("val_exact", "val_token_acc", "val_loss")
COSTS = ("params", "seconds")
NAMES = VALIDATION + COSTS
_DIRECTIONS = {"min": "minimize", "max": "maximize"}


def natural_direction(name: str) -> str:
    return "maximize" if name in ("val_exact", "val_token_acc") else "minimize"


def parse_metric(text: str) -> tuple[str, str]:
    """(name, direction) of `NAME[:min|:max]`; ValueError names what is valid."""
    name, sep, way = (part.strip() for part in str(text).partition(":"))
    if name not in NAMES:
        raise ValueError(f"metric {text!r} is not known; choose one of {', '.join(NAMES)} "
                         "(with :min or :max to say the direction)")
    if sep and way not in _DIRECTIONS:
        raise ValueError(f"metric {text!r}: the direction must be :min or :max, not {way!r}")
    return name, _DIRECTIONS[way] if sep else natural_direction(name)


def parse_metrics(texts) -> tuple[tuple[str, str], ...]:
    out = tuple(parse_metric(t) for t in texts)
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise ValueError("a metric is given twice; give each once")
    return out


def measure(name: str, last_record, model, seconds: float) -> float:
    """A finished trial's value of one metric: from its last record, its model or its clock."""
    if name == "params":
        return float(sum(p.numel() for p in model.parameters()))
    if name == "seconds":
        return float(seconds)
    return float(getattr(last_record, name))


def _finite(values) -> bool:
    return values is not None and all(v is not None and math.isfinite(v) for v in values)


def values_of(t, names) -> dict | None:
    """A trial's values by metric name, None unless it completed with every one finite."""
    if t.state != TrialState.COMPLETE or not _finite(t.values) or len(t.values) != len(names):
        return None
    return dict(zip(names, (float(v) for v in t.values)))


def front(study, names) -> list[dict]:
    """The Pareto front (Optuna's best_trials: no trial is better on every metric), in trial order."""
    rows = []
    for t in sorted(study.best_trials, key=lambda t: t.number):
        values = values_of(t, names)
        if values is not None:
            rows.append({"number": t.number, "params": dict(t.params), "values": values,
                         "run": t.user_attrs.get("run")})
    return rows


def _dominates(a: list[float], b: list[float], maximize: list[bool]) -> bool:
    """a is at least as good as b on every metric and better on one."""
    pairs = [(x, y) if up else (-x, -y) for x, y, up in zip(a, b, maximize)]
    return all(x >= y for x, y in pairs) and any(x > y for x, y in pairs)


def pareto_ranks(points: list[list[float]], maximize: list[bool]) -> list[int]:
    """Each point's Pareto rank: 0 for the front, 1 for the front of what is left, and so on (points that are
    no trials, as a confirmation's means; a study's own front is Optuna's, `front`)."""
    ranks, left, rank = [0] * len(points), set(range(len(points))), 0
    while left:
        layer = {i for i in left if not any(_dominates(points[j], points[i], maximize) for j in left if j != i)}
        for i in layer:
            ranks[i] = rank
        left, rank = left - layer, rank + 1
    return ranks


def metric_names(study) -> list[str]:
    """The metrics a study optimises, in order (a study made before there were several: its one)."""
    return list(study.user_attrs.get("metric_names") or [study.user_attrs.get("spec", {}).get("metric", "value")])


def pareto(study) -> list[dict]:
    """A study of several metrics: its Pareto front (number, params, values, run); one metric: []."""
    return front(study, metric_names(study)) if len(study.directions) > 1 else []


def ranked(study, names) -> list:
    """The complete trials, best first on the first metric (a multi-objective study's too)."""
    first = study.directions[0] == optuna.study.StudyDirection.MAXIMIZE
    done = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)) if values_of(t, names)]
    return sorted(done, key=lambda t: (-t.values[0] if first else t.values[0], t.number))


__all__ = ["VALIDATION", "COSTS", "NAMES", "natural_direction", "parse_metric", "parse_metrics", "measure",
           "values_of", "front", "pareto_ranks", "metric_names", "pareto", "ranked"]
