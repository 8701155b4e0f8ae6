"""The rooms' SQLite file: one connection per thread, one `BEGIN IMMEDIATE` transaction per write,
the schema versioned with `PRAGMA user_version` and migrated in order when the file is opened."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_MS = 5_000   # a writer waits this long for another (thread or process) before giving up

# Each migration is a list of statements; MIGRATIONS[i] takes a file from user_version i to i + 1.
MIGRATIONS: list[list[str]] = [
    [  # 1: the initial schema
        """CREATE TABLE rooms (code TEXT PRIMARY KEY, teacher_hash TEXT NOT NULL, lesson TEXT NOT NULL,
            step INTEGER NOT NULL, show_distribution INTEGER NOT NULL DEFAULT 0,
            version INTEGER NOT NULL DEFAULT 1, tally INTEGER NOT NULL DEFAULT 0,
            created REAL NOT NULL, touched REAL NOT NULL, closed_at REAL)""",
        "CREATE INDEX rooms_touched ON rooms (touched)",
        """CREATE TABLE members (room TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
            member_id TEXT NOT NULL, nickname TEXT NOT NULL, joined REAL NOT NULL, last_seen REAL NOT NULL,
            PRIMARY KEY (room, member_id))""",
        """CREATE TABLE reveals (room TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
            lesson TEXT NOT NULL, step INTEGER NOT NULL, revealed_at REAL NOT NULL,
            PRIMARY KEY (room, lesson, step))""",
        """CREATE TABLE predictions (room TEXT NOT NULL, member_id TEXT NOT NULL, lesson TEXT NOT NULL,
            step INTEGER NOT NULL, value REAL NOT NULL, is_choice INTEGER NOT NULL, locked_at REAL NOT NULL,
            PRIMARY KEY (room, member_id, lesson, step),
            FOREIGN KEY (room, member_id) REFERENCES members (room, member_id) ON DELETE CASCADE)""",
        "CREATE INDEX predictions_step ON predictions (room, lesson, step)",
    ],
    [  # 2: one teacher tab holds the room
        "ALTER TABLE rooms ADD COLUMN holder TEXT",
        "ALTER TABLE rooms ADD COLUMN holder_seen REAL",
    ],
    [  # 3: the teacher is a browser (its owner id's hash), another device joins with a PIN; no key in URLs
        """CREATE TABLE teachers (room TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
            teacher_hash TEXT NOT NULL, added REAL NOT NULL, PRIMARY KEY (room, teacher_hash))""",
        "ALTER TABLE rooms ADD COLUMN pin_hash TEXT",
        "ALTER TABLE rooms ADD COLUMN pin_expires REAL",
        "ALTER TABLE rooms ADD COLUMN pin_misses INTEGER NOT NULL DEFAULT 0",
        # rooms.teacher_hash held the hash of a key that lived in URLs: blanked, unused (kept: it is NOT NULL).
        # An older room keeps its students and predictions, and has no teacher until it expires.
        "UPDATE rooms SET teacher_hash = ''",
    ],
    [  # 4: the teacher's controls during class (explorer/rooms/conduct.py)
        "ALTER TABLE rooms ADD COLUMN paused INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE rooms ADD COLUMN deadline REAL",   # the current step's countdown ends then; NULL: none
        "ALTER TABLE reveals ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)


class RoomError(ValueError):
    """A one-line message for the user: what is wrong and what to do."""


class Database:
    """A SQLite file shared by threads (a connection each) and processes (SQLite's locks)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._local, self._conns_guard, self._conns = threading.local(), threading.Lock(), []
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # check_same_thread=False only so close() may close it; each thread uses its own
            conn = sqlite3.connect(self.path, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            self._local.conn = conn
            with self._conns_guard:
                self._conns.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        try:
            conn.execute("BEGIN IMMEDIATE")   # take the write lock now: no upgrade deadlock between writers
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as e:   # busy past BUSY_MS, disk full, ...: a message, not a traceback
            raise RoomError(f"the rooms database could not be written ({e}); try again in a moment") from e

    def close(self) -> None:
        """Close every connection this object opened; the file keeps everything (`Rooms.end` ends a room)."""
        with self._conns_guard:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def _migrate(self) -> None:
        conn = self._conn()
        conn.execute("PRAGMA journal_mode = WAL")   # readers never block the writer; kept in the file
        with self._write() as conn:
            have = conn.execute("PRAGMA user_version").fetchone()[0]
            if have > SCHEMA_VERSION:
                raise RoomError(f"{self.path} was written by a newer version of the app (schema {have}); "
                                "update the app or move the file away")
            for number in range(have, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")   # an int constant, not input
