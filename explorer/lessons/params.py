"""What a lesson file may name: a view by name with its parameters (`NamedView`, `Param`), and a measured
answer by name (`Measurement`). Each parameter carries its type and its range or options, so a file's value
is checked before anything is built, with a message that says what is valid (the pages' own limits)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from explorer.lessons.base import Control, Reveal, View


@dataclass(frozen=True)
class Param:
    """One parameter of a named view: whole numbers in [low, high], or one of `options`."""

    name: str
    default: Any
    low: float | None = None
    high: float | None = None
    options: tuple = ()
    aliases: tuple[str, ...] = ()   # the page's own link key (e.g. `pe_d_model`), accepted as well
    help: str = ""

    def valid(self) -> str:
        if self.options:
            return "one of " + ", ".join(str(o) for o in self.options)
        return f"a whole number from {self.low:g} to {self.high:g}"

    def check(self, value) -> Any:
        """The value, or ValueError naming the parameter and what is valid."""
        if self.options:
            for option in self.options:
                if type(option) is type(value) and option == value or str(option) == str(value):
                    return option
        elif isinstance(value, int) and not isinstance(value, bool) and self.low <= value <= self.high:
            return value
        raise ValueError(f"{self.name} = {value!r} is not valid ({self.valid()})")


@dataclass(frozen=True)
class NamedView:
    """A view a file names (`view = "positional"`): its parameters, `build(values) -> View`, and
    `try_it(values) -> (page url, link params)`: the same view on its page. A shipped step's own view has
    `controls` instead: the file's parameters set their defaults, and the step keeps them as controls."""

    name: str
    help: str
    params: tuple[Param, ...] = ()
    build: Callable[[dict], View] | None = None
    try_it: Callable[[dict], tuple[str, dict]] | None = None
    controls: tuple[Control, ...] = ()
    check: Callable[[dict], None] | None = None   # a rule across parameters (ValueError says which)
    step: bool = False   # a shipped step's own view: `build` takes the controls' values, as Step.view does

    def param(self, key: str) -> Param | None:
        return next((p for p in self.params if key == p.name or key in p.aliases), None)

    def resolve(self, given: dict) -> dict:
        """Every parameter's value: the given ones checked (by name or alias), the rest their defaults.
        KeyError for an unknown key (its message says which are valid), ValueError for a bad value."""
        values = {p.name: p.default for p in self.params}
        for key, value in given.items():
            p = self.param(key)
            if p is None:
                raise KeyError(key)
            values[p.name] = p.check(value)
        if self.check is not None:
            self.check(values)
        return values

    def names(self) -> str:
        return ", ".join(p.name for p in self.params) or "none"


def control_param(c: Control) -> Param:
    """A shipped step's control as a parameter: its options, its default."""
    return Param(c.key, c.default, options=tuple(c.options), help=c.label)


@dataclass(frozen=True)
class Measurement:
    """A shipped question's measured answer, by name: what it asks (its choices, or a number range and
    unit), what it runs (`experiment` with `params`, or nothing: computed live) and `reveal(result)`."""

    name: str
    prompt: str
    reveal: Callable[[Any], Reveal]
    choices: tuple[str, ...] = ()
    number: tuple[float, float, float] | None = None
    unit: str = ""
    tolerance: float = 0.1
    experiment: str | None = None
    params: dict = field(default_factory=dict)


__all__ = ["Param", "NamedView", "Measurement", "control_param"]
