"""A class in one room: a teacher's lesson that students follow, with predictions locked per step.

One database holds rooms, members, reveals and predictions: `EXPLORER_DATABASE_URL` (PostgreSQL, for a
course on several servers) or by default one SQLite file (`runs_dir() / "rooms.sqlite"`, WAL mode);
`explorer.rooms.db` opens and migrates it. Every write is one transaction, so a server (or the database)
restarted mid-lesson keeps the room, its step and every locked prediction; every statement is parameterised.

Who is who, without logins:
- the room code (7 symbols of `ALPHABET`, 34.3 bits) lets anyone join and follow;
- the teacher is a browser, named by its owner id (ui/owner.py: a hash of the token in its cookie); the
  `teachers` table keeps a hash of that id, never the id nor the token, and no URL carries any of them;
- a teacher's PIN (`new_pin`: 6 digits, once, for PIN_TTL_S, void after MAX_PIN_MISSES wrong tries) lets
  the teacher add another device (`enter_pin`); only its hash is stored;
- a member id (`new_id()`, kept by the student's browser) names a student's seat, so a reopened tab
  finds its prediction again;
- a tab id names the one teacher tab that holds the room (`claim`): another teacher tab is read-only
  until it takes over (a tab just opened or reloaded does so at once) or the holder is silent for HOLDER_S.

Students' sessions are told when `version(code)` changes (a server reads `versions(codes)` for all its students),
which changes on every change they must see (move, reveal, the
distribution toggle, pause, countdown, a question asked again, a hidden reveal, close, expiry), and
re-read `state(code)` only then; `tally` in the state changes on joins and locks, for the teacher's live
count. Nicknames are stored as plain text: markup is kept
literally, so the UI must render them as text, never as markdown or HTML.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer.rooms.conduct import COUNTDOWNS_S, MAX_COUNTDOWN_S, MIN_COUNTDOWN_S, Conduct  # noqa: F401
from explorer.rooms.db import Database, DatabaseDown, RoomError  # noqa: F401 - DatabaseDown: for ui/room.py
from explorer.rooms.input import (  # noqa: F401
    ALPHABET,
    CODE_LEN,
    MAX_CHOICE,
    MAX_NICKNAME,
    checked_token,
    checked_value,
    checked_where,
    normalise_code,
    sanitise_nickname,
)
from explorer.rooms.results import Answer, Results, RoomSummary  # noqa: F401
from explorer.rooms.seats import LOCK_BURST, LOCK_WINDOW_S, MAX_MEMBERS, Member, Seats  # noqa: F401
from explorer.store.database import ROOMS_FILE

CODE_BITS = CODE_LEN * math.log2(len(ALPHABET))   # 34.3 bits
IDLE_S = 86_400.0          # a room nobody wrote to for a day is closed
RETAIN_DAYS = 30           # a room idle this many days is deleted with its members and predictions;
ROOM_DAYS = "EXPLORER_ROOM_DAYS"   # ... or as many as this says (a contract), from 1 to MAX_RETAIN_DAYS
MAX_RETAIN_DAYS = 3650
HOLDER_S = 10.0            # a teacher tab silent this long (it beats every second) loses the room to another
                           # teacher tab's heartbeat (a tab just opened or reloaded takes it over at once)
MAX_OPEN_ROOMS = 500
PIN_DIGITS, PIN_TTL_S = 6, 600.0   # a PIN is typed on the other device within 10 minutes, once
MAX_PIN_MISSES = 5        # then the PIN is void: 5 guesses in 10**6 per PIN asked for
FILE_NAME = ROOMS_FILE   # the default database, under the runs folder


@dataclass(frozen=True)
class RoomState:
    code: str
    lesson: str
    step: int
    version: int             # changes whenever students must re-read the room
    tally: int               # changes on every join and lock (the teacher's live count)
    revealed: bool           # the current step's answer has been revealed
    show_distribution: bool
    closed: bool             # ended by the teacher, or expired
    expired: bool            # closed because nobody wrote to it for IDLE_S
    created: float
    touched: float
    paused: bool = False             # students' screens say "eyes on the teacher"
    deadline: float | None = None    # locks on the current step close then (the teacher's countdown)
    reveal_hidden: bool = False      # the teacher took the current step's revealed answer off every screen


def new_id() -> str:
    """A random id for a student's seat or a teacher's tab (128 bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _teacher_hash(teacher) -> str:
    """What the rooms file records of a teacher's owner id: its hash, so the file names no visitor."""
    return _hash(f"explorer-teacher:{checked_token(teacher)}")


def _pin_hash(code: str, pin: str) -> str:
    return _hash(f"explorer-pin:{code}:{pin}")


def room_days() -> tuple[float, str | None]:
    """How many days an idle room is kept: $EXPLORER_ROOM_DAYS, else RETAIN_DAYS; with what was wrong with
    the setting when it could not be used (then RETAIN_DAYS holds)."""
    text = os.environ.get(ROOM_DAYS, "").strip()
    if not text:
        return float(RETAIN_DAYS), None
    try:
        days = float(text)
    except ValueError:
        days = math.nan
    if not 1 <= days <= MAX_RETAIN_DAYS:
        return float(RETAIN_DAYS), (f"{ROOM_DAYS}={text[:20]!r} is not a number of days (it takes 1 to "
                                    f"{MAX_RETAIN_DAYS}), so rooms are kept {RETAIN_DAYS} days")
    return days, None


class Rooms(Seats, Conduct, Results, Database):
    """The rooms of one server: `Rooms()` opens (and creates or migrates) the default file.

    `path`: a SQLite file or a database URL (None: $EXPLORER_DATABASE_URL, else the runs folder's file; a
    bad URL is a RoomError). Safe to share between threads (a pooled connection per call) and between
    processes and servers (the database's locks); `clock` is injectable for tests. The students' side
    (seats, locks, the class's counts) is `Seats`, the teacher's controls during class `Conduct`, the
    class's answers afterwards `Results`."""

    def __init__(self, path: str | Path | None = None, clock: Callable[[], float] = time.time):
        self._clock, self._guard = clock, threading.Lock()
        self.retain_days, self.retention_problem = room_days()
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}
        super().__init__(path)

    def _teacher_key(self, teacher) -> str:
        return _teacher_hash(teacher)   # what the teachers table keeps of a teacher

    # --- reading rooms

    def _row(self, conn, code: str, lock: bool = False):
        """The room's row (a mapping) or None; `lock` (inside a write): held until it commits."""
        return conn.one("SELECT * FROM rooms WHERE code = ?" + (self.lock_sql if lock else ""), (code,))

    def _expired(self, row) -> bool:
        return row["closed_at"] is None and self._clock() - row["touched"] > IDLE_S

    def _open_row(self, conn, code: str):
        """The room's row inside a write, locked for it, or RoomError if it is unknown or closed."""
        row = self._row(conn, code, lock=True)
        if row is None:
            raise RoomError(f"there is no room {code}: check the code with your teacher, or continue alone")
        if row["closed_at"] is not None or self._expired(row):
            raise RoomError(f"room {code} has closed: continue the lesson alone")
        return row

    _WITH_REVEAL = ("SELECT r.*, v.room IS NOT NULL AS revealed_now, v.hidden AS hidden_now FROM rooms r "
                    "LEFT JOIN reveals v ON v.room = r.code AND v.lesson = r.lesson AND v.step = r.step "
                    "WHERE r.code = ?")   # the state in one query: one round trip to a database server

    def _read(self, code, sql: str = "SELECT * FROM rooms WHERE code = ?"):
        """The room's row (`sql`'s), recording an expiry the first time a read notices it (so `version` moves)."""
        try:
            code = normalise_code(code)
        except RoomError:
            return None
        row = self._conn().one(sql, (code,))
        if row is not None and self._expired(row):
            try:
                with self._write() as conn:
                    conn.execute("UPDATE rooms SET closed_at = touched + ?, version = version + 1 "
                                 "WHERE code = ? AND closed_at IS NULL", (IDLE_S, code))
                    row = conn.one(sql, (code,))
            except RoomError:   # busy: a read never fails for that; the next read records it
                pass
        return row

    def state(self, code) -> RoomState | None:
        """The room as students see it; None for an unknown or malformed code."""
        row = self._read(code, self._WITH_REVEAL)
        if row is None:
            return None
        expired = self._expired(row) or row["closed_at"] == row["touched"] + IDLE_S
        revealed = bool(row["revealed_now"])
        return RoomState(row["code"], row["lesson"], row["step"], row["version"], row["tally"], revealed,
                         bool(row["show_distribution"]), expired or row["closed_at"] is not None, expired,
                         row["created"], row["touched"], bool(row["paused"]), row["deadline"],
                         revealed and bool(row["hidden_now"]))

    def version(self, code) -> int | None:
        """The cheap read a polling student does; None for an unknown or malformed code."""
        row = self._read(code)
        return None if row is None else row["version"]

    def versions(self, codes) -> dict[str, int]:
        """Several rooms' versions in one read (a server's push, ui/room_push.py: every room its students sit in);
        an unknown or malformed code is left out, an expired room is recorded as `version` does it."""
        wanted = set()
        for code in codes:
            try:
                wanted.add(normalise_code(code))
            except RoomError:
                pass
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))   # only the count is formatted in: the codes are parameters
        rows = self._conn().all(f"SELECT * FROM rooms WHERE code IN ({marks})", tuple(sorted(wanted)))
        return {row["code"]: self.version(row["code"]) if self._expired(row) else row["version"] for row in rows}

    def _reveal_row(self, code: str, lesson: str, step: int):
        return self._conn().one("SELECT hidden FROM reveals WHERE room = ? AND lesson = ? AND step = ?",
                                (code, lesson, step))

    def _revealed(self, code: str, lesson: str, step: int) -> bool:
        return self._reveal_row(code, lesson, step) is not None

    def revealed(self, code, lesson, step) -> bool:
        lesson, step = checked_where(lesson, step)
        return self._revealed(normalise_code(code), lesson, step)

    def is_teacher(self, code, teacher) -> bool:
        """Whether the browser with owner id `teacher` teaches room `code` (any string may be asked)."""
        try:
            code, wanted = normalise_code(code), _teacher_hash(teacher)
        except RoomError:
            return False
        return self._is_teacher(self._conn(), code, wanted)

    def _is_teacher(self, conn, code: str, wanted: str) -> bool:
        return conn.one("SELECT 1 AS yes FROM teachers WHERE room = ? AND teacher_hash = ?", (code, wanted)) is not None

    # --- the teacher

    def create(self, lesson: str, step: int, teacher: str) -> str:
        """A new room on (lesson, step), taught by the browser whose owner id is `teacher`: its code."""
        lesson, step = checked_where(lesson, step)
        wanted, now = _teacher_hash(teacher), self._clock()
        with self._write() as conn:
            self.serialise(conn)   # the count and the insert as one step on every server: the cap holds
            conn.execute("DELETE FROM rooms WHERE touched < ?", (now - self.retain_days * 86_400.0,))
            open_now = conn.one("SELECT COUNT(*) AS n FROM rooms WHERE closed_at IS NULL AND touched >= ?",
                                (now - IDLE_S,))["n"]
            if open_now >= MAX_OPEN_ROOMS:
                raise RoomError(f"this server already has {open_now} rooms open: end an old room or try later")
            for _ in range(8):   # 8 collisions in a row at 500 of 2.2e10 codes do not happen
                code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LEN))
                if self._row(conn, code) is None:
                    conn.execute("INSERT INTO rooms (code, teacher_hash, lesson, step, created, touched) "
                                 "VALUES (?, '', ?, ?, ?, ?)", (code, lesson, step, now, now))
                    conn.execute("INSERT INTO teachers (room, teacher_hash, added) VALUES (?, ?, ?)",
                                 (code, wanted, now))
                    return code
        raise RoomError("no free room code was found: try again")

    def _teacher_row(self, conn, code, teacher, tab):
        """The room's row if `teacher` teaches it and `tab` (when given) holds the room."""
        row = self._open_row(conn, code)
        try:
            wanted = _teacher_hash(teacher)
        except RoomError:
            wanted = ""
        if not self._is_teacher(conn, code, wanted):
            raise RoomError(f"this browser does not teach room {code}: on the teacher's device, ask for a PIN "
                            "under *Another device* and type it here")
        if tab is not None and not self._holds(conn, row, checked_token(tab), take_over=False):
            raise RoomError(f"another tab is teaching room {code}: this one is read-only (take over to teach here)")
        return row

    def _holds(self, conn, row, tab: str, take_over: bool) -> bool:
        now = self._clock()
        holder, seen = row["holder"], row["holder_seen"] or 0.0
        if holder not in (None, tab) and now - seen <= HOLDER_S and not take_over:
            return False
        conn.execute("UPDATE rooms SET holder = ?, holder_seen = ? WHERE code = ?", (tab, now, row["code"]))
        return True

    def claim(self, code, teacher, tab, take_over: bool = False) -> bool:
        """True if this teacher tab holds the room (claiming it if free); call it as the tab's heartbeat.
        False: another tab holds it, this one is read-only unless it takes over."""
        code, tab = normalise_code(code), checked_token(tab)
        with self._write() as conn:
            return self._holds(conn, self._teacher_row(conn, code, teacher, None), tab, take_over)

    def _teach(self, code, teacher, tab, sql: str, args: tuple) -> None:
        """One teacher's change students must see: checked, applied, version bumped, in one transaction."""
        code = normalise_code(code)
        with self._write() as conn:
            self._teacher_row(conn, code, teacher, tab)
            if sql:
                conn.execute(sql, args)
            conn.execute("UPDATE rooms SET version = version + 1, touched = ? WHERE code = ?", (self._clock(), code))

    def move(self, code, teacher, lesson, step, tab: str | None = None) -> None:
        lesson, step = checked_where(lesson, step)
        self._teach(code, teacher, tab, "UPDATE rooms SET lesson = ?, step = ?, deadline = NULL WHERE code = ?",
                    (lesson, step, normalise_code(code)))

    def reveal(self, code, teacher, lesson, step, tab: str | None = None) -> None:
        """Show (lesson, step)'s answer on every screen; its predictions are final from now on."""
        lesson, step = checked_where(lesson, step)
        self._teach(code, teacher, tab, "INSERT INTO reveals (room, lesson, step, revealed_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (room, lesson, step) DO NOTHING",
                    (normalise_code(code), lesson, step, self._clock()))

    def show_distribution(self, code, teacher, on: bool, tab: str | None = None) -> None:
        self._teach(code, teacher, tab, "UPDATE rooms SET show_distribution = ? WHERE code = ?",
                    (int(bool(on)), normalise_code(code)))

    def end(self, code, teacher, tab: str | None = None) -> None:
        """Close the room for everyone; ending an ended room does nothing."""
        code = normalise_code(code)
        state = self.state(code)
        if state is not None and state.closed and self.is_teacher(code, teacher):
            return
        self._teach(code, teacher, tab, "UPDATE rooms SET closed_at = ? WHERE code = ?", (self._clock(), code))

    def names(self, code, teacher) -> list[str]:
        """The members' nicknames in joining order (teacher only); plain text, render it as such."""
        code = normalise_code(code)
        if not self.is_teacher(code, teacher):
            raise RoomError(f"only the teacher of room {code} sees its names")
        rows = self._conn().all("SELECT nickname FROM members WHERE room = ? ORDER BY joined, place", (code,))
        return [r["nickname"] or "anonymous" for r in rows]

    # --- another device of the teacher's

    def new_pin(self, code, teacher) -> str:
        """A PIN that admits one more device as this room's teacher (`enter_pin`), once, for PIN_TTL_S;
        it replaces any earlier PIN. Only its hash is kept: show it to the teacher now, never in a URL."""
        code = normalise_code(code)
        pin = f"{secrets.randbelow(10 ** PIN_DIGITS):0{PIN_DIGITS}d}"
        with self._write() as conn:
            self._teacher_row(conn, code, teacher, None)
            conn.execute("UPDATE rooms SET pin_hash = ?, pin_expires = ?, pin_misses = 0 WHERE code = ?",
                         (_pin_hash(code, pin), self._clock() + PIN_TTL_S, code))
        return pin

    def enter_pin(self, code, teacher, pin, member: str | None = None) -> None:
        """Make the browser with owner id `teacher` a teacher of the room, if `pin` is its live PIN; the
        PIN is then used up. `member`: that browser's student seat, given up (it no longer counts as one).
        Every wrong PIN counts; after MAX_PIN_MISSES the PIN is void and the teacher asks for a new one."""
        code, wanted = normalise_code(code), _teacher_hash(teacher)
        typed = "".join(str(pin or "").split()).replace("-", "")[:20]
        if not (len(typed) == PIN_DIGITS and typed.isdigit()):
            raise RoomError(f"a teacher's PIN is {PIN_DIGITS} digits: type the one the teacher's device shows")
        now, refused = self._clock(), None
        with self._write() as conn:   # a wrong PIN's count is committed, then refused below
            row = self._open_row(conn, code)
            if self._is_teacher(conn, code, wanted):
                return
            void = "UPDATE rooms SET pin_hash = NULL, pin_expires = NULL, pin_misses = 0 WHERE code = ?"
            if row["pin_hash"] is None or now > row["pin_expires"]:
                refused = (f"room {code} has no live teacher's PIN: on the teacher's device, open *Another device* "
                           "and ask for a new one")
            elif not hmac.compare_digest(row["pin_hash"], _pin_hash(code, typed)):
                left = MAX_PIN_MISSES - row["pin_misses"] - 1
                conn.execute(void if left <= 0 else "UPDATE rooms SET pin_misses = pin_misses + 1 WHERE code = ?",
                             (code,))
                refused = (f"wrong PIN: {left} tr{'ies' if left != 1 else 'y'} left before it stops working" if left > 0
                           else f"wrong PIN {MAX_PIN_MISSES} times: that PIN no longer works; ask for a new one on "
                           "the teacher's device")
            else:   # used up: it admits one device
                conn.execute(void, (code,))
                conn.execute("INSERT INTO teachers (room, teacher_hash, added) VALUES (?, ?, ?)", (code, wanted, now))
                if member is not None:
                    conn.execute("DELETE FROM members WHERE room = ? AND member_id = ?", (code, checked_token(member)))
                    conn.execute("UPDATE rooms SET tally = tally + 1 WHERE code = ?", (code,))
        if refused is not None:
            raise RoomError(refused)
