"""A shipped lesson written out as a lesson file (`python -m explorer lessons export ID`): its text, each
step's own view by name (`ch2/<step-slug>`) and each question's measured answer by name (`measure = ...`),
so a teacher starts from it and `parse_lesson` of the result gives the same steps and questions."""

from __future__ import annotations

import json

from explorer.lessons.base import Lesson
from explorer.lessons.shipped_parts import part_name


def toml_string(text: str) -> str:
    """`text` as a TOML string: a multi-line basic string when it has line breaks, else a basic one."""
    if "\n" not in text:
        return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")   # JSON's escapes are TOML's
    body = "".join(c if c in "\n\t" or (ord(c) >= 0x20 and c != "\x7f") else f"\\u{ord(c):04x}"
                   for c in text.replace("\\", "\\\\").replace('"', '\\"'))
    return f'"""\n{body}"""'


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def lesson_toml(lesson: Lesson, new_id: str) -> str:
    """The lesson file of shipped `lesson`, under `new_id` (a file may not take a shipped lesson's id)."""
    out = [f"# {lesson.title}: exported from the shipped lesson {lesson.id!r}. Edit the words freely; a view",
           "# or a measure names a shipped part (keep a measure's choices in their order: its reveal marks them",
           "# by position). Check it with `python -m explorer lessons check FILE`.",
           f"id = {toml_string(new_id)}", f"title = {toml_string(lesson.title)}",
           f"source = {toml_string(lesson.source)}", f"summary = {toml_string(lesson.summary)}"]
    for step in lesson.steps:
        name = part_name(lesson, step)
        out += ["", "[[steps]]", f"title = {toml_string(step.title)}", f"text = {toml_string(step.text)}",
                f"view = {toml_string(name)}"]
        q = step.question
        if q is None:
            continue
        out += ["[steps.question]", f"prompt = {toml_string(q.prompt)}"]
        if q.choices:
            out.append("choices = [" + ", ".join(toml_string(c) for c in q.choices) + "]")
        else:
            out.append("number = [" + ", ".join(_number(x) for x in q.number) + "]")
            if q.unit:
                out.append(f"unit = {toml_string(q.unit)}")
        out.append(f"measure = {toml_string(name)}")
    return "\n".join(out) + "\n"


__all__ = ["lesson_toml", "toml_string"]
