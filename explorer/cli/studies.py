"""`python -m explorer search list` and `python -m explorer search export NAME --out FILE.csv [--storage URL]`:
the studies kept in the storage (the CLI's and the app's), and one study's trials as CSV (number, state, the
value of each objective, the params, seconds, run, start and end; explorer/search/studies.py)."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from explorer.cli.common import UsageError
from explorer.search.studies import list_studies, load, trials_csv

ACTIONS = ("list", "export")


def add_subcommands(p: argparse.ArgumentParser) -> None:
    """`list` and `export` under `search` (a search itself takes no action word)."""
    sub = p.add_subparsers(dest="study_action", metavar="{list,export}", required=False)
    listing = sub.add_parser("list", help="the studies kept in the storage, newest first")
    listing.add_argument("--storage", metavar="URL", help="Optuna storage (default: sqlite:///runs/search.db)")
    export = sub.add_parser("export", help="one study's trials as CSV")
    export.add_argument("name", metavar="NAME", help="the study's name (search list shows them)")
    export.add_argument("--out", required=True, metavar="FILE.csv", help="where to write the CSV")
    export.add_argument("--storage", metavar="URL", help="Optuna storage (default: sqlite:///runs/search.db)")
    for parser in (listing, export):
        parser.set_defaults(run=run_action)


def run_action(args: argparse.Namespace) -> int:
    try:
        if args.study_action == "list":
            for s in list_studies(storage=args.storage, everyone=True):   # the server's shell sees them all
                best = "—" if s.best is None else ", ".join(f"{v:.4g}" for v in s.best)
                print(f"{s.name}  {s.task or '?'}  {s.sampler or '?'}  {s.trials} trials  best {best}  "
                      f"last {s.last or '—'}")
            return 0
        text = trials_csv(load(args.name, args.storage))
    except KeyError as err:
        raise UsageError(err.args[0]) from None
    except ValueError as err:   # a storage URL that is not one
        raise UsageError(str(err)) from None
    out = Path(args.out)
    if out.is_dir() or not out.parent.is_dir():
        raise UsageError(f"--out {args.out}: give a file in a folder that exists")
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=".export-")   # written whole, then renamed
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, out)
    print(f"wrote {text.count(chr(10)) - 1} trials of study {args.name} to {out}")
    return 0


__all__ = ["ACTIONS", "add_subcommands", "run_action"]
