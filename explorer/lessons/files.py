"""A lesson written as a TOML file: data, never code. `parse_lesson(text, file)` checks it and returns a
`Lesson`; whatever is wrong is one line, `FILE:LINE: what is wrong (what is valid)` (`LessonFileError`).

    id = "pe-basics"                      # the `lesson=` of a link: [a-z0-9-], not a shipped lesson's id
    title = "Positions in a Transformer"
    summary = "one line"
    [[steps]]
    title = "The sinusoidal table"
    text = "Markdown: no raw HTML, no image fetched, no link followed."
    view = "positional"                   # a named view (explorer/lessons/named_views.py) ...
    [steps.params]                        # ... with its parameters, fixed as `&lock=1` fixes a step's
    d_model = 64
    [[steps]]
    title = "Which dimensions turn fastest?"
    [steps.question]
    prompt = "..."
    choices = ["the low indices", "the high indices", "all alike"]
    answer = 0                            # the teacher's answer; or `measure = "ch2/<step>"`, a shipped
                                          # question's measured answer (same number of choices)

A number question has `number = [min, max, step]`, `answer` a number (or `measure`), optional `unit`
and `tolerance`. tomllib gives no positions, so a message's line is found in the raw text: the N-th
`[[steps]]` header, then the key inside it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace

from explorer.lessons.base import Lesson, Question, Reveal, Step
from explorer.lessons.named_views import VIEWS, view_names
from explorer.lessons.params import NamedView
from explorer.lessons.shipped_parts import MEASURES, SHIPPED
from explorer.quoting import md_prose

MAX_BYTES = 64 * 1024
MAX_STEPS = 40
ID = re.compile(r"[a-z0-9-]{1,40}")
CHARS = {"id": 40, "title": 120, "summary": 400, "source": 80, "text": 6000, "prompt": 400, "choice": 160,
         "unit": 24, "explain": 2000}
TOP_KEYS = ("id", "title", "summary", "source", "steps")
STEP_KEYS = ("title", "text", "view", "params", "question")
QUESTION_KEYS = ("prompt", "choices", "number", "answer", "measure", "unit", "tolerance", "explain")
FILE_SOURCE = "your lesson file"   # a file lesson's `source` unless it says another


class LessonFileError(ValueError):
    """What is wrong with a lesson file, as one line: `FILE:LINE: what is wrong (what is valid)`."""

    def __init__(self, file: str, line: int, message: str) -> None:
        self.file, self.line, self.message = file, line, message
        super().__init__(f"{file}:{line}: {message}")


class _Lines:
    """Where things are in the raw text: the N-th `[[steps]]`, a sub-table, a key (1-based lines)."""

    _STEP = re.compile(r"^\s*\[\[\s*steps\s*\]\]")
    _TABLE = re.compile(r"^\s*\[")

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.steps = [i for i, line in enumerate(self.lines) if self._STEP.match(line)]

    def _span(self, step: int | None) -> tuple[int, int]:
        if step is None:
            return 0, next((i for i, line in enumerate(self.lines) if self._TABLE.match(line)), len(self.lines))
        if step >= len(self.steps):   # steps written as an inline array: only the key `steps` is known
            return 0, len(self.lines)
        start = self.steps[step]
        return start, self.steps[step + 1] if step + 1 < len(self.steps) else len(self.lines)

    def at(self, step: int | None = None, table: str | None = None, key: str | None = None) -> int:
        start, end = self._span(step)
        if table is not None:
            header = re.compile(rf"^\s*\[\s*steps\s*\.\s*{table}\s*\]")
            found = next((i for i in range(start, end) if header.match(self.lines[i])), None)
            if found is None:   # an inline table: `question = {...}`
                found = self._key(start, end, table)
                return (found if found is not None else start) + 1
            start = found
            end = next((i for i in range(start + 1, end) if self._TABLE.match(self.lines[i])), end)
        if key is not None:
            found = self._key(start, end, key)
            if found is not None:
                return found + 1
        return start + 1 if step is not None or table is not None else (1 if key is None else self._key_any(key))

    def _key(self, start: int, end: int, key: str) -> int | None:
        pattern = re.compile(rf"^\s*(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')\s*=")
        return next((i for i in range(start, end) if pattern.match(self.lines[i])), None)

    def _key_any(self, key: str) -> int:
        found = self._key(0, len(self.lines), key)
        return found + 1 if found is not None else 1


class _Reader:
    def __init__(self, text: str, file: str) -> None:
        self.file, self.where = file, _Lines(text)

    def fail(self, message: str, step: int | None = None, table: str | None = None, key: str | None = None):
        raise LessonFileError(self.file, self.where.at(step, table, key), message)

    def keys(self, data: dict, valid: tuple, what: str, step=None, table=None) -> None:
        for key in data:
            if key not in valid:
                self.fail(f"unknown key {key!r} in {what} (valid: {', '.join(valid)})", step, table, key)

    def text(self, data: dict, key: str, what: str, step=None, table=None, required=True, cap=None) -> str:
        value = data.get(key)
        if value is None and not required:
            return ""
        if value is None:
            self.fail(f"{what} has no {key} (give {key} = \"...\")", step, table)
        if not isinstance(value, str) or not value.strip():
            self.fail(f"{key} must be a non-empty string (got {value!r:.40})", step, table, key)
        if len(value) > CHARS[cap or key]:
            self.fail(f"{key} is {len(value):,} characters long (at most {CHARS[cap or key]:,})", step, table, key)
        return md_prose(value)


def parse_lesson(text: str | bytes, file: str = "lesson.toml") -> Lesson:
    """The checked Lesson a file describes; LessonFileError (one line) otherwise. Nothing in it runs."""
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise LessonFileError(file, 1, f"the file is {len(text):,} bytes (at most {MAX_BYTES:,})")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            line = text[:e.start].count(b"\n") + 1
            raise LessonFileError(file, line, "the file is not UTF-8 text (save it as UTF-8)") from None
    if len(text.encode()) > MAX_BYTES:
        raise LessonFileError(file, 1, f"the file is {len(text.encode()):,} bytes (at most {MAX_BYTES:,})")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        line = getattr(e, "lineno", None) or int((re.search(r"line (\d+)", str(e)) or [0, 1])[1])
        raise LessonFileError(file, line, f"not valid TOML: {e} (key = value lines, [[steps]] tables)") from None
    return _lesson(data, _Reader(text, file))


def _lesson(data: dict, r: _Reader) -> Lesson:
    r.keys(data, TOP_KEYS, "the lesson")
    lesson_id = data.get("id")
    if lesson_id is None:
        r.fail("the lesson has no id (give id = \"my-lesson\": a-z, 0-9 and -, up to 40)")
    if not isinstance(lesson_id, str) or not ID.fullmatch(lesson_id):
        r.fail(f"id = {lesson_id!r:.50} is not valid (a-z, 0-9 and -, 1 to 40 characters)", key="id")
    if lesson_id in {lesson.id for lesson in SHIPPED}:
        r.fail(f"id = {lesson_id!r} is a shipped lesson's (pick another id)", key="id")
    title = r.text(data, "title", "the lesson")
    steps = data.get("steps")
    if steps is None:
        r.fail("the lesson has no steps (add a [[steps]] table with a title)")
    if not isinstance(steps, list) or not steps or not all(isinstance(s, dict) for s in steps):
        r.fail("steps must be [[steps]] tables (one or more)", key="steps")
    if len(steps) > MAX_STEPS:
        r.fail(f"the lesson has {len(steps)} steps (at most {MAX_STEPS})", step=MAX_STEPS)
    return Lesson(lesson_id, title, r.text(data, "source", "the lesson", required=False) or FILE_SOURCE,
                  r.text(data, "summary", "the lesson", required=False), tuple(_step(s, k, r) for k, s in
                                                                                 enumerate(steps)))


def _step(data: dict, k: int, r: _Reader) -> Step:
    r.keys(data, STEP_KEYS, f"step {k + 1}", k)
    title = r.text(data, "title", f"step {k + 1}", k)
    text = r.text(data, "text", f"step {k + 1}", k, required=False)
    params = data.get("params", {})
    if not isinstance(params, dict):
        r.fail("params must be a table ([steps.params] with key = value lines)", k, key="params")
    view, controls, try_it = None, (), None
    name = data.get("view")
    if name is None and params:
        r.fail("params without a view (give view = \"NAME\")", k, "params")
    if name is not None:
        if not isinstance(name, str) or name not in VIEWS:
            r.fail(f"unknown view {name!r:.60} (valid: {view_names()})", k, key="view")
        view, controls, try_it = _view(VIEWS[name], params, k, r)
    question = data.get("question")
    if question is not None and not isinstance(question, dict):
        r.fail("question must be a table ([steps.question])", k, key="question")
    return Step(title, text, view, controls, _question(question, k, r) if question is not None else None, try_it)


def _view(nv: NamedView, params: dict, k: int, r: _Reader):
    """(view, controls, try_it) of a named view with the step's parameters."""
    try:
        values = nv.resolve(params)
    except KeyError as e:
        r.fail(f"unknown parameter {e.args[0]!r} of view {nv.name!r} (valid: {nv.names()})", k, "params", e.args[0])
    except ValueError as e:
        bad = next((key for key in params if nv.param(key) and str(e).startswith(nv.param(key).name + " ")), None)
        r.fail(f"{e}", k, "params", bad)
    if nv.step:   # a shipped step's own view: the file's values become its controls' defaults
        controls = tuple(replace(c, default=values[c.key]) if c.key in values else c for c in nv.controls)
        return nv.build, controls, nv.try_it
    build, link = nv.build, nv.try_it
    return (lambda _values: build(values)), (), ((lambda _values: link(values)) if link else None)


def _question(data: dict, k: int, r: _Reader) -> Question:
    q = "question"
    r.keys(data, QUESTION_KEYS, f"step {k + 1}'s question", k, q)
    prompt = r.text(data, "prompt", f"step {k + 1}'s question", k, q)
    has_answer, has_measure = "answer" in data, "measure" in data
    if has_answer == has_measure:
        r.fail("give either answer (the teacher's) or measure (a named measurement), not "
               + ("both" if has_answer else "neither"), k, q, "measure" if has_measure else None)
    choices = data.get("choices")
    if choices is not None:
        if not isinstance(choices, list) or not all(isinstance(c, str) and c.strip() for c in choices):
            r.fail("choices must be a list of strings", k, q, "choices")
        if not 2 <= len(choices) <= 5:
            r.fail(f"{len(choices)} choices (give 2 to 5)", k, q, "choices")
        if any(len(c) > CHARS["choice"] for c in choices):
            r.fail(f"a choice is longer than {CHARS['choice']} characters", k, q, "choices")
        choices = tuple(md_prose(c) for c in choices)
    number = _number(data, k, r) if "number" in data else None
    if choices and number:
        r.fail("give choices or a number range, not both", k, q, "number")
    unit = r.text(data, "unit", "the question", k, q, required=False)
    tolerance = data.get("tolerance", 0.1)
    if not isinstance(tolerance, (int, float)) or isinstance(tolerance, bool) or not 0 < tolerance <= 1:
        r.fail(f"tolerance = {tolerance!r} is not valid (a share from 0 to 1, e.g. 0.1)", k, q, "tolerance")
    explain = r.text(data, "explain", "the question", k, q, required=False)
    if has_measure:
        return _measured(data["measure"], prompt, choices, number, unit, k, r)
    if not choices and not number:
        r.fail("a question needs choices = [...] (2 to 5) or number = [min, max, step]", k, q)
    return Question(prompt, _teacher(data["answer"], choices, number, unit, explain, k, r), choices=choices or (),
                    number=number, unit=unit, tolerance=float(tolerance))


def _number(data: dict, k: int, r: _Reader) -> tuple[float, float, float]:
    n = data["number"]
    ok = isinstance(n, list) and len(n) == 3 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                    for x in n)
    if not ok or not n[0] < n[1] or not 0 < n[2] <= n[1] - n[0]:
        r.fail(f"number = {n!r:.60} is not a range (give [min, max, step], min < max, step > 0)", k, "question",
               "number")
    return float(n[0]), float(n[1]), float(n[2])


def _teacher(answer, choices, number, unit: str, explain: str, k: int, r: _Reader):
    """The reveal of a teacher's answer: it says the answer (and the teacher's explanation, if any)."""
    if choices:
        if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer < len(choices):
            r.fail(f"answer = {answer!r:.40} is not a choice (0 to {len(choices) - 1}: the first choice is 0)",
                   k, "question", "answer")
        said = f"The teacher's answer: **{choices[answer]}**."
        reveal = Reveal(f"{said} {explain}".strip(), correct=(answer,), label="The answer")
    else:
        low, high, _ = number
        if not isinstance(answer, (int, float)) or isinstance(answer, bool) or not low <= answer <= high:
            r.fail(f"answer = {answer!r:.40} is not in the range (a number from {low:g} to {high:g})", k, "question",
                   "answer")
        said = f"The teacher's answer: **{answer:g}{f' {unit}' if unit else ''}**."
        reveal = Reveal(f"{said} {explain}".strip(), value=float(answer), label="The answer")
    return lambda _result=None: reveal


def _measured(name, prompt: str, choices, number, unit: str, k: int, r: _Reader) -> Question:
    """A question whose reveal is a shipped measurement: its choices reworded (the same count), its range."""
    if not isinstance(name, str) or name not in MEASURES:
        shipped = sorted({m.split("/")[0] for m in MEASURES})
        r.fail(f"unknown measurement {name!r:.60} (valid: a shipped question, "
               + ", ".join(f"{lesson}/<step>" for lesson in shipped) + "; `python -m explorer lessons export ID` "
               "lists them)", k, "question", "measure")
    m = MEASURES[name]
    if m.choices and number or m.number and choices:
        r.fail(f"measure {name!r} answers {'choices' if m.choices else 'a number'} (give "
               + (f"{len(m.choices)} choices" if m.choices else "no choices") + ")", k, "question",
               "number" if number else "choices")
    if choices and len(choices) != len(m.choices):
        r.fail(f"{len(choices)} choices, but measure {name!r} marks {len(m.choices)} (keep their count and order)",
               k, "question", "choices")
    return Question(prompt, m.reveal, choices=choices or m.choices, number=number or m.number,
                    unit=unit or m.unit, experiment=m.experiment, params=dict(m.params), tolerance=m.tolerance)


__all__ = ["LessonFileError", "parse_lesson", "MAX_BYTES", "MAX_STEPS", "FILE_SOURCE"]
