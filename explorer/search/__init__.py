"""Hyperparameter search: Optuna studies over the model and training settings, their trials run in this
process, in worker processes, or as Ray tasks on a cluster.

    spec = SearchSpec(task="reversal-fast", space=("lr=1e-4:1e-2:log", "d_model=16,32,64"), trials=8, steps=200)
    outcome = run_search(spec, ProcessExecutor(2))       # resumable: the study lives in runs/search.db

Layout: `space` (the specs and Optuna's suggest calls), `trial` (one trial, plain data in and out),
`executors` (in-process, processes, the server's slots), `ray_cluster` (Ray, imported only when asked),
`study` (the spec, the storage, what a study holds), `driver` (the ask / run / tell loop).
Names load on first use: the app imports the executors at start (the sweep's), Optuna only when a study runs.
"""

import importlib

_WHERE = {"run_search": "driver", "trial_seed": "driver", "PooledExecutor": "executors",
          "ProcessExecutor": "executors", "SerialExecutor": "executors", "server_processes": "executors",
          "FIELDS": "space", "Dim": "space", "parse_dim": "space", "parse_space": "space", "SAMPLERS": "study",
          "SearchSpec": "study", "best": "study", "importances": "study", "open_study": "study",
          "trial_rows": "study", "PRUNERS": "trial", "run_trial": "trial"}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)


__all__ = list(_WHERE)
