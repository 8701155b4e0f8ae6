"""`python -m explorer lessons [--build] [--only LESSON]`: the lessons' questions and whether their
measured answers are stored; `--build` computes the missing ones into pretrained/experiments/ (the
results shipped with the app, so a class's first reveal is instant). Ctrl+C stops; the
experiment it interrupts is not stored (a partial result never is).
"""

from __future__ import annotations

import argparse

from explorer.experiments import SerialExecutor, Stopped, run_cached

from . import LESSONS, SHIPPED_RESULTS


def UsageError(message: str) -> Exception:  # noqa: N802 - reads like the exception it builds
    from explorer.cli import UsageError as usage  # explorer.cli imports this module

    return usage(message)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--build", action="store_true", help="compute the missing results into pretrained/experiments/")
    p.add_argument("--only", metavar="LESSON", help=f"one lesson: {', '.join(LESSONS)}")


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


def run_command(args: argparse.Namespace) -> int:
    missing = 0
    for lesson, k, q in questions(args.only):
        stored = q.stored()
        print(f"{lesson.id} step {k}: {q.experiment} {q.params or '(defaults)'}: "
              f"{'stored' if stored is not None else 'missing'}")
        if stored is not None or not args.build:
            missing += stored is None
            continue
        try:
            result = run_cached(q.experiment, q.params, cache_dir=SHIPPED_RESULTS, executor=SerialExecutor())
        except (KeyboardInterrupt, Stopped):
            print("stopped: nothing of this experiment was stored")
            return 130
        print(f"    {result.seconds:.0f} s: {result.verdict}")
    if missing:
        print(f"{missing} missing: `python -m explorer lessons --build` computes them")
    return 0
