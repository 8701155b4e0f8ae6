"""`python -m explorer lessons [--build] [--only LESSON]`: the lessons' questions and whether their
measured answers are stored; `--build` ships the missing ones in pretrained/experiments/ (copied from
the live cache under runs/ when computed there, else computed now), so a class's first reveal is
instant. Ctrl+C stops; the experiment it interrupts is not stored (a partial result never is).

`lessons check FILE` checks a lesson file ("N steps, M questions", or its one-line error, exit 2);
`lessons export ID --out FILE.toml` writes a shipped lesson as a file to start from. The action is an
optional positional, so `lessons --build` reads as before.
"""

from __future__ import annotations

import argparse
import shutil
import sys

from explorer.cli.common import UsageError
from explorer.experiments import SerialExecutor, Stopped, cache_path, cached, run_cached
from explorer.experiments.runner import RESULT_FILE
from explorer.lessons import LESSONS, SHIPPED_RESULTS
from explorer.lessons.files import MAX_BYTES, LessonFileError, parse_lesson
from explorer.lessons.writer import lesson_toml


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--build", action="store_true", help="compute the missing results into pretrained/experiments/")
    p.add_argument("--only", metavar="LESSON", help=f"one lesson: {', '.join(LESSONS)}")
    p.add_argument("action", nargs="?", choices=("check", "export"),
                   help="check FILE: check a lesson file; export ID: write a shipped lesson as a file")
    p.add_argument("target", nargs="?", metavar="FILE|ID", help="the lesson file to check, or the lesson to export")
    p.add_argument("--out", metavar="FILE.toml", help="export: where to write the file (default: stdout)")
    p.add_argument("--id", dest="new_id", metavar="ID", help="export: the file's lesson id (default: ID-copy)")


def questions(only: str | None = None):
    """(lesson, step number, question) of every question that needs an experiment, each configuration once."""
    if only is not None and only not in LESSONS:
        raise UsageError(f"--only {only!r}: no such lesson; choose one of {', '.join(LESSONS)}")
    seen = set()
    for lesson in LESSONS.values():
        if only not in (None, lesson.id):
            continue
        for k, step in enumerate(lesson.steps, 1):
            q = step.question
            key = q and q.experiment and (q.experiment, repr(sorted(q.params.items())))
            if key and key not in seen:
                seen.add(key)
                yield lesson, k, q


def ship(q) -> str:
    """Store the question's result among the shipped ones: copied from the live cache when someone
    computed it there (the same code and parameters give the same entry), else computed now."""
    live = cache_path(q.experiment, q.params)
    target = cache_path(q.experiment, q.params, SHIPPED_RESULTS)
    if (live / RESULT_FILE).is_file():
        shutil.copytree(live, target)
        return f"copied from {live}"
    result = run_cached(q.experiment, q.params, cache_dir=SHIPPED_RESULTS, executor=SerialExecutor())
    return f"{result.seconds:.0f} s: {result.verdict}"


def check(path: str) -> int:
    """Print "N steps, M questions" of a valid lesson file; UsageError with its one line otherwise."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        lesson = parse_lesson(data, path)
    except LessonFileError as e:   # the line itself, first: an editor or CI reads FILE:LINE off its start
        print(e, file=sys.stderr)
        return 2
    print(f"{len(lesson.steps)} steps, {sum(s.question is not None for s in lesson.steps)} questions")
    return 0


def export(lesson_id: str, out: str | None, new_id: str | None) -> int:
    if lesson_id not in LESSONS:
        raise UsageError(f"no shipped lesson {lesson_id!r}; choose one of {', '.join(LESSONS)}")
    text = lesson_toml(LESSONS[lesson_id], new_id or f"{lesson_id}-copy")
    try:
        parse_lesson(text, out or "-")   # what it writes, checked as a file: a bad --id is said here
    except LessonFileError as e:
        raise UsageError(str(e)) from None
    if out is None:
        print(text, end="")
        return 0
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise UsageError(f"cannot write {out}: {e.strerror or e}") from None
    print(f"wrote {out}: {len(LESSONS[lesson_id].steps)} steps")
    return 0


def run_command(args: argparse.Namespace) -> int:
    if args.action is not None:
        if args.target is None:
            raise UsageError(f"lessons {args.action} needs {'a FILE' if args.action == 'check' else 'an ID'}")
        return check(args.target) if args.action == "check" else export(args.target, args.out, args.new_id)
    missing = 0
    for lesson, k, q in questions(args.only):
        shipped = cached(q.experiment, q.params, SHIPPED_RESULTS) is not None
        print(f"{lesson.id} step {k}: {q.experiment} {q.params or '(defaults)'}: "
              f"{'shipped' if shipped else 'stored here only' if q.stored() else 'missing'}")
        if shipped or not args.build:
            missing += not shipped
            continue
        try:
            print(f"    {ship(q)}")
        except (KeyboardInterrupt, Stopped):
            print("stopped: nothing of this experiment was stored")
            return 130
    if missing:
        print(f"{missing} not shipped: `python -m explorer lessons --build` ships them")
    return 0
