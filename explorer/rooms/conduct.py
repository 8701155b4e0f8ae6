"""The teacher's controls during class (explorer/rooms/__init__.py): who has locked, a countdown on the
current step, a pause ("eyes on the teacher"), asking a question again, hiding its reveal. `Conduct` is a
part of `Rooms`: it uses the room rows, `_teach` (checked, applied, version bumped, one transaction) and
the write transaction that `Rooms` and `explorer.rooms.db.Database` define.

Every control is the teaching tab's, like a move: a read-only teacher tab or a student is refused.
"""

from __future__ import annotations

from explorer.rooms.db import RoomError
from explorer.rooms.input import checked_where, normalise_code

COUNTDOWNS_S = (15, 30, 60, 90, 120, 180, 300)   # what the dashboard offers; any whole 5-600 s is accepted
MIN_COUNTDOWN_S, MAX_COUNTDOWN_S = 5, 600


class Conduct:
    """Pause, countdown, ask again, hide the reveal; the teacher's view of who has locked."""

    def pause(self, code, teacher, on: bool, tab: str | None = None) -> None:
        """Students' screens show "eyes on the teacher" instead of the step until resumed."""
        self._teach(code, teacher, tab, "UPDATE rooms SET paused = ? WHERE code = ?",
                    (int(bool(on)), normalise_code(code)))

    def start_countdown(self, code, teacher, seconds, tab: str | None = None) -> float:
        """Locks on the current step close `seconds` from now (the reveal stays the teacher's): the deadline.
        A move to another step, or asking again, drops it."""
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or \
                not MIN_COUNTDOWN_S <= seconds <= MAX_COUNTDOWN_S:
            raise RoomError(f"a countdown of {str(seconds)[:12]} s: give {MIN_COUNTDOWN_S} to {MAX_COUNTDOWN_S} "
                            "seconds")
        deadline = self._clock() + float(seconds)
        self._teach(code, teacher, tab, "UPDATE rooms SET deadline = ? WHERE code = ?",
                    (deadline, normalise_code(code)))
        return deadline

    def stop_countdown(self, code, teacher, tab: str | None = None) -> None:
        self._teach(code, teacher, tab, "UPDATE rooms SET deadline = NULL WHERE code = ?", (normalise_code(code),))

    def ask_again(self, code, teacher, lesson, step, tab: str | None = None) -> None:
        """Clear this question's locks, its reveal and its countdown for everyone: the class predicts afresh."""
        code, (lesson, step) = normalise_code(code), checked_where(lesson, step)
        with self._write() as conn:
            row = self._teacher_row(conn, code, teacher, tab)
            if (row["lesson"], row["step"]) != (lesson, step):
                raise RoomError("the room is on another step: ask again on the step it shows")
            conn.execute("DELETE FROM predictions WHERE room = ? AND lesson = ? AND step = ?", (code, lesson, step))
            conn.execute("DELETE FROM reveals WHERE room = ? AND lesson = ? AND step = ?", (code, lesson, step))
            conn.execute("UPDATE rooms SET deadline = NULL, version = version + 1, tally = tally + 1, touched = ? "
                         "WHERE code = ?", (self._clock(), code))

    def hide_reveal(self, code, teacher, lesson, step, hidden: bool, tab: str | None = None) -> None:
        """Take a revealed answer off every screen (predictions stay closed), or show it again."""
        code, (lesson, step) = normalise_code(code), checked_where(lesson, step)
        if not self._revealed(code, lesson, step) and hidden:
            raise RoomError("this step's answer has not been revealed: there is nothing to hide")
        self._teach(code, teacher, tab, "UPDATE reveals SET hidden = ? WHERE room = ? AND lesson = ? AND step = ?",
                    (int(bool(hidden)), code, lesson, step))

    def locks(self, code, teacher, lesson, step) -> list[tuple[str, bool]]:
        """(nickname, locked) of every member in joining order, on this step (teacher only): who has locked
        and who has not. Nicknames are plain text: render them as such."""
        code, (lesson, step) = normalise_code(code), checked_where(lesson, step)
        if not self.is_teacher(code, teacher):
            raise RoomError(f"only the teacher of room {code} sees who has locked")
        rows = self._conn().all(
            "SELECT m.nickname, p.member_id IS NOT NULL AS locked FROM members m LEFT JOIN predictions p "
            "ON p.room = m.room AND p.member_id = m.member_id AND p.lesson = ? AND p.step = ? "
            "WHERE m.room = ? ORDER BY m.joined, m.place", (lesson, step, code))
        return [(r["nickname"] or "anonymous", bool(r["locked"])) for r in rows]


__all__ = ["Conduct", "COUNTDOWNS_S", "MIN_COUNTDOWN_S", "MAX_COUNTDOWN_S"]
