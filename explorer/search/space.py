"""A search space: the settings a study varies, each a range or a list of choices, checked when parsed.

    space = parse_space(["lr=1e-4:1e-2:log", "d_model=16,32,64", "pos_encoding=rope,sinusoidal"])
    params = suggest(trial, space)          # an Optuna trial's values, one per dimension
    grid(space)                             # every dimension's choices, for Optuna's GridSampler

A spec is `field=LOW:HIGH` (a range; `:log` samples it on a log scale) or `field=A,B,C` (choices).
A ValueError names the field and says what is valid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from explorer.config import ACTIVATIONS, ATTN_SCALES, NORMS, POS_ENCODINGS, RESIDUALS

# field -> (which config it sets, value type); n_layers sets the encoder's and the decoder's depth
FIELDS: dict[str, tuple[str, type]] = {
    "d_model": ("model", int), "n_heads": ("model", int), "n_layers": ("model", int), "d_ff": ("model", int),
    "pos_encoding": ("model", str), "norm": ("model", str), "activation": ("model", str),
    "residual": ("model", str), "attn_scale": ("model", str), "dropout": ("model", float),
    "lr": ("train", float), "steps": ("train", int), "batch_size": ("train", int), "warmup": ("train", int),
    "label_smoothing": ("train", float), "weight_decay": ("train", float),
    "seed": ("train", int),   # a trial's own seed: repeats each point over seeds (the sweep's seeds)
}
NAMED = {"pos_encoding": POS_ENCODINGS, "norm": NORMS, "activation": ACTIVATIONS,  # the only values allowed
         "residual": RESIDUALS, "attn_scale": ATTN_SCALES}
# (low, high-or-None) a value may take, so a trial never asks for a config that cannot exist
BOUNDS = {"d_model": (1, None), "n_heads": (1, None), "n_layers": (1, None), "d_ff": (1, None),
          "dropout": (0.0, 1.0), "lr": (0.0, None), "steps": (1, None), "batch_size": (1, None),
          "warmup": (0, None), "label_smoothing": (0.0, 1.0), "weight_decay": (0.0, None), "seed": (0, None)}


@dataclass(frozen=True)
class Dim:
    """One dimension: `choices`, or a range `low`..`high` (on a log scale if `log`)."""

    name: str
    choices: tuple = ()
    low: float | None = None
    high: float | None = None
    log: bool = False

    def spec(self) -> str:
        """The text this dimension was parsed from (normalised): `lr=0.0001:0.01:log`, `d_model=16,32`."""
        if self.choices:
            return f"{self.name}=" + ",".join(str(c) for c in self.choices)
        return f"{self.name}={self.low:g}:{self.high:g}" + (":log" if self.log else "")


def _number(field: str, text: str, typ: type):
    try:
        value = typ(text) if typ is int else float(text)
    except ValueError:
        raise ValueError(f"{field}: {text!r} is not a {'whole number' if typ is int else 'number'}") from None
    if typ is float and not math.isfinite(value):
        raise ValueError(f"{field}: {text!r} must be a finite number")
    low, high = BOUNDS[field]
    if value < low or (field in ("lr",) and value <= low) or (high is not None and value >= high):
        above = f"> {low:g}" if field == "lr" else f">= {low:g}"
        raise ValueError(f"{field}: {value:g} is out of range; it must be {above}"
                         + ("" if high is None else f" and < {high:g}"))
    return value


def parse_value(field: str, text: str):
    """One fixed setting's value (`--set field=text`), typed and checked as a space's; ValueError names it."""
    if field in NAMED:
        if text not in NAMED[field]:
            raise ValueError(f"{field}: {text!r} not known; choose from {', '.join(NAMED[field])}")
        return text
    return _number(field, text, FIELDS[field][1])


def parse_dim(text: str) -> Dim:
    """One `field=...` spec as a Dim; ValueError names the field and what is valid."""
    field, sep, rest = str(text).partition("=")
    field, rest = field.strip(), rest.strip()
    if not sep or not field:
        raise ValueError(f"space {text!r} must read field=LOW:HIGH[:log] or field=A,B,C")
    if field not in FIELDS:
        raise ValueError(f"space: unknown field {field!r}; choose one of {', '.join(FIELDS)}")
    typ = FIELDS[field][1]
    if ":" in rest:
        if field in NAMED:
            raise ValueError(f"{field}: a range makes no sense here; list choices, e.g. "
                             f"{field}={','.join(NAMED[field])}")
        parts = [p.strip() for p in rest.split(":")]
        log = len(parts) == 3 and parts[2] == "log"
        if len(parts) not in (2, 3) or (len(parts) == 3 and not log):
            raise ValueError(f"{field}: {rest!r} must read LOW:HIGH or LOW:HIGH:log")
        low, high = (_number(field, p, typ) for p in parts[:2])
        if not low < high:
            raise ValueError(f"{field}: the range {rest!r} is empty; LOW must be below HIGH")
        if log and low <= 0:
            raise ValueError(f"{field}: a log range needs LOW > 0, not {low:g}")
        return Dim(field, low=low, high=high, log=log)
    items = [p.strip() for p in rest.split(",") if p.strip()]
    if not items:
        raise ValueError(f"{field}: no choices given; list one or more, e.g. {field}=A,B")
    if field in NAMED:
        bad = [i for i in items if i not in NAMED[field]]
        if bad:
            raise ValueError(f"{field}: {', '.join(bad)} not known; choose from {', '.join(NAMED[field])}")
        choices = tuple(items)
    else:
        choices = tuple(_number(field, i, typ) for i in items)
    if len(set(choices)) != len(choices):
        raise ValueError(f"{field}: a choice is listed twice in {rest!r}")
    return Dim(field, choices=choices)


def parse_space(specs) -> dict[str, Dim]:
    """Specs (`["lr=1e-4:1e-2:log", "d_model=16,32"]`) as {field: Dim}; a field given twice is refused."""
    space: dict[str, Dim] = {}
    for text in specs:
        dim = parse_dim(text)
        if dim.name in space:
            raise ValueError(f"space: {dim.name} is given twice; give each field once")
        space[dim.name] = dim
    if not space:
        raise ValueError("space: give at least one field to search, e.g. lr=1e-4:1e-2:log")
    return space


def suggest(trial, space: dict[str, Dim]) -> dict:
    """The trial's value of every dimension (Optuna's suggest_* API; the sampler decides)."""
    out = {}
    for name, d in space.items():
        if d.choices:
            out[name] = trial.suggest_categorical(name, list(d.choices))
        elif FIELDS[name][1] is int:
            out[name] = trial.suggest_int(name, int(d.low), int(d.high), log=d.log)
        else:
            out[name] = trial.suggest_float(name, d.low, d.high, log=d.log)
    return out


def grid(space: dict[str, Dim]) -> dict[str, list]:
    """Every dimension's choices, for GridSampler; a range is refused (a grid needs listed values)."""
    ranges = [d.name for d in space.values() if not d.choices]
    if ranges:
        raise ValueError(f"the grid sampler needs listed values; {', '.join(ranges)} is a range: "
                         "list choices (field=A,B,C) or use the tpe or random sampler")
    return {name: list(d.choices) for name, d in space.items()}


def grid_size(space: dict[str, Dim]) -> int:
    return math.prod(len(d.choices) for d in space.values())


__all__ = ["FIELDS", "NAMED", "Dim", "parse_value", "parse_dim", "parse_space", "suggest", "grid", "grid_size"]
