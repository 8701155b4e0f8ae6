"""Lessons: the three seed texts as paths through the material, one idea per screen, with questions
the class answers before the measurement is shown.

    from explorer.lessons import LESSONS
    lesson = LESSONS["ch2"]                  # id, title, source, summary, steps
    step = lesson.steps[0]                   # title, text, view(values) -> View, controls, question, try_it
    step.question.reveal(step.question.stored())   # -> Reveal: answer, correct choices or value, view, verdict

The lesson ids (`ch2`, `lesson46`, `module6`) are part of every shared link: never rename one.
`python -m explorer lessons` lists the questions and whether their results are stored; `--build`
computes the missing ones into pretrained/experiments/ (explorer/cli/lessons.py).
"""

from __future__ import annotations

from explorer.lessons import ch2, lesson46, module6
from explorer.lessons.base import (
           SHIPPED_RESULTS,
           Control,
           Lesson,
           Question,
           Reveal,
           SeedCheck,
           Step,
           View,
           in_students_words,
)

LESSONS: dict[str, Lesson] = {m.LESSON.id: m.LESSON for m in (ch2, lesson46, module6)}   # the shipped ones


def all_lessons() -> dict[str, Lesson]:
    """Every lesson a link can open, by id: the shipped ones first."""
    return dict(LESSONS)


def find_lesson(lesson_id) -> Lesson | None:
    """The lesson a link's `lesson=` names, or None."""
    return all_lessons().get(lesson_id) if isinstance(lesson_id, str) else None


__all__ = ["LESSONS", "all_lessons", "find_lesson", "Lesson", "Step", "Question", "Reveal", "View", "Control",
           "SeedCheck", "SHIPPED_RESULTS", "in_students_words"]
