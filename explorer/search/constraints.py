"""Constraints on a search space: which points of it may train.

    c = parse_constraint("d_ff>=2*d_model")       # ValueError names what is wrong and what is valid
    c.holds({"d_ff": 64, "d_model": 32})           # True
    violation(params, constraints, searched)        # None, or why this point may not train

A user constraint is one comparison (`<`, `<=`, `>`, `>=`, `==`, `!=`) between two sums of numbers and
numeric field names (`d_model`, `n_heads`, `lr`, ...) with `+ - * /` and brackets: a tiny grammar read by
a recursive-descent parser, never `eval`. The built-in ones always apply: n_heads divides d_model (and
rope's head dimension is even), and d_ff >= d_model when both are searched.

How infeasible points are handled (explorer/search/sampling.py): the sampler never proposes one. The
random and TPE samplers draw a trial's values again until they satisfy every constraint (seeded, so a
study proposes the same points every time); the grid leaves the infeasible combinations out of its grid.
So no trial trains on an invalid config, and none is stored as a failure. Optuna's `constraints_func`
is not used: it lets a sampler learn from trials that ran infeasible, and here none runs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from explorer.search.space import FIELDS

NUMERIC = tuple(name for name, (_, typ) in FIELDS.items() if typ in (int, float))
OPS = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "==": lambda a, b: math.isclose(a, b),
       "!=": lambda a, b: not math.isclose(a, b), "<": lambda a, b: a < b, ">": lambda a, b: a > b}
_NUMBER = r"\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?"
_TOKEN = re.compile(rf"\s*(?:({_NUMBER})|([A-Za-z_]\w*)|(<=|>=|==|!=|[<>+\-*/()]))")
VALID = ("one comparison (<, <=, >, >=, ==, !=) of numbers and numeric fields with + - * / and brackets, "
         "e.g. d_ff>=2*d_model")


class _Parser:
    """expr := term (('+'|'-') term)*; term := factor (('*'|'/') factor)*; factor := NUMBER | NAME |
    '-' factor | '(' expr ')'. A node is ("num", x), ("name", n), ("neg", a) or (op, a, b)."""

    def __init__(self, text: str) -> None:
        self.text, self.tokens, at = text, [], 0
        while at < len(text.rstrip()):
            m = _TOKEN.match(text, at)
            if m is None or m.end() == at:
                raise ValueError(f"constraint {text!r}: cannot read {text[at:].strip()!r}; write {VALID}")
            number, name, op = m.groups()
            self.tokens.append(("num", float(number)) if number else ("name", name) if name else ("op", op))
            at = m.end()
        self.at = 0

    def _peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else ("end", "")

    def _take(self):
        token = self._peek()
        self.at += 1
        return token

    def _fail(self, what: str):
        raise ValueError(f"constraint {self.text!r}: {what}; write {VALID}")

    def expr(self):
        node = self.term()
        while self._peek() in (("op", "+"), ("op", "-")):
            node = (self._take()[1], node, self.term())
        return node

    def term(self):
        node = self.factor()
        while self._peek() in (("op", "*"), ("op", "/")):
            node = (self._take()[1], node, self.factor())
        return node

    def factor(self):
        kind, value = self._take()
        if kind == "num":
            return ("num", value)
        if kind == "name":
            if value not in NUMERIC:
                self._fail(f"unknown name {value!r}; the numeric fields are {', '.join(NUMERIC)}")
            return ("name", value)
        if (kind, value) == ("op", "-"):
            return ("neg", self.factor())
        if (kind, value) == ("op", "("):
            node = self.expr()
            if self._take() != ("op", ")"):
                self._fail("a bracket is not closed")
            return node
        self._fail("a number or a field name is missing" if kind == "end" else f"{value!r} is out of place")


def _eval(node, values: dict) -> float:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "name":
        return float(values[node[1]])
    if kind == "neg":
        return -_eval(node[1], values)
    a, b = _eval(node[1], values), _eval(node[2], values)
    if kind == "/":
        return math.inf if b == 0 else a / b
    return a + b if kind == "+" else a - b if kind == "-" else a * b


def _names(node) -> set[str]:
    if node[0] == "name":
        return {node[1]}
    return set().union(*(_names(n) for n in node[1:] if isinstance(n, tuple)))


@dataclass(frozen=True)
class Constraint:
    """One user constraint: `text` as given, its two sides and comparison."""

    text: str
    left: tuple
    op: str
    right: tuple

    @property
    def names(self) -> set[str]:
        return _names(self.left) | _names(self.right)

    def holds(self, values: dict) -> bool:
        return OPS[self.op](_eval(self.left, values), _eval(self.right, values))


def parse_constraint(text: str) -> Constraint:
    """`text` as a Constraint; ValueError names what is wrong and the grammar that is valid."""
    text = str(text).strip()
    if not text:
        raise ValueError(f"constraint: it is empty; write {VALID}")
    parser = _Parser(text)
    left = parser.expr()
    kind, op = parser._take()
    if kind != "op" or op not in OPS:
        parser._fail("a comparison is missing" if kind == "end" else f"{op!r} is out of place")
    right = parser.expr()
    if parser._peek()[0] != "end":
        parser._fail(f"{parser._peek()[1]!r} is out of place (one comparison only)")
    constraint = Constraint(text, left, op, right)
    if not constraint.names:
        parser._fail("it names no field")
    return constraint


def parse_constraints(texts, searched) -> tuple[Constraint, ...]:
    """Every `--constraint`; each must name a searched field (one that names none is always or never true)."""
    out = []
    for text in texts:
        c = parse_constraint(text)
        if not c.names & set(searched):
            raise ValueError(f"constraint {text!r} names no searched field; it constrains the space "
                             f"({', '.join(searched)}), so name one of them")
        out.append(c)
    return tuple(out)


def builtin_violation(values: dict, searched) -> str | None:
    """Why a point breaks a built-in constraint (`values`: the searched and fixed settings), or None."""
    d_model, n_heads = values.get("d_model"), values.get("n_heads")
    if d_model is not None and n_heads and int(d_model) % int(n_heads):
        return f"n_heads={n_heads} does not divide d_model={d_model}"
    if (d_model is not None and n_heads and values.get("pos_encoding") == "rope"
            and (int(d_model) // int(n_heads)) % 2):
        return f"rope needs an even head dimension; d_model={d_model} / n_heads={n_heads} is odd"
    d_ff = values.get("d_ff")
    if {"d_ff", "d_model"} <= set(searched) and d_ff is not None and d_model is not None and d_ff < d_model:
        return f"d_ff={d_ff} is below d_model={d_model}"
    return None


def violation(values: dict, constraints, searched) -> str | None:
    """Why the point `values` (searched and fixed settings) may not train, or None when it may."""
    why = builtin_violation(values, searched)
    if why is not None:
        return why
    for c in constraints:
        if all(n in values for n in c.names) and not c.holds(values):
            return f"it breaks {c.text}"
    return None


__all__ = ["NUMERIC", "VALID", "Constraint", "parse_constraint", "parse_constraints", "builtin_violation",
           "violation"]
