"""`python -m explorer lessons [--build] [--only LESSON]`: the lessons' questions and whether their
measured answers are stored; `--build` ships the missing ones in pretrained/experiments/ (copied from
the live cache under runs/ when computed there, else computed now), so a class's first reveal is
instant. Ctrl+C stops; the experiment it interrupts is not stored (a partial result never is).
"""

from __future__ import annotations

import argparse
import shutil

from explorer.cli.common import UsageError
from explorer.experiments import SerialExecutor, Stopped, cache_path, cached, run_cached
from explorer.experiments.runner import RESULT_FILE
from explorer.lessons import LESSONS, SHIPPED_RESULTS


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


def run_command(args: argparse.Namespace) -> int:
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
