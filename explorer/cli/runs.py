"""`python -m explorer runs tag NAME --add X --remove Y` and `runs note NAME TEXT`: a researcher's tags and notes
on a saved run, as the Runs page keeps them (explorer.store.runs.annotate_run, explorer.limits' limits).

Whoever runs the command holds the runs folder, so it may annotate any run there; the app lets only a run's
owner. An unknown run, a tag or note over a limit is one line and exit 2.
"""

from __future__ import annotations

import argparse

from explorer.cli.common import UsageError
from explorer.store.runs import annotate_run, run_info


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="runs_command", required=True, metavar="ACTION")
    tag = sub.add_parser("tag", help="add or remove a saved run's tags (the Runs page filters by them)")
    tag.add_argument("name", help="the saved run")
    tag.add_argument("--add", action="append", default=[], metavar="TAG", help="a tag to add (repeatable)")
    tag.add_argument("--remove", action="append", default=[], metavar="TAG", help="a tag to remove (repeatable)")
    note = sub.add_parser("note", help="replace a saved run's notes (\"\" clears them)")
    note.add_argument("name", help="the saved run")
    note.add_argument("text", help="the notes")


def run_command(args: argparse.Namespace) -> int:
    try:
        info = run_info(args.name)
        if args.runs_command == "tag":
            if not args.add and not args.remove:
                raise UsageError("give --add TAG or --remove TAG (repeatable)")
            gone = {t.casefold() for t in args.remove}
            info = annotate_run(info.name, tags=[t for t in info.tags if t.casefold() not in gone] + args.add)
            print(f"{info.name}: tags {', '.join(info.tags) or '(none)'}")
        else:
            info = annotate_run(info.name, notes=args.text)
            print(f"{info.name}: notes of {len(info.notes)} characters")
    except (ValueError, FileNotFoundError, PermissionError) as e:
        raise UsageError(str(e)) from None
    return 0


__all__ = ["add_arguments", "run_command"]
