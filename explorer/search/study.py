"""A study: what it searches (`SearchSpec`), where it is kept (Optuna's own storage: EXPLORER_DATABASE_URL,
shared by several servers, else one SQLite file under the runs folder), and what it holds (`trial_rows`,
`best`, `importances`).

    spec = SearchSpec(task="reversal-fast", space=("lr=1e-4:1e-2:log", "d_model=16,32"), trials=8, steps=200)
    study = open_study(spec)        # created, or loaded to resume (a study saved with another space is refused)
    trial_rows(study), best(study)

The study's name defaults to the task and a digest of the spec, so running the same command again resumes
the same study, and `--trials N` means N finished trials in it in all. Each trial's random or TPE sampler
is seeded from the study's seed and the trial's number (the grid reads its next point off the storage),
so a resumed study or a second driver never replays a draw, and the same study run the same way proposes
the same points. A driver keeps a heartbeat for its running trials (Optuna's, in the storage); a trial
that goes quiet for GRACE_S is failed by whichever driver looks next, on any host, and its place runs again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
import random
import socket
import time
import warnings
from dataclasses import dataclass, field

import optuna
import sqlalchemy.exc
from optuna.trial import TrialState

from explorer.limits import check_search
from explorer.search.check import check_space, feasibility
from explorer.search.constraints import parse_constraints
from explorer.search.enqueue import parse_enqueue
from explorer.search.objectives import metric_names, pareto, parse_metrics, ranked
from explorer.search.sampling import make_sampler, sampler_seed
from explorer.search.space import FIELDS, grid, grid_size, parse_space
from explorer.search.trial import PRUNERS, configs
from explorer.store.database import STUDIES_FILE, engine_url, studies_url
from explorer.tasks import TASKS, presets
from explorer.tasks.recipes import RECOMMENDED, recommended

optuna.logging.set_verbosity(optuna.logging.WARNING)
logging.getLogger("optuna").propagate = False
# the heartbeat is experimental in Optuna, and meant for study.optimize: the driver's ask/tell keeps it itself
warnings.filterwarnings("ignore", message=".*(heartbeat_interval|fail_stale_trials)",
                        category=optuna.exceptions.ExperimentalWarning)
warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize")

SAMPLERS = ("tpe", "random", "grid")
METRICS = ("val_exact", "val_token_acc", "val_loss")
STORAGE_FILE = STUDIES_FILE
INTERRUPTED = "interrupted"     # user attr of a trial stopped or abandoned by a crash: not a finished trial
STORAGE_ATTEMPTS = 5
HEARTBEAT_S, GRACE_S = 10, 60   # a driver's heartbeat for its trials; a trial silent this long is stale
DEFAULT_METRIC = {"seq2seq": "val_exact", "classify": "val_exact", "lm": "val_loss"}


def default_storage() -> str:
    """$EXPLORER_DATABASE_URL, else runs/search.db; a bad setting is a ValueError saying what is valid."""
    return studies_url()


def direction_of(metric: str) -> str:
    return "minimize" if metric == "val_loss" else "maximize"


def base_settings(preset: str, space: dict) -> dict:
    """The settings a trial starts from: the task's recommended recipe (explorer/tasks/recipes.py) for what
    the space leaves fixed. d_ff follows d_model (2x) when d_model is searched and d_ff is not."""
    if preset not in RECOMMENDED:
        return {}
    model, train = recommended(preset)
    base = {k: v for k, v in model.items() if k in FIELDS}
    base["n_layers"] = model.get("n_encoder_layers", 1)
    if "d_model" in space:
        base.pop("d_ff", None)
    base.update({k: getattr(train, k) for k, (where, _) in FIELDS.items() if where == "train" and k != "seed"})
    return base


@dataclass(frozen=True)
class SearchSpec:
    """A study's definition. `space` holds `field=...` specs (explorer/search/space.py); `base` the
    settings every trial shares (default: the task's recipe); `steps` each trial's training steps."""

    task: str = "reversal-fast"
    space: tuple = ("lr=1e-4:1e-2:log",)
    trials: int = 8
    steps: int | None = None          # None: the recipe's
    sampler: str = "tpe"
    pruner: str = "none"
    seed: int = 0                     # the sampler's; trial n trains with seed * 10_000 + n
    metric: str | None = None         # None: what the task reports (exact match, accuracy, or loss)
    storage: str | None = None        # None: sqlite in the runs folder; "memory": not kept
    study: str | None = None          # None: the task and a digest of everything above
    base: dict = field(default_factory=dict)
    eval_examples: int = 200
    keep_runs: bool = True            # save every trial's run (the sweep keeps only its numbers)
    data_seed_from_trial: bool = False  # the sweep's: each seed draws its own task data too
    data: str = field(default="", repr=False)   # task "pairs": a teacher's TSV (explorer/tasks/own_data.py)
    refuse_invalid: bool = True       # False: the sweep's, whose impossible cells are NaN with their reason
    metrics: tuple = ()               # several: a multi-objective study ("val_exact", "params:min"); () = metric
    constraints: tuple = ()           # the user's ("d_ff>=2*d_model"), beside the built-in ones
    enqueue: tuple = ()               # trials to run first ("lr=3e-3,d_model=32", or a dict): not in the key

    def __post_init__(self) -> None:
        presets.preset_or_pairs(self.task, self.data)  # an unknown task or a refused TSV, named
        space = parse_space(self.space)  # ValueError names the field
        for name, value, valid in (("sampler", self.sampler, SAMPLERS), ("pruner", self.pruner, PRUNERS)):
            if value not in valid:
                raise ValueError(f"{name} {value!r} is not known; choose one of {', '.join(valid)}")
        if self.metric is not None and self.metric not in METRICS:
            raise ValueError(f"metric {self.metric!r} is not known; choose one of {', '.join(METRICS)}")
        if len(parse_metrics(self.metrics)) > 1 and self.pruner != "none":
            raise ValueError(f"pruner {self.pruner!r} cannot prune a study of several metrics (Optuna prunes "
                             "on one); use pruner none, or one metric")
        for name, value in (("trials", self.trials), ("steps", 1 if self.steps is None else self.steps),
                            ("eval_examples", self.eval_examples)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}={value!r} must be a whole number >= 1")
        if self.sampler == "grid":
            grid(space)  # ranges refused with the field named
        unknown = sorted(set(self.base) - set(FIELDS))
        if unknown:
            raise ValueError(f"base: unknown field {unknown[0]!r}; choose from {', '.join(FIELDS)}")
        parse_constraints(self.constraints, list(space))   # a bad one named, with the grammar
        if self.refuse_invalid:
            check_space(self)  # before any trial: a space whose trials cannot run is refused, naming why
        for item in self.enqueue:
            parse_enqueue(self, item)    # a value off the space, over a cap or against a constraint, named

    def dims(self) -> dict:
        return parse_space(self.space)

    def settings(self) -> dict:
        """Every fixed setting of a trial (the base, with the steps)."""
        out = {**(self.base or base_settings(self.task, self.dims()))}
        if self.steps is not None:
            out["steps"] = self.steps
        out.setdefault("steps", 300)
        return out

    def objective(self) -> str:
        """The (first) metric: the one a single-objective study optimises, and the one confirmations rank by."""
        if self.metrics:
            return parse_metrics(self.metrics)[0][0]
        if self.metric is not None:
            return self.metric
        return DEFAULT_METRIC[TASKS[presets.preset_or_pairs(self.task, self.data).name].kind]

    def objectives(self) -> tuple[tuple[str, str], ...]:
        """Every metric the study optimises, with its direction."""
        if self.metrics:
            return parse_metrics(self.metrics)
        return ((self.objective(), direction_of(self.objective())),)

    def feasibility(self):
        """ok(params) -> None or why the point may not train; None when no constraint refuses a point."""
        return feasibility(self)

    def key(self) -> dict:
        """What makes two studies the same (the stored spec a resumed study must match)."""
        return {"task": self.task, "space": [d.spec() for d in self.dims().values()], "settings": self.settings(),
                "sampler": self.sampler, "pruner": self.pruner, "seed": self.seed, "metric": self.objective(),
                "eval_examples": self.eval_examples, "data_seed_from_trial": self.data_seed_from_trial,
                **({"data": hashlib.sha256(self.data.encode()).hexdigest()} if self.data else {}),
                **({"metrics": [f"{n}:{d[:3]}" for n, d in self.objectives()]} if self.metrics else {}),
                **({"constraints": list(self.constraints)} if self.constraints else {})}

    def study_name(self) -> str:
        if self.study:
            return self.study
        digest = hashlib.sha256(json.dumps(self.key(), sort_keys=True).encode()).hexdigest()[:8]
        return f"{self.task}-{digest}"

    def replace(self, **changes) -> SearchSpec:
        return dataclasses.replace(self, **changes)


def _storage(spec: SearchSpec):
    url = spec.storage or default_storage()
    if url == "memory":
        return optuna.storages.InMemoryStorage()
    if not url.startswith(("sqlite:///", "postgresql://", "mysql://")):
        raise ValueError(f"storage {url!r} must be sqlite:///FILE (or postgresql:// or mysql://)")
    # a wait on a locked file: several drivers (and the app's page) share one study file; a database server
    # restarted under a long study: the pool pings a connection before it lends it
    args = ({"connect_args": {"timeout": 30}} if url.startswith("sqlite") else
            {"pool_pre_ping": True, "connect_args": {"connect_timeout": 10}} if url.startswith("postgresql") else
            {"pool_pre_ping": True})
    for attempt in range(STORAGE_ATTEMPTS):
        try:
            return optuna.storages.RDBStorage(engine_url(url), engine_kwargs=args, heartbeat_interval=HEARTBEAT_S,
                                              grace_period=GRACE_S)
        except sqlalchemy.exc.DatabaseError as e:
            # drivers started together on a fresh storage race to create its tables ("already exists",
            # "UNIQUE constraint failed: alembic_version"): once one has, the others' next try loads them
            if attempt == STORAGE_ATTEMPTS - 1:
                if isinstance(e, sqlalchemy.exc.OperationalError):   # unreachable, refused: a message
                    why = str(e.orig or e).strip().splitlines() or ["no reason given"]
                    raise ValueError(f"the study storage could not be opened ({why[0][:200]})") from e
                raise
            time.sleep(0.2 * (attempt + 1) + random.random() * 0.2)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fail_abandoned(study) -> None:
    """Trials left running by a driver of this machine that is gone (a crash, a restart) are failed and
    marked interrupted, so they do not count as finished and their place is run again."""
    host = socket.gethostname()
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        owner_host, _, pid = str(t.user_attrs.get("driver", "")).rpartition(":")
        if owner_host == host and pid.isdigit() and not _alive(int(pid)):
            study._storage.set_trial_user_attr(t._trial_id, INTERRUPTED, True)  # noqa: SLF001 - Optuna's storage API
            study._storage.set_trial_state_values(t._trial_id, TrialState.FAIL)  # noqa: SLF001


def fail_stale(study) -> None:
    """Fail the trials whose driver is gone: on this machine at once (its pid), on any host once its
    heartbeat is GRACE_S old (Optuna's fail_stale_trials). Either way the trial stays marked interrupted
    (the driver marks a trial so until it records it), so its place is run again."""
    _fail_abandoned(study)
    optuna.storages.fail_stale_trials(study)


def open_study(spec: SearchSpec):
    """The study, created or loaded; ValueError if a study of that name was made for another search, or if a
    trial it can make is over the limits every run shares (explorer/limits.py), before anything is stored."""
    check_search(spec.dims(), spec.settings(), lambda params: configs(
        {"task": spec.task, "data": spec.data, "base": spec.settings(), "params": params, "seed": spec.seed,
         "eval_examples": spec.eval_examples}))
    storage = _storage(spec)
    name = spec.study_name()
    study = optuna.create_study(study_name=name, storage=storage, load_if_exists=True,
                                directions=[d for _, d in spec.objectives()], sampler=make_sampler(spec))
    key = json.loads(json.dumps(spec.key()))
    stored = study.user_attrs.get("spec")
    if stored is None:
        study.set_user_attr("spec", key)
        study.set_user_attr("metric_names", [n for n, _ in spec.objectives()])
    elif stored != key:
        diff = sorted(k for k in key if stored.get(k) != key.get(k))
        raise ValueError(f"study {name!r} was made for another search ({', '.join(diff)} differ); "
                         "give another --study name, or repeat its own settings to resume it")
    fail_stale(study)
    given = [t.system_attrs.get("fixed_params", t.params) for t in study.get_trials(deepcopy=False)]
    for item in spec.enqueue:   # run before any sampled trial; one already in the study is not added again
        params = parse_enqueue(spec, item)
        if params not in given:   # exactly (Optuna's skip_if_exists calls seeds 10^9 and 10^9 + 1 the same)
            study.enqueue_trial(params)
            given.append(params)
    return study


def finished(t) -> bool:
    return t.state.is_finished() and not t.user_attrs.get(INTERRUPTED)


def counts(study) -> tuple[int, int]:
    """(finished trials, trials running now) in the study."""
    trials = study.get_trials(deepcopy=False)
    return sum(map(finished, trials)), sum(t.state == TrialState.RUNNING for t in trials)


def _value(t) -> float | None:
    """The trial's value of the (first) metric, None if it has none."""
    if t.values and t.values[0] is not None and math.isfinite(t.values[0]):
        return float(t.values[0])
    return None


def trial_rows(study) -> list[dict]:
    """Every trial as the JSON contract has it: number, params, value, state, worker, seconds (and the
    run it saved, and why it failed); a study of several metrics adds `values` {metric: value}."""
    several = len(study.directions) > 1
    names = metric_names(study) if several else []
    return [{"number": t.number, "params": dict(t.params), "value": _value(t),
             "state": "INTERRUPTED" if t.state.is_finished() and t.user_attrs.get(INTERRUPTED) else t.state.name,
             "worker": t.user_attrs.get("worker"), "seconds": t.user_attrs.get("seconds"),
             "run": t.user_attrs.get("run"), "error": t.user_attrs.get("error", ""),
             **({"values": dict(zip(names, t.values)) if t.values else None} if several else {})}
            for t in study.get_trials(deepcopy=False)]


def failure(rows: list[dict]) -> str | None:
    """Why a study failed when every trial that ended failed (the first one's reason), else None."""
    ended = [r for r in rows if r["state"] in ("COMPLETE", "PRUNED", "FAIL")]
    if not ended or any(r["state"] != "FAIL" for r in ended):
        return None
    first = ended[0]
    return (f"all {len(ended)} trial{'s' * (len(ended) > 1)} failed; trial {first['number']}: "
            f"{first['error'] or 'no reason recorded'}")


def best(study) -> dict | None:
    """The best complete trial: params, value and its run's name (None before one completed). A study of
    several metrics: the best on the first of its Pareto front (`pareto`), with its `values` too."""
    names = metric_names(study)
    several = len(study.directions) > 1
    top = ranked(study, names if several else [None])
    if several:
        on_front = {t.number for t in study.best_trials}
        top = [t for t in top if t.number in on_front]
    if not top:
        return None
    pick = top[0]
    return {"number": pick.number, "params": dict(pick.params), "value": _value(pick),
            "run": pick.user_attrs.get("run"), **({"values": dict(zip(names, pick.values))} if several else {})}


def importances(study) -> dict[str, float]:
    """Each parameter's share of the variation in the objective (Optuna's default importance evaluator);
    empty until two trials completed with parameters that differ."""
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if len(complete) < 2 or len({json.dumps(t.params, sort_keys=True) for t in complete}) < 2:
        return {}
    try:
        with warnings.catch_warnings():  # "importances will be equal" with few trials: the bars say so
            warnings.simplefilter("ignore")
            # several metrics: the importances for the first (the one the table and confirmations rank by)
            target = (lambda t: t.values[0]) if len(study.directions) > 1 else None
            return dict(optuna.importance.get_param_importances(study, target=target))
    except (ValueError, RuntimeError):  # a parameter with one value so far
        return {}


__all__ = ["SAMPLERS", "METRICS", "HEARTBEAT_S", "GRACE_S", "SearchSpec", "open_study", "default_storage",
           "direction_of", "base_settings", "sampler_seed", "make_sampler", "fail_stale", "finished", "counts",
           "trial_rows", "failure", "best", "pareto", "metric_names", "importances", "grid_size"]
