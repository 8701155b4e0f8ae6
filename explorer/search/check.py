"""A study's space checked against its fixed settings before the first trial: every value the space can
give, and every d_model x n_heads x pos_encoding combination, must make a model and a training run that
can exist, or the study is refused naming one that cannot (rather than run trials that all fail).

    check_space(spec)     # ValueError: "the space can give d_model=7 (with n_heads=4, ...), which cannot run: ..."

Only those three fields constrain each other (heads divide d_model; rope needs an even head dimension), so
they are checked in every combination; any other field at each of its values (its choices, or a range's
two ends: every other bound a trial's config has is a bound on one field).
"""

from __future__ import annotations

from explorer.config import ModelConfig
from explorer.search.space import FIELDS, Dim
from explorer.search.trial import configs

COUPLED = ("d_model", "n_heads", "pos_encoding")


def _ends(dim: Dim) -> tuple:
    if dim.choices:
        return dim.choices
    typ = int if FIELDS[dim.name][1] is int else float
    return typ(dim.low), typ(dim.high)


def _every(dim: Dim):
    """Every value a coupled dimension can give, a range of whole numbers lazily."""
    return dim.choices or range(int(dim.low), int(dim.high) + 1)


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


def _misfit(dims: dict, settings: dict) -> dict | None:
    """A d_model x n_heads x pos_encoding combination (searched or fixed) that cannot make a model."""
    default = ModelConfig()
    values = {f: _every(dims[f]) if f in dims else (settings.get(f, getattr(default, f)),) for f in COUPLED}
    if all(h == 1 for h in values["n_heads"]) and "rope" not in values["pos_encoding"]:
        return None  # one head of an absolute encoding fits any width (and a width range may be long)
    combos = ((d, h, p) for d in values["d_model"] for h in values["n_heads"] for p in values["pos_encoding"])
    for d_model, n_heads, pos in combos:  # lazily: a misfit shows within a few of a range's steps
        if d_model % n_heads or (pos == "rope" and (d_model // n_heads) % 2):
            return dict(zip(COUPLED, (d_model, n_heads, pos)))
    return None


def check_space(spec) -> None:
    """ValueError naming a value or combination of `spec`'s space that cannot make a trial."""
    settings, dims = spec.settings(), spec.dims()
    first = {name: _ends(d)[0] for name, d in dims.items()}
    misfit = _misfit(dims, settings)
    if misfit is not None:
        searched = {f: v for f, v in misfit.items() if f in dims}
        _try(spec, settings, {**first, **searched}, searched, {f: v for f, v in misfit.items() if f not in dims})
    for name, dim in dims.items():
        for value in _ends(dim):
            _try(spec, settings, {**first, name: value}, {name: value})


__all__ = ["COUPLED", "check_space"]
