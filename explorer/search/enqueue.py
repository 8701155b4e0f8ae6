"""Trials given by hand, run before the sampler's: `--enqueue lr=3e-3,d_model=32` (a form on the page).

    parse_enqueue(spec, "lr=3e-3,d_model=32")    # {"lr": 0.003, "d_model": 32}, or ValueError naming why not

Each value must be one the space can give (a listed choice, or within the range), within the limits every
run shares (explorer/limits.py), and the point must satisfy the constraints and make a model that can
exist. A field of the space left out is drawn by the sampler, as for any trial.
"""

from __future__ import annotations

from collections.abc import Mapping

from explorer.limits import check_values
from explorer.search.check import feasible_with
from explorer.search.space import Dim, parse_value


def _typed(text: str, name: str, value: str):
    try:
        return parse_value(name, value)
    except ValueError as err:
        raise ValueError(f"enqueue {text!r}: {err}") from None


def _parse_pairs(text: str, dims: dict) -> dict:
    pairs = [tuple(part.strip() for part in item.partition("=")) for item in str(text).split(",")]
    for name, sep, value in pairs:
        if not (sep and name and value):
            raise ValueError(f"enqueue {text!r}: {name + sep + value!r} must read FIELD=VALUE (pairs joined by "
                             "commas, e.g. lr=3e-3,d_model=32)")
        if name not in dims:
            raise ValueError(f"enqueue {text!r}: {name} is not searched; give fields of the space: "
                             f"{', '.join(dims)}")
    names = [name for name, _, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueError(f"enqueue {text!r}: a field is given twice; give each once")
    return {name: _typed(text, name, value) for name, _, value in pairs}


def _within(name: str, value, dim: Dim) -> str | None:
    if dim.choices:
        if value not in dim.choices:
            return f"{name}={value} is not one of the space's choices ({', '.join(map(str, dim.choices))})"
        return None
    if not dim.low <= value <= dim.high:
        return f"{name}={value:g} is outside the space's range {dim.low:g}..{dim.high:g}"
    return None


def parse_enqueue(spec, item) -> dict:
    """One enqueued trial's params (text `FIELD=VALUE,...` or a mapping), checked against `spec`'s space,
    the caps and the constraints; ValueError says what is wrong and what is valid."""
    dims = spec.dims()
    if isinstance(item, Mapping):
        params, text = dict(item), ",".join(f"{k}={v}" for k, v in item.items())
        unknown = sorted(set(params) - set(dims))
        if unknown:
            raise ValueError(f"enqueue {text!r}: {unknown[0]} is not searched; give fields of the space: "
                             f"{', '.join(dims)}")
    else:
        text = str(item).strip()
        if not text:
            raise ValueError("enqueue: empty; give FIELD=VALUE pairs joined by commas, e.g. lr=3e-3,d_model=32")
        params = _parse_pairs(text, dims)
    for name, value in params.items():
        why = _within(name, value, dims[name])
        if why is not None:
            raise ValueError(f"enqueue {text!r}: {why}")
    try:
        check_values(params)
    except ValueError as err:
        raise ValueError(f"enqueue {text!r}: {err}") from None
    ok = spec.feasibility()
    if ok is not None and feasible_with(params, dims, ok) is None:
        why = ok(params) if set(params) == set(dims) else "no values of the other fields satisfy the constraints"
        raise ValueError(f"enqueue {text!r} may not train: {why}")
    return params


__all__ = ["parse_enqueue"]
