"""The class's answers afterwards (explorer/rooms/__init__.py): a teacher's rooms, open or ended, and every
locked answer in one of them. `Results` is a part of `Rooms`: it uses the room rows and the connection that
`Rooms` and `explorer.rooms.db.Database` define. explorer/rooms/report.py turns these rows into the
Results view's tables, its CSV and its offline HTML."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.rooms.db import RoomError
from explorer.rooms.input import normalise_code


@dataclass(frozen=True)
class RoomSummary:
    """One of a teacher's rooms, for the list of past rooms."""

    code: str
    lesson: str
    created: float
    closed: bool
    students: int
    locks: int


@dataclass(frozen=True)
class Answer:
    """One member's locked answer on one step (`value` None: the member locked nothing there)."""

    lesson: str
    step: int               # 0-based, as the room keeps it; a link's step= is step + 1
    member: int             # the member's place in joining order, from 1: the anonymous name "student 3"
    nickname: str           # plain text: render it as such
    value: int | float | None
    locked_at: float | None


class Results:
    """What a room's teacher reads after (or during) class."""

    _SUMMARY = ("SELECT r.code, r.lesson, r.created, r.closed_at, r.touched, "
                "(SELECT COUNT(*) FROM members m WHERE m.room = r.code) AS students, "
                "(SELECT COUNT(*) FROM predictions p WHERE p.room = r.code) AS locks FROM rooms r ")

    def _summaries(self, rows) -> list[RoomSummary]:
        return [RoomSummary(r["code"], r["lesson"], r["created"], r["closed_at"] is not None or self._expired(r),
                            r["students"], r["locks"]) for r in rows]

    def teacher_rooms(self, teacher) -> list[RoomSummary]:
        """Every room the browser with owner id `teacher` teaches that is still kept, newest first."""
        try:
            wanted = self._teacher_key(teacher)
        except RoomError:
            return []
        return self._summaries(self._conn().all(
            self._SUMMARY + "JOIN teachers t ON t.room = r.code WHERE t.teacher_hash = ? ORDER BY r.created DESC, "
            "r.code", (wanted,)))

    def kept_rooms(self) -> list[RoomSummary]:
        """Every room kept in the file, newest first: for a caller that holds the file (`rooms list`)."""
        return self._summaries(self._conn().all(self._SUMMARY + "ORDER BY r.created DESC, r.code"))

    def asked(self, code) -> list[tuple[str, int]]:
        """(lesson, step) of every step with a lock or a reveal in this room, in lesson and step order."""
        code = normalise_code(code)
        rows = self._conn().all(
            "SELECT lesson, step FROM predictions WHERE room = ? UNION SELECT lesson, step FROM reveals "
            "WHERE room = ? ORDER BY lesson, step", (code, code))
        return [(r["lesson"], r["step"]) for r in rows]

    def answers(self, code, teacher: str | None) -> list[Answer]:
        """Every member's answer on every asked step (one row each, `value` None where nothing was locked),
        by step, then joining order. `teacher`: the owner id of a browser that teaches the room; None only
        for a caller that holds the database file itself (the `rooms export` command)."""
        code = normalise_code(code)
        if self._row(self._conn(), code) is None:
            raise RoomError(f"there is no room {code}: `python -m explorer rooms list` shows the rooms kept here"
                            if teacher is None else f"there is no room {code}")
        if teacher is not None and not self.is_teacher(code, teacher):
            raise RoomError(f"only the teacher of room {code} sees its answers")
        members = self._conn().all("SELECT member_id, nickname FROM members WHERE room = ? ORDER BY joined, place",
                                   (code,))
        locked = {(r["lesson"], r["step"], r["member_id"]): r for r in self._conn().all(
            "SELECT * FROM predictions WHERE room = ?", (code,))}
        out = []
        for lesson, step in self.asked(code):
            for place, m in enumerate(members, 1):
                p = locked.get((lesson, step, m["member_id"]))
                value = None if p is None else (int(p["value"]) if p["is_choice"] else p["value"])
                out.append(Answer(lesson, step, place, m["nickname"] or "anonymous", value,
                                  None if p is None else p["locked_at"]))
        return out


__all__ = ["Results", "RoomSummary", "Answer"]
