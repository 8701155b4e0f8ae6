"""The studies kept in a storage, whoever made them (the CLI, the app's Search page): a summary of each, one
opened read-only, deleted by its owner, and its trials as rows and CSV.

    summaries = list_studies(viewer=owner_id)      # the viewer's own first, then newest first
    study = load(name)                             # an optuna.Study, read only: nothing sampled
    trials_csv(study)                              # number, state, value(s), params, seconds, run, dates
    delete_study(name, owner=owner_id)             # PermissionError unless the study is the owner's

A study records its owner as the user attr OWNER (the app's SearchJob sets it on a study it creates, as
runs record theirs); a study without one (the CLI's) is nobody's: no visitor may delete it. A study searched
on a visitor's own data is listed to its owner only, as its runs are (explorer.store.runs).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

import optuna
from optuna.trial import TrialState

from explorer.search.study import INTERRUPTED, default_storage

OWNER = "owner"     # the study's user attr naming its owner (the owner cookie's id, as runs record it)
STATES = ("COMPLETE", "PRUNED", "FAIL", "RUNNING", "WAITING", "INTERRUPTED")


def _storage(url: str | None):
    """The storage of `url` (default: the runs folder's), or None for a SQLite file that does not exist yet
    (listing never creates one)."""
    url = url or default_storage()
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        return None
    args = {"connect_args": {"timeout": 30}} if url.startswith("sqlite") else {}
    return optuna.storages.RDBStorage(url, engine_kwargs=args)


def state_of(t) -> str:
    """A trial's state as the JSON contract says it (a trial stopped or abandoned is INTERRUPTED)."""
    return "INTERRUPTED" if t.state.is_finished() and t.user_attrs.get(INTERRUPTED) else t.state.name


@dataclass(frozen=True)
class StudySummary:
    """One study at a glance, as the Studies page lists it."""

    name: str
    owner: str | None
    directions: tuple[str, ...]          # "maximize" / "minimize", one per objective
    metrics: tuple[str, ...]             # the objectives' names
    task: str
    sampler: str
    pruner: str
    space: tuple[str, ...]               # the dimensions' specs (`lr=0.0001:0.01:log`)
    counts: dict = field(default_factory=dict)   # state -> trials
    best: tuple | None = None            # the best value(s): one per objective; None before one completed
    front: int = 0                       # trials on the Pareto front (a multi-objective study)
    started: str = ""                    # the first trial's start, ISO 8601 in UTC (minutes)
    last: str = ""                       # the last trial's end (or start)
    private: bool = False                # searched on own data: listed to its owner only

    @property
    def trials(self) -> int:
        return sum(self.counts.values())

    def visible_to(self, viewer: str | None) -> bool:
        return not self.private or (viewer is not None and self.owner == viewer)


def _minutes(when, timespec: str = "minutes") -> str:
    return when.isoformat(timespec=timespec) if when is not None else ""


def _best(frozen, trials) -> tuple[tuple | None, int]:
    done = [t for t in trials if t.state == TrialState.COMPLETE and t.values
            and all(math.isfinite(v) for v in t.values)]
    if not done:
        return None, 0
    dirs = frozen.directions
    if len(dirs) == 1:
        pick = (min if dirs[0] == optuna.study.StudyDirection.MINIMIZE else max)(done, key=lambda t: t.values[0])
        return (pick.values[0],), 1
    signs = [1 if d == optuna.study.StudyDirection.MINIMIZE else -1 for d in dirs]
    loss = [[s * v for s, v in zip(signs, t.values)] for t in done]
    front = [i for i, a in enumerate(loss)
             if not any(all(x <= y for x, y in zip(b, a)) and b != a for b in loss)]
    best = tuple((min if s == 1 else max)(t.values[k] for t in done) for k, s in enumerate(signs))
    return best, len(front)


def _summary(frozen, trials) -> StudySummary:
    spec = frozen.user_attrs.get("spec") or {}
    counts: dict[str, int] = {}
    for t in trials:
        counts[state_of(t)] = counts.get(state_of(t), 0) + 1
    starts = [t.datetime_start for t in trials if t.datetime_start is not None]
    ends = [t.datetime_complete or t.datetime_start for t in trials if t.datetime_start is not None]
    best, front = _best(frozen, trials)
    directions = tuple(d.name.lower() for d in frozen.directions)
    metrics = tuple(_metrics(frozen.user_attrs, len(directions)))
    return StudySummary(name=frozen.study_name, owner=frozen.user_attrs.get(OWNER), directions=directions,
                        metrics=metrics, task=str(spec.get("task", "")), sampler=str(spec.get("sampler", "")),
                        pruner=str(spec.get("pruner", "")), space=tuple(str(s) for s in spec.get("space", ())),
                        counts=counts, best=best, front=front, started=_minutes(min(starts, default=None)),
                        last=_minutes(max(ends, default=None)), private=bool(spec.get("data")))


def list_studies(viewer: str | None = None, storage: str | None = None, everyone: bool = False) -> list[StudySummary]:
    """Every study the viewer may see (`everyone`: the server's shell, private ones too): their own first,
    then by their last trial, newest first."""
    store = _storage(storage)
    if store is None:
        return []
    out = [_summary(s, store.get_all_trials(s._study_id, deepcopy=False))  # noqa: SLF001 - Optuna's storage API
           for s in store.get_all_studies()]
    out = [s for s in out if everyone or s.visible_to(viewer)]
    out.sort(key=lambda s: s.last or s.started, reverse=True)
    return sorted(out, key=lambda s: not (viewer is not None and s.owner == viewer))   # stable: newest kept


def load(name: str, storage: str | None = None):
    """The study `name`, read only (no sampler runs). KeyError names a study that is not there."""
    store = _storage(storage)
    if store is None:
        raise KeyError(f"no study {name!r}: nothing has been searched here yet")
    try:
        return optuna.load_study(study_name=name, storage=store)
    except KeyError:
        known = [s.study_name for s in store.get_all_studies()]
        raise KeyError(f"no study {name!r}; the studies here: {', '.join(known) or 'none'}") from None


def claim(study, owner: str | None) -> None:
    """Record `owner` as the owner of a study that has no owner and no trial yet (one just created)."""
    if owner and OWNER not in study.user_attrs and not study.get_trials(deepcopy=False):
        study.set_user_attr(OWNER, owner)


def delete_study(name: str, owner: str, storage: str | None = None) -> None:
    """Delete the study `name` (its trials; their runs stay, each its owner's) acting for `owner`:
    PermissionError unless the study records that owner."""
    study = load(name, storage)
    recorded = study.user_attrs.get(OWNER)
    if recorded is None:
        raise PermissionError(f"study {name!r} has no owner (made on the command line): it is read-only here")
    if recorded != owner:
        raise PermissionError(f"study {name!r} belongs to another visitor: only they can delete it")
    optuna.delete_study(study_name=name, storage=study._storage)  # noqa: SLF001 - the storage it came from


def _metrics(attrs: dict, n: int) -> list[str]:
    """The objectives' names: the `metric_names` a search records (explorer/search/study.py), or the spec's
    metric (one name, or a list of them)."""
    named = attrs.get("metric_names") or attrs.get("metrics") or (attrs.get("spec") or {}).get("metric")
    named = [named] if isinstance(named, str) else list(named or [])
    return [str(m) for m in named] if len(named) == n else [f"objective {i}" for i in range(n)]


def metric_names(study) -> list[str]:
    return _metrics(study.user_attrs, len(study.directions))


def trial_table(study) -> list[dict]:
    """A row per trial: number, state, its value(s) by metric name, its params, seconds, run, start, end."""
    names = metric_names(study)
    params = sorted({p for t in study.get_trials(deepcopy=False) for p in t.params})
    rows = []
    for t in study.get_trials(deepcopy=False):
        values = list(t.values or [])
        seconds = t.user_attrs.get("seconds")
        if seconds is None and t.duration is not None:
            seconds = t.duration.total_seconds()
        rows.append({"number": t.number, "state": state_of(t),
                     **{n: (values[i] if i < len(values) and math.isfinite(values[i]) else None)
                        for i, n in enumerate(names)},
                     **{p: t.params.get(p) for p in params}, "seconds": seconds, "run": t.user_attrs.get("run"),
                     "started": _minutes(t.datetime_start, "seconds"),
                     "completed": _minutes(t.datetime_complete, "seconds")})
    return rows


def best_config(study) -> dict:
    """The best trial's number, value(s) by metric name and settings (a multi-objective study: the first
    trial of its Pareto front); {} before a trial completed."""
    try:
        best = study.best_trials if len(study.directions) > 1 else [study.best_trial]
    except ValueError:   # no completed trial yet
        return {}
    if not best:
        return {}
    t = best[0]
    return {"trial": t.number, **dict(zip(metric_names(study), t.values)), **t.params}


def _cell(value) -> str:
    """A cell a spreadsheet shows as it is: text that would start a formula (=, +, -, @) gets a quote."""
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def trials_csv(study) -> str:
    """The study's trials (trial_table) as CSV, a header first."""
    rows = trial_table(study)
    columns = list(rows[0]) if rows else ["number", "state", *metric_names(study), "seconds", "run", "started",
                                          "completed"]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows({c: _cell(r.get(c)) for c in columns} for r in rows)
    return out.getvalue()


__all__ = ["OWNER", "STATES", "StudySummary", "state_of", "list_studies", "load", "claim", "delete_study",
           "metric_names", "best_config", "trial_table", "trials_csv"]
