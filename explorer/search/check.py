"""A study's space checked against its fixed settings and constraints before the first trial: every value
the space lists must be part of some point that may train, the space must hold a point that satisfies every
constraint, and every value must make a model and a training run that can exist; else the study is refused
naming a value (or combination) that cannot (rather than run trials that all fail).

    check_space(spec)     # ValueError: "the space can give d_model=7 (with n_heads=4, ...), which cannot run: ..."
    ok = feasibility(spec)  # None (every point may train), or ok(params) -> None | why that point may not

The built-in constraints (explorer/search/constraints.py: heads divide d_model, rope's head dimension is
even, d_ff >= d_model when both are searched) and the user's leave infeasible combinations out of what the
sampler proposes; a listed value that no combination can use is a mistake, and refused.
"""

from __future__ import annotations

import itertools
import math

from explorer.config import ModelConfig
from explorer.search.constraints import builtin_violation, parse_constraints, violation
from explorer.search.space import FIELDS, Dim
from explorer.search.trial import configs

COUPLED = ("d_model", "n_heads", "pos_encoding")
RANGE_POINTS = 12          # a float range is tried at this many points (ends included) when looking for one
MAX_POINTS = 200_000       # points looked at for a feasible one before trusting the sampler to find it


def _ends(dim: Dim) -> tuple:
    if dim.choices:
        return dim.choices
    typ = int if FIELDS[dim.name][1] is int else float
    return typ(dim.low), typ(dim.high)


def _every(dim: Dim):
    """Every value a coupled dimension can give, a range of whole numbers lazily."""
    return dim.choices or range(int(dim.low), int(dim.high) + 1)


def _candidates(dim: Dim):
    """Values of a dimension to look for a feasible point among: its choices, a whole-number range's every
    value, a float range's ends and points between (on its scale)."""
    if dim.choices or FIELDS[dim.name][1] is int:
        return _every(dim)
    if dim.log:
        a, b = math.log(dim.low), math.log(dim.high)
        return [math.exp(a + (b - a) * i / (RANGE_POINTS - 1)) for i in range(RANGE_POINTS)]
    return [dim.low + (dim.high - dim.low) * i / (RANGE_POINTS - 1) for i in range(RANGE_POINTS)]


def _words(values: dict) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items())


def _try(spec, settings: dict, params: dict, searched: dict, fixed: dict | None = None) -> None:
    """configs() of a trial with `params`; ValueError names `searched` (the values at fault) and `fixed`."""
    try:
        configs({"task": spec.task, "data": spec.data, "base": settings, "params": params, "seed": 0})
    except ValueError as err:
        if searched:
            head = (f"the space can give {_words(searched)}" + (f" (with {_words(fixed)})" if fixed else "")
                    + ", which cannot run")
        else:
            head = f"the fixed settings {_words(fixed or {})} cannot run"
        raise ValueError(f"{head}: {err}. Change the space or the fixed settings") from None


def fixed_values(spec) -> dict:
    """The settings a trial has beside its params, as the constraints see them (d_ff following d_model)."""
    default = ModelConfig()
    return {**{f: getattr(default, f) for f in COUPLED}, **spec.settings()}


def point_values(fixed: dict, params: dict) -> dict:
    values = {**fixed, **params}
    if "d_ff" not in fixed and "d_ff" not in params and "d_model" in values:
        values["d_ff"] = 2 * values["d_model"]   # as explorer/search/trial.py's configs
    return values


def _builtin_bites(dims: dict, fixed: dict) -> bool:
    """Whether a built-in constraint refuses some point of the space (looked for lazily, as a range's
    misfit shows within a few steps)."""
    if "d_ff" in dims and "d_model" in dims and min(_ends(dims["d_ff"])) < max(_ends(dims["d_model"])):
        return True
    if not set(COUPLED) & set(dims):
        return False
    values = {f: _every(dims[f]) if f in dims else (fixed[f],) for f in COUPLED}
    if all(h == 1 for h in values["n_heads"]) and "rope" not in values["pos_encoding"]:
        return False  # one head of an absolute encoding fits any width (and a width range may be long)
    combos = itertools.product(*(values[f] for f in COUPLED))
    return any(builtin_violation(dict(zip(COUPLED, c)), ()) for c in itertools.islice(combos, MAX_POINTS))


def feasibility(spec):
    """None when the constraints refuse no point (the sampler needs no check), else ok(params) -> None or
    why the point may not train. The sweep (`refuse_invalid=False`) keeps its impossible cells."""
    if not spec.refuse_invalid:
        return None
    dims, fixed = spec.dims(), fixed_values(spec)
    constraints = parse_constraints(spec.constraints, list(dims))
    if not constraints and not _builtin_bites(dims, fixed):
        return None
    searched = tuple(dims)
    return lambda params: violation(point_values(fixed, params), constraints, searched)


def feasible_with(given: dict, dims: dict, ok) -> dict | None:
    """A point of the space with the `given` values that `ok` lets train, or None (looked at lazily)."""
    others = [n for n in dims if n not in given]
    for combo in itertools.islice(itertools.product(*(_candidates(dims[n]) for n in others)), MAX_POINTS):
        point = {**dict(zip(others, combo)), **given}
        if ok(point) is None:
            return point
    return None


def _refuse_unusable(spec, dims: dict, ok, settings: dict) -> None:
    """A listed value no point of the space may use is a mistake: refused, naming what is wrong with it."""
    for name, dim in dims.items():
        for value in dim.choices:
            if feasible_with({name: value}, dims, ok) is not None:
                continue
            first = {n: _ends(d)[0] for n, d in dims.items()}
            point = {**first, name: value}
            if name in COUPLED:   # the model cannot exist: say so as the config does
                fixed = {f: settings.get(f, getattr(ModelConfig(), f)) for f in COUPLED if f not in dims}
                _try(spec, settings, point, {f: point[f] for f in COUPLED if f in dims}, fixed)
            raise ValueError(f"the space can give {_words({name: value})}, but no point with it may train: "
                             f"{ok(point)}. Change the space or the constraints")


def check_space(spec) -> dict:
    """ValueError naming a value or combination of `spec`'s space that cannot make a trial; else a point of
    the space that may train (for the caller's further checks)."""
    settings, dims = spec.settings(), spec.dims()
    ok = feasibility(spec)
    fixed = fixed_values(spec)
    if not set(COUPLED) & set(dims):   # nothing searched couples: the fixed settings must fit
        coupled = {f: fixed[f] for f in COUPLED}
        if builtin_violation(coupled, ()):
            _try(spec, settings, {}, {}, {f: v for f, v in coupled.items() if f in ("d_model", "n_heads")})
    first = {name: _ends(d)[0] for name, d in dims.items()}
    if ok is not None:
        _refuse_unusable(spec, dims, ok, settings)
        point = feasible_with({}, dims, ok)
        if point is None and math.prod(len(list(_candidates(d))) for d in dims.values()) <= MAX_POINTS:
            raise ValueError(f"no point of the space satisfies the constraints "
                             f"({', '.join(spec.constraints) or 'the built-in ones'}); the first, "
                             f"{_words(first)}: {ok(first)}. Loosen the constraints or change the space")
        first = point or first
    for name, dim in dims.items():
        if ok is not None and name in COUPLED:
            continue   # its values were checked with a point that may train
        for value in _ends(dim):
            _try(spec, settings, {**first, name: value}, {name: value})
    _try(spec, settings, first, {k: v for k, v in first.items() if k in COUPLED})
    return first


__all__ = ["COUPLED", "check_space", "feasibility", "feasible_with", "fixed_values", "point_values"]
