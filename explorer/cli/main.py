"""The parser of `python -m explorer COMMAND ...`: COMMANDS (name -> Command) and main().

A new subcommand adds an entry with its own argument setup and run function. A run function returns the exit
code; bad input raises UsageError (explorer.cli.common), which prints the message and exits with 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer.cli import experiment, export, interpret, lessons, rooms, runs, search, studies, train
from explorer.cli.common import UsageError
from explorer.store.shipped import add_pretrain_arguments, run_pretrain


@dataclass(frozen=True)
class Command:
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: dict[str, Command] = {
    "train": Command("train a model on a toy task and save the run", train.add_train_arguments, train.run_train),
    "resume": Command("continue a saved run exactly where it stopped; it is saved as a new run",
                      train.add_resume_arguments, train.run_resume),
    "pretrain": Command("rebuild the shipped models in pretrained/ from their recipes (deterministic, 1 thread)",
                        add_pretrain_arguments, run_pretrain),
    "experiment": Command("run one of the seeds' experiments over several seeds and write CSV (--list to see them)",
                          experiment.add_arguments, experiment.run_command),
    "search": Command("an Optuna study over model and training settings; trials in processes or on a Ray cluster "
                      "(search list: the studies kept; search export NAME --out F.csv: one's trials)",
                      lambda p: (search.add_arguments(p), studies.add_subcommands(p)), search.run_command),
    "lessons": Command("list the lessons' questions and their stored answers; --build computes the missing ones",
                       lessons.add_arguments, lessons.run_command),
    "rooms": Command("the rooms kept here, and one room's answers as CSV or offline HTML (rooms export CODE --out F)",
                     rooms.add_arguments, rooms.run_command),
    "runs": Command("tag a saved run or keep notes on it, as the Runs page does (runs tag NAME --add X)",
                    runs.add_arguments, runs.run_command),
    "interpret": Command("look deeper than attention: ablate heads, logit lens, patching, embeddings, heads over "
                         "training", interpret.add_arguments, interpret.run_command),
    "report": Command("write a report of a shipped model or a run: one self-contained HTML file that opens offline",
                      export.add_report_arguments, export.run_report),
    "figure": Command("export one of the app's figures as PNG or SVG for slides (the time-lapse also as GIF)",
                      export.add_figure_arguments, export.run_figure),
}


def build_parser() -> argparse.ArgumentParser:
    script = Path(sys.argv[0]).name == "explorer"  # the console script of `pip install .`
    parser = argparse.ArgumentParser(prog="explorer" if script else "python -m explorer",
                                     description="Transformer Explorer")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(run=cmd.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as e:
        print(f"{parser.prog} {args.command}: error: {e}", file=sys.stderr)
        return 2


__all__ = ["Command", "COMMANDS", "build_parser", "main"]
