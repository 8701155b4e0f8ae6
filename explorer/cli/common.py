"""What every command shares: UsageError (bad input: one line, exit code 2), own_file (a teacher's file as a
checked task), Progress (the status line on stderr) and on_ctrl_c (Ctrl-C as a request to stop)."""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from collections.abc import Callable, Iterator

from explorer.tasks import TaskConfig, own_data


class UsageError(Exception):
    """Bad input from the command line: shown as one line, exit code 2, no traceback."""


def own_file(path: str, make=own_data.pairs_config, seed: int = 0) -> TaskConfig:
    """The checked TaskConfig of a teacher's file (`make`: pairs or text); UsageError names the file, line
    and reason."""
    try:
        return make(own_data.read_file(path), seed=seed)
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise UsageError(f"{path}: {e}") from None


class Progress:
    """One status line on stderr, rewritten in place on a terminal at most ten times a second; elsewhere, e.g.
    a log file, one plain line every `every` seconds. Called with (fraction, text), as an experiment's or a
    study's progress, it writes `  5.0%  text` (100% always shows); a command with a line of its own writes
    it with `if progress.due(force): progress.write(line)`."""

    def __init__(self, stream=None, every: float = 3.0) -> None:
        self.stream, self.every, self.last, self.width = stream or sys.stderr, every, 0.0, 0
        self.tty = self.stream.isatty()

    def due(self, force: bool = False) -> bool:
        """Whether a line is due now (always when forced); if so, now is when the last one was written."""
        now = time.monotonic()
        if not force and now - self.last < (0.1 if self.tty else self.every):
            return False
        self.last = now
        return True

    def write(self, line: str) -> None:
        self.stream.write("\r" + line.ljust(self.width) if self.tty else line + "\n")
        self.stream.flush()
        self.width = len(line) if self.tty else 0

    def __call__(self, fraction: float, text: str) -> None:
        if self.due(force=fraction >= 1.0):
            self.write(f"{100 * fraction:5.1f}%  {text}")

    def close(self) -> None:
        if self.width:
            self.stream.write("\n")
            self.stream.flush()


@contextlib.contextmanager
def on_ctrl_c(stop: Callable[[], object]) -> Iterator[None]:
    """Inside, Ctrl-C calls `stop()` instead of raising KeyboardInterrupt; the handler before is restored on
    the way out. Off the main thread Ctrl-C cannot be caught, and it is left as it is."""
    try:
        previous = signal.signal(signal.SIGINT, lambda *_: stop())
    except ValueError:  # not the main thread
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


__all__ = ["UsageError", "own_file", "Progress", "on_ctrl_c"]
