"""A study's sampler (`make_sampler(spec)`: grid, random or TPE, seeded per trial by `sampler_seed`), and
samplers that never propose a point the constraints refuse (explorer/search/constraints.py).

    Feasible(inner, space, ok)    # random or TPE: a trial's values drawn again until ok(values) is None
    restrict_grid(grid, ok)       # a grid sampler left with the combinations that may train

`ok(values)` gets a trial's searched values (an enqueued trial's fixed ones included) and returns None or
why they may not train. Feasible draws every dimension through the inner sampler's own `sample_independent`
(its random start, then its model), so with no constraint in play it is not used at all and a study draws
exactly what it drew before constraints existed.
"""

from __future__ import annotations

import numpy as np
import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from explorer.search.space import FIELDS, Dim, grid

MAX_DRAWS = 2000   # draws of one trial before its space is called too tight


def distributions(space: dict[str, Dim]) -> dict:
    """The Optuna distribution each dimension's suggest call asks for (explorer/search/space.py, suggest)."""
    out = {}
    for name, d in space.items():
        if d.choices:
            out[name] = CategoricalDistribution(list(d.choices))
        elif FIELDS[name][1] is int:
            out[name] = IntDistribution(int(d.low), int(d.high), log=d.log)
        else:
            out[name] = FloatDistribution(d.low, d.high, log=d.log)
    return out


class Feasible(optuna.samplers.BaseSampler):
    """`inner` (random or TPE, fresh per trial) with rejection: the trial's whole point is drawn at once, in
    `sample_relative`, and drawn again while `ok` refuses it. RuntimeError after MAX_DRAWS refusals."""

    def __init__(self, inner, space: dict[str, Dim], ok) -> None:
        self.inner, self._dists, self._ok = inner, distributions(space), ok

    def before_trial(self, study, trial) -> None:
        self.inner.before_trial(study, trial)

    def infer_relative_search_space(self, study, trial):
        return dict(self._dists)

    def sample_relative(self, study, trial, search_space):
        fixed = trial.system_attrs.get("fixed_params", {})   # an enqueued trial's values
        free = {n: d for n, d in search_space.items() if n not in fixed}
        why = None
        for _ in range(MAX_DRAWS):
            values = {n: self.inner.sample_independent(study, trial, n, d) for n, d in free.items()}
            why = self._ok({**fixed, **values})
            if why is None:
                return values
        raise RuntimeError(f"no point that satisfies the constraints in {MAX_DRAWS} draws (the last: {why}); "
                           "loosen the constraints or change the space")

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self.inner.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study, trial, state, values) -> None:
        self.inner.after_trial(study, trial, state, values)


def restrict_grid(sampler, ok):
    """A GridSampler left with the combinations `ok` lets train (its shuffled order kept); as it is without
    constraints. Optuna's grid keeps its points in `_all_grids` (names sorted), and counts them."""
    if ok is not None:
        names = sampler._param_names  # noqa: SLF001 - the grid's own bookkeeping, narrowed
        sampler._all_grids = [g for g in sampler._all_grids if ok(dict(zip(names, g))) is None]  # noqa: SLF001
        sampler._n_min_trials = len(sampler._all_grids)  # noqa: SLF001
    return sampler


class _Grid(optuna.samplers.GridSampler):
    """Optuna's grid sampler without its stop when the grid is used up: that stop works only inside
    study.optimize, and the driver (ask and tell) stops on its trial count."""

    def after_trial(self, study, trial, state, values) -> None:
        pass


def sampler_seed(study_seed: int, number: int) -> int:
    """Trial `number`'s sampler seed: its own stream of the study's (numpy's SeedSequence)."""
    return int(np.random.SeedSequence([study_seed, number]).generate_state(1)[0])


def _sampler(spec, seed: int):
    ok = spec.feasibility()
    if spec.sampler == "grid":
        return restrict_grid(_Grid(grid(spec.dims()), seed=seed), ok)
    inner = _free_sampler(spec, seed)
    return inner if ok is None else Feasible(inner, spec.dims(), ok)   # drawn again until feasible


def _free_sampler(spec, seed: int):
    if spec.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    # random for the first third of a small budget (Optuna's 10 would leave TPE nothing of 8 trials); the
    # constant liar keeps parallel workers from being sent the same point
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=min(10, max(2, spec.trials // 3)),
                                      constant_liar=True)


class _PerTrial(optuna.samplers.BaseSampler):
    """The spec's random or TPE sampler made afresh for each trial, seeded by sampler_seed: what it learns
    lives in the storage (the finished trials), so only its random draws depend on the seed, and those now
    on the trial."""

    def __init__(self, spec) -> None:
        self._spec, self._inner = spec, _sampler(spec, spec.seed)

    def before_trial(self, study, trial) -> None:
        self._inner = _sampler(self._spec, sampler_seed(self._spec.seed, trial.number))
        self._inner.before_trial(study, trial)

    def infer_relative_search_space(self, study, trial):
        return self._inner.infer_relative_search_space(study, trial)

    def sample_relative(self, study, trial, search_space):
        return self._inner.sample_relative(study, trial, search_space)

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self._inner.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study, trial, state, values) -> None:
        self._inner.after_trial(study, trial, state, values)


def make_sampler(spec):   # spec: an explorer.search.study.SearchSpec (not imported: study imports this)
    # the grid's order is shuffled once by the study's seed and its next point read off the storage, so it
    # never repeats one: it keeps that seed (a grid shuffled afresh per trial would)
    return _sampler(spec, spec.seed) if spec.sampler == "grid" else _PerTrial(spec)



__all__ = ["MAX_DRAWS", "distributions", "Feasible", "restrict_grid", "sampler_seed", "make_sampler"]
