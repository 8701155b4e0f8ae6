"""How the predictions went: right ones among the questions whose reveal decided them, for one visitor
and for a class. `Question.right` is the one judgement; this module only counts."""

from __future__ import annotations

from collections.abc import Iterable

from explorer.lessons.base import Question, Reveal


def tally(answered: Iterable[tuple[Question, object, Reveal]]) -> tuple[int, int]:
    """(right, decided) over (question, locked prediction, reveal): "you answered 3 of 5 right"."""
    judged = [q.right(value, reveal) for q, value, reveal in answered]
    decided = [j for j in judged if j is not None]
    return sum(decided), len(decided)


def class_right(question: Question, reveal: Reveal, counts: dict) -> tuple[int, int]:
    """(right, decided) over a class's locked predictions, `counts` value -> how many locked it."""
    right = decided = 0
    for value, n in counts.items():
        judged = question.right(value, reveal)
        if judged is not None:
            decided += n
            right += n * judged
    return right, decided


__all__ = ["tally", "class_right"]
