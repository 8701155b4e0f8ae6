"""Studies made with Optuna directly, as the CLI and the app store them, for the studies' tests: one
objective with a log-scaled lr, a categorical d_model and a pruner; two objectives (a Pareto front)."""

from __future__ import annotations

import math

import optuna

from explorer.search.studies import OWNER

SPACE = ["lr=0.0001:0.01:log", "d_model=16,32", "n_heads=1:4"]


def single(storage=None, name: str = "single", owner: str | None = None, trials: int = 12,
           spec: dict | None = None):
    """A maximised val_exact over lr (log), d_model and n_heads (storage None: in memory); the median
    pruner prunes some trials."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=name, storage=storage, direction="maximize",
                                sampler=optuna.samplers.RandomSampler(seed=0),
                                pruner=optuna.pruners.MedianPruner(n_startup_trials=2))
    study.set_user_attr("spec", spec or {"task": "reversal-fast", "sampler": "random", "pruner": "median",
                                         "metric": "val_exact", "space": SPACE})
    if owner:
        study.set_user_attr(OWNER, owner)

    def objective(t):
        lr = t.suggest_float("lr", 1e-4, 1e-2, log=True)
        d_model = t.suggest_categorical("d_model", [16, 32])
        t.suggest_int("n_heads", 1, 4)
        for step in range(1, 6):
            t.report(min(1.0, step * lr * 30), step * 50)
            if t.should_prune():
                raise optuna.TrialPruned()
        t.set_user_attr("run", f"{name}-t{t.number}")
        t.set_user_attr("seconds", 1.5)
        return min(1.0, math.log10(lr) / 4 + 1.2 + d_model / 320)

    study.optimize(objective, n_trials=trials)
    return study


def pareto(storage=None, name: str = "pareto", trials: int = 12):
    """Two objectives: val_exact up, params down, over d_model and n_layers."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=name, storage=storage, directions=["maximize", "minimize"],
                                sampler=optuna.samplers.RandomSampler(seed=1))
    study.set_user_attr("metrics", ["val_exact", "params"])
    study.optimize(lambda t: (1 - 1 / t.suggest_int("d_model", 8, 64),
                              float(t.params["d_model"] ** 2 * 12 * t.suggest_int("n_layers", 1, 3))), n_trials=trials)
    return study
