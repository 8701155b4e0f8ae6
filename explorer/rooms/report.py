"""A room's results as a teacher reads them after class: one row per student and question (the CSV of
`python -m explorer rooms export` and of the Results view), a summary per question (the distribution and
the share right where the measurement decides one), and the same as one offline HTML file.

Whether an answer is right is `Question.right` against the question's reveal: the teacher's answer of a
lesson file, or the stored measurement (a measured question nobody has measured on this server yet says
nothing). Every nickname and lesson text is the visitor's or a teacher's: HTML-escaped here, never markup.
"""

from __future__ import annotations

import csv
import html
import io
import time
from dataclasses import dataclass

from explorer.lessons import Question, Reveal, find_lesson
from explorer.rooms.results import Answer

COLUMNS = ("step", "question", "nickname", "prediction", "correct", "locked_at", "lesson")   # a contract
CORRECT = {True: "yes", False: "no", None: ""}


@dataclass(frozen=True)
class QuestionSummary:
    lesson: str
    step: int                    # 1-based, as in a link
    prompt: str
    counts: dict[str, int]       # choice (or number) -> how many locked it, every choice listed
    locked: int
    students: int
    right: int | None            # how many locked a right answer; None where the reveal decides nothing
    decided: int
    answer: str                  # the right answer in words, or why there is none


def when(seconds: float | None) -> str:
    """A timestamp as ISO 8601 in UTC (what a spreadsheet reads); '' for none."""
    return "" if seconds is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _question(lesson_id: str, step: int) -> Question | None:
    lesson = find_lesson(lesson_id)
    if lesson is None or not 0 <= step < len(lesson.steps):
        return None
    return lesson.steps[step].question


def _reveal(question: Question | None) -> Reveal | None:
    """The question's reveal from what this server has: None when it needs a measurement nobody made here."""
    if question is None:
        return None
    if question.experiment is None:
        return question.reveal(None)
    result = question.stored()
    return None if result is None else question.reveal(result)


def _shown(question: Question | None, value, unit: bool = True) -> str:
    """A prediction as the choice's text or the number (with its unit where `unit`)."""
    if value is None:
        return ""
    if question is not None and question.choices and 0 <= int(value) < len(question.choices):
        return question.choices[int(value)]
    suffix = f" {question.unit}" if unit and question is not None and question.unit else ""
    return f"{value:g}{suffix}"


def _answer_text(question: Question | None, reveal: Reveal | None) -> str:
    if question is None:
        return "this lesson is no longer on this server"
    if reveal is None:
        return "not measured on this server yet"
    if question.choices:
        return ", ".join(question.choices[i] for i in reveal.correct) or "the measurement decides none"
    return "nothing measured" if reveal.value is None else _shown(question, reveal.value)


def build(answers: list[Answer], anonymise: bool = False) -> tuple[list[dict], list[QuestionSummary]]:
    """(rows with COLUMNS, one summary per asked question) of a room's answers. `anonymise`: "student 3"
    for every nickname, e.g. for a projected Results view."""
    rows, summaries, by_step = [], [], {}
    for a in answers:
        by_step.setdefault((a.lesson, a.step), []).append(a)
    for (lesson_id, step), group in by_step.items():
        question = _question(lesson_id, step)
        reveal = _reveal(question)
        counts = {c: 0 for c in question.choices} if question is not None and question.choices else {}
        right = decided = 0
        for a in group:
            judged = None if a.value is None or reveal is None else question.right(a.value, reveal)
            name = f"student {a.member}" if anonymise else a.nickname
            rows.append({"step": step + 1, "question": question.prompt if question else "", "nickname": name,
                         "prediction": _shown(question, a.value, unit=False), "correct": CORRECT[judged],
                         "locked_at": when(a.locked_at), "lesson": lesson_id})
            if a.value is not None:
                label = _shown(question, a.value)
                counts[label] = counts.get(label, 0) + 1
                decided += judged is not None
                right += bool(judged)
        locked = sum(a.value is not None for a in group)
        summaries.append(QuestionSummary(lesson_id, step + 1, question.prompt if question else "", counts, locked,
                                         len(group), right if decided else None, decided,
                                         _answer_text(question, reveal)))
    return rows, summaries


def _cell(value) -> str:
    """A text cell a spreadsheet shows as text: one that would start a formula (=, +, -, @) gets a quote."""
    text = str(value)
    try:
        float(text)
        return text            # a number, negative ones included
    except ValueError:
        return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def to_csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({c: _cell(row[c]) for c in COLUMNS} for row in rows)
    return out.getvalue()


_CSS = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}
td,th{border:1px solid #c8ccd1;padding:.25rem .5rem;text-align:left}
.bar{display:inline-block;height:.8rem;background:#1f5fa8;vertical-align:middle}caption{text-align:left;font-weight:600}"""


def to_html(code: str, title: str, rows: list[dict], summaries: list[QuestionSummary], kept_days: float) -> str:
    """One self-contained page (no script, nothing fetched): each question's distribution as a table with
    bars, the share right, then every answer."""
    e = html.escape
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Room {e(code)}: results</title>"
             f"<style>{_CSS}</style></head><body><h1>Room {e(code)}: {e(title)}</h1>",
             f"<p>Exported {e(when(time.time()))}. This server keeps a room {kept_days:g} days after its last use.</p>"]
    for s in summaries:
        share = (f"{s.right} of {s.decided} right ({s.right / s.decided:.0%})" if s.right is not None and s.decided
                 else "no right answer decided")
        parts.append(f"<h2>Step {s.step}: {e(s.prompt)}</h2><p>{s.locked} of {s.students} locked; {e(share)}. "
                     f"Answer: {e(s.answer)}.</p><table><caption>The class's predictions</caption>"
                     "<tr><th scope='col'>prediction</th><th scope='col'>students</th></tr>")
        top = max(s.counts.values(), default=0) or 1
        for label, n in s.counts.items():
            parts.append(f"<tr><td>{e(label)}</td><td><span class='bar' style='width:{8 * n / top:.2f}rem'></span> "
                         f"{n}</td></tr>")
        parts.append("</table>")
    head = "".join(f"<th scope='col'>{c}</th>" for c in COLUMNS)
    parts.append(f"<h2>Every answer</h2><table><tr>{head}</tr>")
    for row in rows:
        parts.append("<tr>" + "".join(f"<td>{e(str(row[c]))}</td>" for c in COLUMNS) + "</tr>")
    parts.append("</table></body></html>")
    return "\n".join(parts)


__all__ = ["COLUMNS", "QuestionSummary", "build", "to_csv", "to_html", "when"]
