"""`python -m explorer rooms list` and `rooms export CODE --out FILE.csv`: the rooms this server keeps (its
EXPLORER_DATABASE_URL, else its runs folder's rooms.sqlite) and one room's answers, one row per student and
question (explorer/rooms/report.py names the columns), or the same as one offline HTML file (`--out FILE.html`).

Whoever runs the command holds the database file, so it reads every room kept there; the app shows a room's
answers to its teacher only. An unknown code, a missing file or an unwritable path is one line and exit 2.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from explorer.cli.common import UsageError
from explorer.rooms import RoomError, Rooms
from explorer.rooms import report as room_report
from explorer.rooms.input import normalise_code
from explorer.store.database import DATABASE_ENV, DatabaseUrlError, database_url, rooms_url, sqlite_path

SUFFIXES = (".csv", ".html")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="rooms_command", required=True, metavar="ACTION")
    sub.add_parser("list", help="the rooms kept here: code, lesson, when, students, locked answers")
    export = sub.add_parser("export", help="one room's answers as CSV (or offline HTML)")
    export.add_argument("code", help="the room's code, 7 letters and digits")
    export.add_argument("--out", required=True, metavar="FILE", help="the .csv (or .html) file to write")


def _open() -> Rooms:
    try:
        url = rooms_url()
        path = sqlite_path(url)
        if database_url() is None and not Path(path).is_file():
            raise UsageError(f"no rooms on this server: {path} does not exist (set EXPLORER_RUNS_DIR to the app's "
                             f"runs folder, or {DATABASE_ENV} to its database)")
        return Rooms(url)
    except (RoomError, DatabaseUrlError) as e:
        raise UsageError(str(e)) from None


def _list(rooms: Rooms) -> int:
    kept = rooms.kept_rooms()
    if not kept:
        print("no rooms are kept here")
    for r in kept:
        print(f"{r.code}  {r.lesson:<16} {room_report.when(r.created)}  {'ended' if r.closed else 'open':<5}  "
              f"{r.students} students, {r.locks} locked answers")
    print(f"rooms are kept {rooms.retain_days:g} days after their last use")
    return 0


def _export(rooms: Rooms, code: str, out: str) -> int:
    path = Path(out)
    if path.suffix.lower() not in SUFFIXES:
        raise UsageError(f"--out {out!r} must end in {' or '.join(SUFFIXES)}")
    if path.is_dir() or not path.parent.is_dir():
        raise UsageError(f"--out {out!r}: {'a folder' if path.is_dir() else 'its folder does not exist'}; "
                         "give a file in an existing folder")
    try:
        code = normalise_code(code)
        answers = rooms.answers(code, teacher=None)
    except RoomError as e:
        raise UsageError(str(e)) from None
    rows, summaries = room_report.build(answers)
    state = rooms.state(code)
    text = (room_report.to_csv(rows) if path.suffix.lower() == ".csv" else
            room_report.to_html(code, state.lesson, rows, summaries, rooms.retain_days))
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)   # a reader never sees half a file
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {out}: {e.strerror or e}") from None
    students = len({a.member for a in answers})
    print(f"{path}: {len(rows)} rows, {students} students, {len(summaries)} questions of room {code}")
    return 0


def run_command(args: argparse.Namespace) -> int:
    rooms = _open()
    try:
        return _list(rooms) if args.rooms_command == "list" else _export(rooms, args.code, args.out)
    finally:
        rooms.close()
