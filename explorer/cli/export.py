"""The CLI's export commands: `report NAME --out FILE.html` and `figure KIND --model NAME --out FILE.png`.

Bad input (an unknown kind or name, an unwritable path, a run without snapshots for the time-lapse)
raises UsageError: one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from explorer.cli.common import UsageError
from explorer.export.images import FORMATS, ImageExportError, write_image
from explorer.export.kinds import KINDS, build_figure
from explorer.export.report import build_report
from explorer.store.subject import Subject, open_subject


def _add_common(p: argparse.ArgumentParser, out_help: str) -> None:
    p.add_argument("--example", default="0", metavar="I", help="validation example to show (default 0)")
    p.add_argument("--out", required=True, metavar="FILE", help=out_help)


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="a shipped model (pretrained/manifest.json) or a saved run (runs/)")
    _add_common(p, "the HTML file to write")


def add_figure_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kind", metavar="KIND", help="one of: " + ", ".join(KINDS))
    p.add_argument("--model", required=True, metavar="NAME", help="a shipped model or a saved run")
    _add_common(p, "the image to write: .png (2x), .svg, or .gif (the time-lapse, animated)")


def _writable(out: str, suffixes: tuple[str, ...]) -> Path:
    """The output path, refused before any work if it cannot be written (the file is not left behind)."""
    path = Path(out)
    if path.suffix.lower().lstrip(".") not in suffixes:
        raise UsageError(f"--out {out!r} must end in {' or '.join('.' + s for s in suffixes)}")
    if path.is_dir():
        raise UsageError(f"--out {out!r} is a folder; give a file name")
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
    except OSError as e:
        raise UsageError(f"cannot write --out {out!r}: {e.strerror or e}") from None
    if not existed:
        path.unlink()
    return path


def _subject(name: str, example: str) -> tuple[Subject, int]:
    if not example.isdigit():
        raise UsageError(f"--example {example!r} must be a whole number >= 0")
    try:
        s = open_subject(name)
    except ValueError as e:
        raise UsageError(str(e)) from None
    n = len(s.task.val)
    if int(example) >= n:
        raise UsageError(f"--example {example} is out of range: {name!r} has validation examples 0 to {n - 1}")
    return s, int(example)


def run_report(args: argparse.Namespace) -> int:
    out = _writable(args.out, ("html", "htm"))
    s, example = _subject(args.name, args.example)
    out.write_text(build_report(s, example), encoding="utf-8")
    print(f"report written to {out}")
    return 0


def run_figure(args: argparse.Namespace) -> int:
    if args.kind not in KINDS:
        raise UsageError(f"unknown figure kind {args.kind!r}; choose one of {', '.join(KINDS)}")
    out = _writable(args.out, FORMATS)
    if out.suffix.lower() == ".gif" and args.kind != "timelapse":
        raise UsageError(f"only the timelapse animates: write {args.kind!r} as .png or .svg")
    s, example = _subject(args.model, args.example)
    try:
        fig = build_figure(args.kind, s, example)
        write_image(fig, out)
    except (ValueError, ImageExportError) as e:
        raise UsageError(str(e)) from None
    print(f"{args.kind} of {args.model} written to {out}")
    return 0


__all__ = ["add_report_arguments", "run_report", "add_figure_arguments", "run_figure"]
