"""What a lesson is made of: steps, each one screen with a few sentences, one live view and perhaps a
question whose answer is measured, never written down.

A step's view and a question's reveal are plain functions of data (control values, an experiment's
Result) returning figures from explorer.figures, so the library builds and tests every screen and the
page only draws it.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from explorer.experiments import EXPERIMENTS, Result, cached, refusal_of
from explorer.figures.layout import copy_figure

# Results of the lessons' experiments shipped with the app, so a class sees a reveal at once on a fresh
# server; rebuilt by `python -m explorer lessons --build` (the live cache under runs/ is read first).
SHIPPED_RESULTS = Path(__file__).resolve().parent.parent.parent / "pretrained" / "experiments"


@dataclass(frozen=True)
class SeedCheck:
    """Where a seed text contradicts itself or a measurement: its claim, what we measured, which is right."""

    claim: str       # what the text says, in our words, with where it says it
    measured: str    # what the app computes or measures
    right: str       # which of the two is right, and why


@dataclass(frozen=True)
class View:
    """One screen's live content: a figure (or none) with its caption, a small table, a seed check."""

    figure: go.Figure | None = None
    caption: str = ""
    table: pd.DataFrame | None = None
    check: SeedCheck | None = None
    note: str = ""   # markdown under the figure: a measured number, a live check's outcome


@dataclass(frozen=True)
class Control:
    """A setting the step's view depends on. Its value can come from the link (`&key=value`), and a
    locked link (`&lock=1`) shows it without letting anyone change it."""

    key: str                 # URL parameter name
    label: str
    options: tuple           # the values offered (a select slider or radio)
    default: Any
    help: str = ""

    def __post_init__(self) -> None:
        if self.default not in self.options:
            raise ValueError(f"control {self.key!r}: default {self.default!r} is not one of {self.options}")

    def parse(self, text: str | None):
        """The option a URL parameter names, or None when it names none."""
        for option in self.options:
            if text is not None and str(option) == str(text).strip():
                return option
        return None


@dataclass(frozen=True)
class Reveal:
    """What a question's answer turned out to be. `correct` lists the choices the measurement supports
    (empty when the evidence decides none: the reveal then says it is inconclusive); `ruled_out` the
    choices it excludes even so. The sentence and both come from one decision, so the text never rules
    out what the marks leave open. For a number question `value` is the measured number."""

    answer: str                          # markdown: what was measured, in a sentence or two
    correct: tuple[int, ...] = ()
    ruled_out: tuple[int, ...] = ()
    value: float | None = None
    view: View = field(default_factory=View)
    verdict: str = ""                    # the experiment's verdict with its intervals, when one ran
    label: str = "Measured"              # what the answer is called beside the prediction ("The answer":
                                         # a lesson file's teacher wrote it down, nothing measured it)


@dataclass(frozen=True)
class Question:
    """Predict, then reveal. Either 2-5 `choices` or a `number` answer (min, max, step). The answer comes
    from `reveal(result)`: `result` is the experiment's Result when `experiment` names one (run with
    `params`, the budget a supported verdict needs), else None and the reveal computes its answer."""

    prompt: str
    reveal: Callable[[Result | None], Reveal]
    choices: tuple[str, ...] = ()
    number: tuple[float, float, float] | None = None
    unit: str = ""
    experiment: str | None = None
    params: dict = field(default_factory=dict)
    tolerance: float = 0.1   # a number prediction within this share of the measured value counts as right

    def __post_init__(self) -> None:
        if bool(self.choices) == (self.number is not None):
            raise ValueError(f"question {self.prompt!r}: give either 2-5 choices or a number range")
        if self.choices and not 2 <= len(self.choices) <= 5:
            raise ValueError(f"question {self.prompt!r}: {len(self.choices)} choices; give 2-5")
        if self.experiment is not None:
            if self.experiment not in EXPERIMENTS:
                raise ValueError(f"question {self.prompt!r}: no experiment {self.experiment!r}")
            refused = refusal_of(self.experiment, self.params)   # also checks every parameter
            if refused:
                raise ValueError(refused)

    def stored(self) -> Result | None:
        """The experiment's result if anyone computed it (the live cache, then the shipped results)."""
        if self.experiment is None:
            return None
        return cached(self.experiment, self.params) or cached(self.experiment, self.params, SHIPPED_RESULTS)

    def close_enough(self, prediction: float, measured: float) -> bool:
        return abs(prediction - measured) <= self.tolerance * max(abs(measured), 1e-12)

    def right(self, prediction, reveal: Reveal) -> bool | None:
        """Whether a locked prediction agrees with the reveal: None when the measurement decides nothing
        about it (no choice marked and this one not ruled out, or no number measured)."""
        if self.choices:
            if int(prediction) in reveal.correct or int(prediction) in reveal.ruled_out:
                return int(prediction) in reveal.correct
            return False if reveal.correct else None
        if reveal.value is None or math.isnan(reveal.value):
            return None
        return self.close_enough(float(prediction), reveal.value)

    def order(self, who: str, where: str) -> tuple[int, ...]:
        """The choices' indices in the order one visitor sees them: shuffled, seeded by who they are and
        where the question is, so a reload shows the same order and the position says nothing."""
        seed = int.from_bytes(hashlib.sha256(f"{who}|{where}".encode()).digest()[:8], "big")
        order = list(range(len(self.choices)))
        random.Random(seed).shuffle(order)
        return tuple(order)


@dataclass(frozen=True)
class Step:
    """One screen: a title, a few sentences (markdown), `view(values)` of the controls' values, and
    perhaps a question. `try_it(values)` gives (page url path, query params) of the same view on its
    own page, where nothing is locked.

    On a question step the text and `view` are the question's material, shown until the reveal: they
    never give the answer away (no live check's outcome, no measured share on a label). Whatever tells
    the answer belongs to the reveal's view, which replaces the step's view once revealed."""

    title: str
    text: str
    view: Callable[[dict], View] | None = None
    controls: tuple[Control, ...] = ()
    question: Question | None = None
    try_it: Callable[[dict], tuple[str, dict]] | None = None

    def defaults(self) -> dict:
        return {c.key: c.default for c in self.controls}


@dataclass(frozen=True)
class Lesson:
    id: str          # the `lesson=` of a link: never renamed
    title: str
    source: str      # which seed text it follows
    summary: str
    steps: tuple[Step, ...]

    def __post_init__(self) -> None:
        if not self.steps:
            raise ValueError(f"lesson {self.id!r} has no steps")


# The seed texts are "seeds" to the project, never to a student: a reveal says "the text".
_STUDENT_WORDS = (("the seed says", "the text says"), ("the seed predicts", "the text predicts"),
                  ("the seed's", "the text's"))


def in_students_words(text: str) -> str:
    """An experiment's verdict as a lesson shows it: the seed texts called "the text"."""
    for project, student in _STUDENT_WORDS:
        text = text.replace(project, student).replace(project.capitalize(), student.capitalize())
    return text


def result_figure(fig: go.Figure | None) -> go.Figure | None:
    """An experiment's figure for a lesson: a copy whose legend says "the text predicts"."""
    if fig is None:
        return None
    fig = copy_figure(fig)
    fig.for_each_trace(lambda t: t.update(name=in_students_words(t.name)) if t.name else None)
    return fig


__all__ = ["SHIPPED_RESULTS", "SeedCheck", "View", "Control", "Reveal", "Question", "Step", "Lesson",
           "in_students_words", "result_figure"]
