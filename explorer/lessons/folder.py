"""Where lesson files live and who may replace one: `EXPLORER_LESSONS_DIR` (a contract), by default
`runs_dir() / "lessons"`. Every valid `*.toml` there is a lesson (`file_lessons()`, read again only when a
file's size or time changes); a broken one is skipped and its one-line error kept (`file_problems()`).

An upload (`save_lesson`) is checked before anything is written, so a refused one leaves the previous
version of its id in place; it is written atomically (temp file + rename: servers share the folder) as
`ID.toml`, beside `ID.owner`, a hash of the uploader's owner id. Another owner's id is refused.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from explorer.lessons.base import Lesson
from explorer.lessons.files import MAX_BYTES, LessonFileError, parse_lesson
from explorer.store.atomic import write_bytes
from explorer.store.runs import runs_dir

ENV = "EXPLORER_LESSONS_DIR"
OWNER_SUFFIX = ".owner"
_lock = threading.Lock()
_cache: dict[str, tuple[tuple, dict[str, Lesson], dict[str, str], dict[str, str]]] = {}


def lessons_dir() -> Path:
    where = os.environ.get(ENV)
    return Path(where) if where else runs_dir() / "lessons"


def _read(path: Path) -> bytes:
    """At most MAX_BYTES + 1 bytes: a larger file is refused by its size, never read whole."""
    with path.open("rb") as f:
        return f.read(MAX_BYTES + 1)


def _listing(folder: Path) -> tuple:
    try:
        files = sorted(p for p in folder.glob("*.toml") if p.is_file())
    except OSError:
        return ()
    out = []
    for p in files:
        try:
            st = p.stat()
        except OSError:
            continue
        out.append((p.name, st.st_mtime_ns, st.st_size))
    return tuple(out)


def _scan() -> tuple[dict[str, Lesson], dict[str, str], dict[str, str]]:
    """(lessons by id, file name -> its one-line error, lesson id -> version) of the folder, cached on its
    listing (names, sizes, times), so a page's rerun parses nothing that did not change."""
    folder = lessons_dir()
    listing = _listing(folder)
    with _lock:
        kept = _cache.get(str(folder))
        if kept is not None and kept[0] == listing:
            return kept[1], kept[2], kept[3]
    lessons, problems, versions = {}, {}, {}
    for name, mtime, size in listing:
        try:
            lesson = parse_lesson(_read(folder / name), name)
        except LessonFileError as e:
            problems[name] = str(e)
            continue
        except OSError as e:
            problems[name] = f"{name}:1: cannot read it ({e.strerror or e})"
            continue
        if lesson.id in lessons:
            problems[name] = f"{name}:1: id {lesson.id!r} is already another file's (pick another id)"
            continue
        lessons[lesson.id] = lesson
        versions[lesson.id] = f"{name}:{mtime}:{size}"
    with _lock:
        _cache[str(folder)] = (listing, lessons, problems, versions)
    return lessons, problems, versions


def file_lessons() -> dict[str, Lesson]:
    """Every valid lesson file's Lesson, by id, in file-name order."""
    return dict(_scan()[0])


def file_problems() -> dict[str, str]:
    """The broken files: name -> `FILE:LINE: what is wrong (what is valid)`."""
    return dict(_scan()[1])


def version(lesson_id: str) -> str:
    """What changes when a file lesson is replaced ("" for a shipped lesson): a cache key for its views."""
    return _scan()[2].get(lesson_id, "")


def owner_hash(owner: str) -> str:
    return hashlib.sha256(f"explorer-lesson-owner:{owner}".encode()).hexdigest()


def save_lesson(data: bytes, owner: str, name: str = "upload.toml") -> Lesson:
    """Check an uploaded file and keep it as `ID.toml`, owned by `owner` (a visitor's owner id).
    LessonFileError (one line) when it is not valid; ValueError when the id is another owner's."""
    lesson = parse_lesson(data, name)
    folder = lessons_dir()
    target, mark = folder / f"{lesson.id}.toml", folder / f"{lesson.id}{OWNER_SUFFIX}"
    elsewhere = file_lessons().get(lesson.id) is not None and not target.is_file()
    theirs = target.is_file() and (not mark.is_file() or mark.read_text().strip() != owner_hash(owner))
    if elsewhere or theirs:
        raise ValueError(f"lesson {lesson.id} belongs to someone else: pick another id")
    folder.mkdir(parents=True, exist_ok=True)
    write_bytes(mark, owner_hash(owner).encode())
    write_bytes(target, data)
    return lesson


def owns(lesson_id: str, owner: str) -> bool:
    mark = lessons_dir() / f"{lesson_id}{OWNER_SUFFIX}"
    return mark.is_file() and mark.read_text().strip() == owner_hash(owner)


def delete_lesson(lesson_id: str, owner: str) -> None:
    """Remove `owner`'s lesson file (and its owner mark); ValueError when it is not theirs. A room on it
    then says its lesson is gone; its answers stay in the room until the room expires."""
    if not owns(lesson_id, owner):
        raise ValueError(f"lesson {lesson_id} is not yours: only the browser that uploaded it can delete it")
    folder = lessons_dir()
    (folder / f"{lesson_id}.toml").unlink(missing_ok=True)
    (folder / f"{lesson_id}{OWNER_SUFFIX}").unlink(missing_ok=True)


__all__ = ["ENV", "lessons_dir", "file_lessons", "file_problems", "version", "save_lesson", "owns", "delete_lesson",
           "owner_hash"]
