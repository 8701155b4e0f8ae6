"""What the room tests share: a clock the test moves, the teacher's owner id, a student's seat id."""

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
TEACHER = "teachers-owner-id-0001"   # the teacher browser's owner id, as ui/owner.py makes them


class Clock:
    def __init__(self, now=1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


def seat(n):
    return f"student-{n:04d}"
