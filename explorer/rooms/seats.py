"""The students' side of a room (explorer/rooms/__init__.py): a seat per browser, predictions locked per step, and
the class's anonymous counts. `Seats` is a part of `Rooms`: it uses the room rows and the write transaction
that `Rooms` and `explorer.rooms.db.Database` define."""

from __future__ import annotations

import math
from dataclasses import dataclass

from explorer.rooms.db import RoomError
from explorer.rooms.input import checked_token, checked_value, checked_where, normalise_code, sanitise_nickname

MAX_MEMBERS = 500        # a lecture of 300 and then some; a student is one seat however many tabs
LOCK_BURST, LOCK_WINDOW_S = 5, 10.0   # at most 5 locks per 10 s per member, refilled smoothly
MAX_BUCKETS = 10_000     # seats whose lock limit is remembered before the long-refilled are forgotten


@dataclass(frozen=True)
class Member:
    room: str
    member_id: str
    nickname: str
    joined: float


class Seats:
    """Students' seats and predictions, and what the class as a whole predicted."""

    def join(self, code, member_id, nickname: str = "") -> Member:
        """Take (or take back) a seat; a reopened tab with the same member id keeps its predictions."""
        code, member_id, nickname = normalise_code(code), checked_token(member_id), sanitise_nickname(nickname)
        now = self._clock()
        with self._write() as conn:
            self._open_row(conn, code)
            old = conn.one("SELECT joined FROM members WHERE room = ? AND member_id = ?", (code, member_id))
            if old is None:
                seats = conn.one("SELECT COUNT(*) AS n, COALESCE(MAX(place), 0) AS last FROM members WHERE room = ?",
                                 (code,))
                if seats["n"] >= MAX_MEMBERS:
                    raise RoomError(f"room {code} is full ({MAX_MEMBERS} students): continue the lesson alone")
                conn.execute("INSERT INTO members (room, member_id, nickname, joined, last_seen, place) "
                             "VALUES (?, ?, ?, ?, ?, ?)", (code, member_id, nickname, now, now, seats["last"] + 1))
            else:
                conn.execute("UPDATE members SET nickname = ?, last_seen = ? WHERE room = ? AND member_id = ?",
                             (nickname, now, code, member_id))
            conn.execute("UPDATE rooms SET tally = tally + 1, touched = ? WHERE code = ?", (now, code))
        return Member(code, member_id, nickname, now if old is None else old["joined"])

    def member(self, code, member_id) -> Member | None:
        row = self._conn().one("SELECT * FROM members WHERE room = ? AND member_id = ?",
                               (normalise_code(code), checked_token(member_id)))
        return None if row is None else Member(row["room"], row["member_id"], row["nickname"], row["joined"])

    def _limit(self, code: str, member_id: str) -> None:
        """A token bucket per seat, in this process: a flood from one seat never waits on (or slows) others."""
        now = self._clock()
        with self._guard:
            tokens, then = self._buckets.get((code, member_id), (LOCK_BURST, now))
            tokens = min(LOCK_BURST, tokens + (now - then) * LOCK_BURST / LOCK_WINDOW_S)
            if tokens < 1:
                wait = math.ceil((1 - tokens) * LOCK_WINDOW_S / LOCK_BURST)
                raise RoomError(f"too many locks: wait {wait} s, then lock your prediction again")
            self._buckets[(code, member_id)] = (tokens - 1, now)
            if len(self._buckets) > MAX_BUCKETS:   # forget seats long refilled
                self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < LOCK_WINDOW_S}

    def predict(self, code, member_id, lesson, step, value) -> None:
        """Lock a prediction (an int: a choice index; a float: a number) on the room's current step.
        A second lock replaces the first until the step is revealed."""
        code, member_id = normalise_code(code), checked_token(member_id)
        (lesson, step), (number, is_choice) = checked_where(lesson, step), checked_value(value)
        self._limit(code, member_id)
        now = self._clock()
        with self._write() as conn:
            row = self._open_row(conn, code)
            if self.member(code, member_id) is None:
                raise RoomError(f"this browser has not joined room {code}: reopen the student link")
            if (row["lesson"], row["step"]) != (lesson, step):
                raise RoomError("the class has moved to another step: lock your prediction on the step shown now")
            if self._revealed(code, lesson, step):
                raise RoomError("this step's answer is revealed: predictions are closed")
            if row["deadline"] is not None and now > row["deadline"]:
                raise RoomError("time is up: the teacher's countdown closed predictions on this step")
            conn.execute("INSERT INTO predictions (room, member_id, lesson, step, value, is_choice, locked_at) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (room, member_id, lesson, step) DO UPDATE SET "
                         "value = excluded.value, is_choice = excluded.is_choice, locked_at = excluded.locked_at",
                         (code, member_id, lesson, step, number, int(is_choice), now))
            conn.execute("UPDATE members SET last_seen = ? WHERE room = ? AND member_id = ?", (now, code, member_id))
            conn.execute("UPDATE rooms SET tally = tally + 1, touched = ? WHERE code = ?", (now, code))

    def prediction(self, code, member_id, lesson, step) -> int | float | None:
        lesson, step = checked_where(lesson, step)
        row = self._conn().one(
            "SELECT value, is_choice FROM predictions WHERE room = ? AND member_id = ? AND lesson = ? AND step = ?",
            (normalise_code(code), checked_token(member_id), lesson, step))
        return None if row is None else (int(row["value"]) if row["is_choice"] else row["value"])

    # --- the class as a whole (anonymous)

    def _known(self, code) -> str:
        code = normalise_code(code)
        if self._row(self._conn(), code) is None:
            raise RoomError(f"there is no room {code}: check the code with your teacher, or continue alone")
        return code

    def count(self, code, lesson, step) -> tuple[int, int]:
        """(members who locked a prediction on this step, members who joined): "23 of 27 predicted"."""
        code, (lesson, step) = self._known(code), checked_where(lesson, step)
        row = self._conn().one(
            "SELECT (SELECT COUNT(*) FROM predictions WHERE room = ? AND lesson = ? AND step = ?) AS locked, "
            "(SELECT COUNT(*) FROM members WHERE room = ?) AS joined", (code, lesson, step, code))
        return row["locked"], row["joined"]

    def distribution(self, code, lesson, step, teacher: str | None = None) -> dict[int | float, int]:
        """How many locked each value, in value order: for everyone after the reveal, before it for the teacher."""
        code, (lesson, step) = self._known(code), checked_where(lesson, step)
        if not self._revealed(code, lesson, step) and not self.is_teacher(code, teacher):
            raise RoomError("the class's predictions are shown after the reveal")
        rows = self._conn().all(
            "SELECT value, is_choice, COUNT(*) AS n FROM predictions WHERE room = ? AND lesson = ? AND step = ? "
            "GROUP BY value, is_choice ORDER BY value", (code, lesson, step))
        return {(int(r["value"]) if r["is_choice"] else r["value"]): r["n"] for r in rows}
