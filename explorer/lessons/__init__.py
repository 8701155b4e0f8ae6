"""Lessons: the three seed texts as paths through the material, one idea per screen, with questions
the class answers before the measurement is shown.

    from explorer.lessons import LESSONS
    lesson = LESSONS["ch2"]                  # id, title, source, summary, steps
    step = lesson.steps[0]                   # title, text, view(values) -> View, controls, question, try_it
    step.question.reveal(step.question.stored())   # -> Reveal: answer, correct choices or value, view, verdict

The lesson ids (`ch2`, `lesson46`, `module6`, `learning`) are part of every shared link: never rename one.
A teacher's own lessons are TOML files in EXPLORER_LESSONS_DIR (explorer/lessons/files.py, folder.py):
`all_lessons()` and `find_lesson(id)` include them beside the shipped ones.
`python -m explorer lessons` lists the questions and whether their results are stored; `--build`
computes the missing ones into pretrained/experiments/ (explorer/cli/lessons.py).
"""

from __future__ import annotations

from explorer.lessons import ch2, folder, learning, lesson46, module6
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

LESSONS: dict[str, Lesson] = {m.LESSON.id: m.LESSON for m in (ch2, lesson46, module6, learning)}   # the shipped ones


def all_lessons() -> dict[str, Lesson]:
    """Every lesson a link can open, by id: the shipped ones first, then the valid lesson files (a file
    never takes a shipped id: explorer/lessons/files.py refuses it)."""
    return {**LESSONS, **{k: v for k, v in folder.file_lessons().items() if k not in LESSONS}}


def find_lesson(lesson_id) -> Lesson | None:
    """The lesson a link's `lesson=` names, or None."""
    return all_lessons().get(lesson_id) if isinstance(lesson_id, str) else None

def lesson_version(lesson_id: str) -> str:
    """"" for a shipped lesson; for a file lesson what changes when its file is replaced (a cache key)."""
    return "" if lesson_id in LESSONS else folder.version(lesson_id)


__all__ = ["LESSONS", "all_lessons", "find_lesson", "lesson_version", "Lesson", "Step",
           "Question", "Reveal", "View", "Control", "SeedCheck", "SHIPPED_RESULTS", "in_students_words"]
