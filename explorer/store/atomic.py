"""Files written whole or not at all: a temp file beside the target, flushed to disk, renamed over it.

Several app servers share one runs folder (README, "A course on several servers"), so a reader in another
process must see the old file or the new one, never half of one, and two writers of the same file must not
share a temp name (mkstemp: unique per call)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

MODE = 0o644   # mkstemp makes 0600; the runs folder's files are shared, readable like any other


def sync(path: Path) -> None:
    """The file's bytes on disk before the rename makes them the file: a crash never leaves it empty."""
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def atomic_write(target, write: Callable[[str], object]) -> Path:
    """`write(tmp_path)` fills a temp file beside `target`; it replaces `target` only once complete."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, MODE)
        sync(Path(tmp))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def write_bytes(target, data: bytes) -> Path:
    return atomic_write(target, lambda tmp: Path(tmp).write_bytes(data))


def write_text(target, text: str) -> Path:
    return atomic_write(target, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


__all__ = ["atomic_write", "sync", "write_bytes", "write_text"]
