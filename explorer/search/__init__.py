"""Hyperparameter search: Optuna studies over the model and training settings, their trials run in this
process, in worker processes, or as Ray tasks on a cluster.

    spec = SearchSpec(task="reversal-fast", space=("lr=1e-4:1e-2:log", "d_model=16,32,64"), trials=8, steps=200)
    outcome = run_search(spec, ProcessExecutor(2))       # resumable: the study lives in runs/search.db

Layout: `space` (the specs and Optuna's suggest calls), `trial` (one trial, plain data in and out),
`executors` (in-process, processes, the server's slots), `ray_cluster` (Ray, imported only when asked),
`study` (the spec, the storage, what a study holds), `driver` (the ask / run / tell loop).
"""

from .driver import run_search, trial_seed
from .executors import PooledExecutor, ProcessExecutor, SerialExecutor, server_processes
from .space import FIELDS, Dim, parse_dim, parse_space
from .study import SAMPLERS, SearchSpec, best, importances, open_study, trial_rows
from .trial import PRUNERS, run_trial

__all__ = ["run_search", "trial_seed", "PooledExecutor", "ProcessExecutor", "SerialExecutor", "server_processes",
           "FIELDS", "Dim", "parse_dim", "parse_space", "SAMPLERS", "PRUNERS", "SearchSpec", "best", "importances",
           "open_study", "trial_rows", "run_trial"]
