"""The driver: asks the study for trials, sends each to an executor with fixed params, records what comes
back, and saves every trial's run like any other run.

    outcome = run_search(spec, ProcessExecutor(2), on_record=print, stop=event, owner=None)
    outcome["trials"], outcome["best"]          # the JSON contract (explorer/search/study.py, trial_rows)

Only the driver samples, with a sampler seeded per trial (explorer/search/study.py); trial n trains with
seed `spec.seed * 10_000 + n`, so the same study seed gives the same trials on every executor. A study
holding `spec.trials` finished trials runs nothing more: a resumed study runs only the missing ones, and
waits for trials other drivers run (failing them once their heartbeat is stale, and running their place).
A stop ends the running trials after their current step (they are marked interrupted and run again on
resume); the finished ones stay.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path

from optuna.trial import TrialState

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.search.executors import SerialExecutor
from explorer.search.space import suggest
from explorer.search.study import (
    INTERRUPTED,
    SearchSpec,
    best,
    counts,
    default_storage,
    direction_of,
    fail_stale,
    failure,
    open_study,
    pareto,
    trial_rows,
)
from explorer.search.trial import COMPLETE, PRUNED, STOPPED, run_trial
from explorer.search.worker import worker_id
from explorer.store.database import engine_url, sqlite_path
from explorer.store.resume import restore_state
from explorer.store.runs import safe_name, save_run
from explorer.tasks import TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import new_state

STOP_GRACE_S = 10.0   # after a stop, how long running trials get to notice it
STALE_CHECK_S = 1.0   # while waiting on other drivers' trials, how often to look for stale ones
_STATES = {COMPLETE: TrialState.COMPLETE, PRUNED: TrialState.PRUNED}


def trial_seed(study_seed: int, number: int) -> int:
    return study_seed * 10_000 + number


def trial_spec(spec: SearchSpec, number: int, params: dict, peers: list, stop_file: str | None) -> dict:
    """The plain data a worker needs for trial `number` (explorer/search/trial.py, run_trial)."""
    settings = spec.settings()
    steps = params.get("steps", settings["steps"])
    seed = params.get("seed", trial_seed(spec.seed, number))
    return {"number": number, "task": spec.task, "data": spec.data, "base": settings, "params": params, "seed": seed,
            "data_seed": seed if spec.data_seed_from_trial else None, "metric": spec.objective(),
            "metrics": [name for name, _ in spec.objectives()],
            "direction": direction_of(spec.objective()), "pruner": spec.pruner, "peers": peers,
            "eval_every": max(1, steps // 8) if spec.pruner != "none" else 0, "eval_examples": spec.eval_examples,
            "stop_file": stop_file, "keep_run": spec.keep_runs}


_TASKS: dict[str, object] = {}


def save_trial_run(payload: dict, name: str, owner: str | None, extra: dict):
    """Save a trial's run (weights, history and what resuming needs) as explorer.store.runs saves any run."""
    key = json.dumps(payload["task_cfg"], sort_keys=True)
    if key not in _TASKS:
        _TASKS.clear()  # one study uses one task: keep one
        _TASKS[key] = make_task(TaskConfig.from_dict(payload["task_cfg"]))
    task, train_cfg = _TASKS[key], TrainConfig.from_dict(payload["train_cfg"])
    model = build_model(ModelConfig.from_dict(payload["model_cfg"]))
    state = new_state(model, task, train_cfg)
    restore_state(state, payload)
    state.history = list(payload["history"])
    return save_run(name, model.eval(), task.cfg, train_cfg, state.history, extra=extra, owner=owner, state=state)


class _Heartbeat:
    """Optuna's heartbeat (RDB storages) for the trials this driver runs, from a thread of its own (a trial
    on the SerialExecutor holds the driver's thread): a trial beats when sent, then every interval."""

    def __init__(self, study) -> None:
        self._storage = study._storage  # noqa: SLF001 - Optuna's storage API
        self._interval = getattr(self._storage, "get_heartbeat_interval", lambda: None)()
        self._ids: set[int] = set()
        self._lock, self.over = threading.Lock(), threading.Event()
        if self._interval:
            threading.Thread(target=self._beat, name="search-heartbeat", daemon=True).start()

    def add(self, trial) -> None:
        if self._interval:
            self._storage.record_heartbeat(trial._trial_id)  # noqa: SLF001
            with self._lock:
                self._ids.add(trial._trial_id)  # noqa: SLF001

    def discard(self, trial) -> None:
        with self._lock:
            self._ids.discard(trial._trial_id)  # noqa: SLF001

    def _beat(self) -> None:
        while not self.over.wait(self._interval):
            with self._lock:
                ids = list(self._ids)
            for trial_id in ids:
                with contextlib.suppress(Exception):  # a locked file, a lost connection: the next beat
                    self._storage.record_heartbeat(trial_id)


def _record(study, trial, future: Future, owner: str | None, stopping: bool = False) -> None:
    try:
        out = future.result()
    except Exception as exc:  # the worker died, or the cluster lost the task (or cancelled it on a stop)
        error = STOPPED if stopping else f"{type(exc).__name__}: {exc}"
        out = {"state": "FAIL", "error": error, "reports": [], "rungs": {}, "run": None}
    for step, value in out.get("reports", []) if len(study.directions) == 1 else ():   # Optuna's: one metric
        trial.report(value, step)
    for key, value in out.get("rungs", {}).items():  # the halving pruner's rungs, as Optuna's pruner keeps them
        study._storage.set_trial_system_attr(trial._trial_id, key, value)  # noqa: SLF001
    for key in ("worker", "seconds", "error"):
        if out.get(key) not in (None, ""):
            trial.set_user_attr(key, out[key])
    trial.set_user_attr(INTERRUPTED, out.get("error") == STOPPED)  # recorded: finished, unless it was stopped
    if out.get("run") is not None:
        name = safe_name(f"{study.study_name}-t{trial.number}")
        status = {COMPLETE: "finished", PRUNED: "pruned"}.get(out["state"], "diverged")
        info = save_trial_run(out["run"], name, owner, {"status": status, "search": study.study_name,
                                                        "trial": trial.number})
        trial.set_user_attr("run", info.name)
    state = _STATES.get(out["state"], TrialState.FAIL)
    values = out.get("values") or [out["value"]]   # one per metric of the study
    if state != TrialState.COMPLETE:
        values = None
    elif len(study.directions) == 1:
        values = values[0]
    study.tell(trial, values, state=state)


_ASKING = threading.Lock()   # drivers in one process (the app's sessions, threads)
ASK_LOCK = 0x61736B5F6C6F636B   # PostgreSQL's advisory lock for counting and asking, held by one driver anywhere
_ASK_ENGINES: dict = {}      # a one-connection pool per PostgreSQL URL, used under _ASKING only


@contextlib.contextmanager
def _pg_asking(url: str):
    import sqlalchemy as sa

    engine = _ASK_ENGINES.get(url)
    if engine is None:
        engine = _ASK_ENGINES[url] = sa.create_engine(engine_url(url), pool_size=1, max_overflow=0,
                                                      pool_pre_ping=True)
    with engine.begin() as conn:   # the transaction's lock: released as it ends, whatever happens inside
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": ASK_LOCK})
        yield


@contextlib.contextmanager
def _asking(spec: SearchSpec):
    """Hold the right to count and ask: a lock for this process's drivers and, on a SQLite file, an flock
    beside it for other processes on this machine; on PostgreSQL an advisory lock for drivers on any host.
    Drivers sharing another server database (MySQL) may still, rarely, each run the last trial: one more
    finished trial than asked for."""
    with _ASKING:
        url = spec.storage or default_storage()
        path = sqlite_path(url)
        if url.startswith("postgresql://"):
            with _pg_asking(url):
                yield
            return
        if path is None:
            yield
            return
        with open(f"{path}.ask-lock", "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)


def _launch(study, spec: SearchSpec, executor, dims: dict, driver: str, stop_file: str,
            heartbeat: _Heartbeat) -> tuple | None:
    """Ask for the next trial and send it, or None when the study needs no more (or no slot is free)."""
    if not executor.ready():
        return None
    with _asking(spec):   # counted and asked as one step: two drivers never both take the last place
        done, running = counts(study)
        if done + running >= spec.trials:
            return None
        trial = study.ask()
    heartbeat.add(trial)
    trial.set_user_attr(INTERRUPTED, True)   # until this driver records it: a crash leaves it unfinished
    trial.set_user_attr("driver", driver)
    params = suggest(trial, dims)
    peers = (study.get_trials(deepcopy=True, states=(TrialState.COMPLETE, TrialState.PRUNED))
             if spec.pruner != "none" else [])
    return executor.submit(run_trial, trial_spec(spec, trial.number, params, peers, stop_file)), trial


def _watch(stop: threading.Event, over: threading.Event, stop_file: str) -> None:
    while not over.is_set():
        if stop.wait(0.1):
            with contextlib.suppress(OSError):   # the search ended meanwhile and took the folder with it
                Path(stop_file).touch()
            return


def run_search(spec: SearchSpec, executor=None, on_record: Callable | None = None,
               stop: threading.Event | None = None, owner: str | None = None, study=None) -> dict:
    """Run the study until it holds `spec.trials` finished trials (or `stop` is set). `on_record(study)`
    is called in this thread after every recorded trial (and once at the start). The executor is closed
at the end (a shared process pool stays up: explorer/search/executors.py)."""
    study = study or open_study(spec)
    executor = executor or SerialExecutor()
    dims, driver = spec.dims(), worker_id()
    folder = Path(tempfile.mkdtemp(prefix="explorer-search-"))
    stop_file = str(folder / "stop")
    running: dict[Future, object] = {}
    stopped_at, over, heartbeat, looked = None, threading.Event(), _Heartbeat(study), time.monotonic()
    if stop is not None:  # a trial in this very thread (SerialExecutor) sees the stop through the file too
        threading.Thread(target=_watch, args=(stop, over, stop_file), name="search-stop", daemon=True).start()
    if on_record is not None:
        on_record(study)
    try:
        while True:
            if stop is not None and stop.is_set() and stopped_at is None:
                stopped_at = time.monotonic()
                Path(stop_file).touch()       # workers on this machine end after their step
                for future in running:
                    executor.cancel(future)   # a cluster's tasks are cancelled
            before = len(running)
            while stopped_at is None and len(running) < executor.workers:
                launched = _launch(study, spec, executor, dims, driver, stop_file, heartbeat)
                if launched is None:
                    break
                running[launched[0]] = launched[1]
            if on_record is not None and len(running) > before:  # the view counts the running trials too
                on_record(study)
            if not running:
                done, others = counts(study)
                if stopped_at is not None or done >= spec.trials:
                    break
                time.sleep(0.2)  # waiting for a slot of the server's pool, or for other drivers' trials
                if others and time.monotonic() - looked > STALE_CHECK_S:
                    looked = time.monotonic()
                    fail_stale(study)   # a gone driver's trials fail, and their place runs here
                    if on_record is not None and counts(study)[1] < others:
                        on_record(study)
                continue
            if stopped_at is not None and time.monotonic() - stopped_at > STOP_GRACE_S:
                break
            finished, _ = wait(running, timeout=0.25, return_when=FIRST_COMPLETED)
            for future in finished:
                trial = running.pop(future)
                _record(study, trial, future, owner, stopping=stopped_at is not None)
                heartbeat.discard(trial)
                if on_record is not None:
                    on_record(study)
    finally:
        over.set()
        heartbeat.over.set()
        Path(stop_file).touch()
        for future, trial in running.items():  # given up on: not finished, run again on resume
            executor.cancel(future)
            with contextlib.suppress(Exception):
                trial.set_user_attr(INTERRUPTED, True)
                study.tell(trial, state=TrialState.FAIL)
        executor.close()
        shutil.rmtree(folder, ignore_errors=True)
    rows = trial_rows(study)
    return {"study": study.study_name, "driver": driver, "trials": rows, "best": best(study),
            "pareto": pareto(study), "stopped": stopped_at is not None, "failure": failure(rows)}


__all__ = ["STOP_GRACE_S", "trial_seed", "trial_spec", "save_trial_run", "run_search"]
