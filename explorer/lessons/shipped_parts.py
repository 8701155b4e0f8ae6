"""The shipped lessons' steps as parts a lesson file can name: each step's own view (`ch2/<step-slug>`,
its controls as parameters) and each question's measured answer (the same name), so a teacher reuses a
measurement with their own words and a shipped lesson exports to a file without loss.

The names come from the lesson id and the step's title: stable as long as a title is (a test checks they
are unique); a renamed title breaks the files that name it, so treat titles as links.
"""

from __future__ import annotations

import re

from explorer.lessons import ch2, learning, lesson46, module6
from explorer.lessons.base import Lesson, Step
from explorer.lessons.params import Measurement, NamedView, control_param

SHIPPED: tuple[Lesson, ...] = (ch2.LESSON, lesson46.LESSON, module6.LESSON, learning.LESSON)


def slug(text: str) -> str:
    """`text` as a name: lower case, words joined by '-' (`Pre-LN and Post-LN` -> `pre-ln-and-post-ln`)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def part_name(lesson: Lesson, step: Step) -> str:
    return f"{lesson.id}/{slug(step.title)}"


def _step_view(lesson: Lesson, step: Step) -> NamedView:
    return NamedView(part_name(lesson, step), f"step {step.title!r} of {lesson.id}",
                     tuple(control_param(c) for c in step.controls), step.view, step.try_it, step.controls, step=True)


def _measurement(lesson: Lesson, step: Step) -> Measurement:
    q = step.question
    return Measurement(part_name(lesson, step), q.prompt, q.reveal, q.choices, q.number, q.unit, q.tolerance,
                       q.experiment, dict(q.params))


STEP_VIEWS: dict[str, NamedView] = {part_name(lesson, s): _step_view(lesson, s) for lesson in SHIPPED
                                    for s in lesson.steps}
MEASURES: dict[str, Measurement] = {part_name(lesson, s): _measurement(lesson, s) for lesson in SHIPPED
                                    for s in lesson.steps if s.question is not None}

__all__ = ["SHIPPED", "STEP_VIEWS", "MEASURES", "slug", "part_name"]
