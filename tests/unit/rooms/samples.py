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


TABLES = ("rooms", "members", "reveals", "predictions", "teachers")


def dump(db) -> str:
    """Every row of every room table as text, on either backend: what a stolen database would show."""
    with db.engine.connect() as conn:
        return "\n".join(repr(tuple(row)) for table in TABLES
                         for row in conn.exec_driver_sql(f"SELECT * FROM {table}"))   # noqa: S608 - constants


def column(db, sql: str, *args) -> list:
    """The first column of `sql`'s rows (`?` placeholders), read through the database's own engine."""
    from explorer.rooms.db import Tx

    with db.engine.connect() as conn:
        return [next(iter(row.values())) for row in Tx(conn).all(sql, args)]
