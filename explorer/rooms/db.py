"""The rooms' database through SQLAlchemy Core: a SQLite file (the default, runs/rooms.sqlite) or PostgreSQL
(`EXPLORER_DATABASE_URL`, explorer/store/database.py), one schema migrated in order when it is opened.

Every statement is parameterised (`?` placeholders, bound by SQLAlchemy, never formatted in). A write is one
transaction: on SQLite `BEGIN IMMEDIATE` (the write lock taken first: writers never deadlock); on PostgreSQL
the room's row is locked (`SELECT ... FOR UPDATE`, `Database.lock_sql`) before any read-then-write, and a
change across rooms (creation and its cap, migrations) takes one advisory lock. The pool pings a connection
before lending it and a read is tried once more after a disconnect, so after a database restart the next
call works by itself; a committed write is in the database, whatever happens to the server after it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from explorer.store.database import DatabaseUrlError, checked_url, engine_url, is_disconnect, rooms_url, sqlite_path

BUSY_MS = 5_000   # a writer waits this long for another (thread or process) before giving up
PG_LOCK = 0x726F6F6D5F6462   # PostgreSQL's advisory lock for changes across rooms (creation, migrations)
POOL = dict(pool_size=5, max_overflow=10)   # a connection is held for one call; 15 at most per server
PG_CONNECT = {"connect_timeout": 5}   # a database host that does not answer: a message in seconds, not minutes

# Each migration is a list of statements; MIGRATIONS[i] takes a database from version i to i + 1. REAL is
# written as on SQLite (the files the older releases wrote) and becomes DOUBLE PRECISION on PostgreSQL;
# a (dialect, statement) pair runs on that dialect only.
MIGRATIONS: list[list[str | tuple[str, str]]] = [
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
    [  # 5: a member's place in joining order, kept in a column (PostgreSQL has no rowid to order by)
        "ALTER TABLE members ADD COLUMN place INTEGER NOT NULL DEFAULT 0",
        ("sqlite", "UPDATE members SET place = rowid"),
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)


class RoomError(ValueError):
    """A one-line message for the user: what is wrong and what to do."""


class DatabaseDown(RoomError):
    """The database did not answer (restarting, gone, busy past its timeout): the same call may work soon."""


@lru_cache(maxsize=512)
def _text(sql: str) -> sa.TextClause:
    """`?` placeholders as SQLAlchemy bind parameters :p0, :p1, ... (no statement here has a literal `?`)."""
    count = iter(range(sql.count("?")))
    return sa.text(re.sub(r"\?", lambda _: f":p{next(count)}", sql))


def _bound(args: tuple) -> dict:
    return {f"p{i}": value for i, value in enumerate(args)}


class Tx:
    """Statements on one connection: `execute` (for writes), `one` (a row as a mapping, or None), `all`."""

    def __init__(self, conn: sa.Connection):
        self.conn = conn

    def execute(self, sql: str, args: tuple = ()) -> sa.CursorResult:
        return self.conn.execute(_text(sql), _bound(args))

    def one(self, sql: str, args: tuple = ()):
        return self.execute(sql, args).mappings().first()

    def all(self, sql: str, args: tuple = ()) -> list:
        return self.execute(sql, args).mappings().all()


class _Reader:
    """Reads outside a write: a pooled connection for each, tried once more after a disconnect."""

    def __init__(self, db: Database):
        self._db = db

    def _fetch(self, sql: str, args: tuple, first: bool):
        for attempt in (1, 2):
            try:
                with self._db.engine.connect() as conn:
                    result = Tx(conn).execute(sql, args).mappings()
                    return result.first() if first else result.all()
            except DBAPIError as e:
                if attempt == 1 and is_disconnect(e):
                    continue
                said = _unreachable(e, "read")
                if said is e:
                    raise
                raise said from e
        raise AssertionError("unreachable")

    def one(self, sql: str, args: tuple = ()):
        return self._fetch(sql, args, True)

    def all(self, sql: str, args: tuple = ()) -> list:
        return self._fetch(sql, args, False)


def _unreachable(error: DBAPIError, doing: str) -> BaseException:
    """A RoomError for a database that is busy, gone or full; any other error as it is."""
    if not isinstance(error, OperationalError | InterfaceError):
        return error   # a bug (a constraint, a typo): its own traceback, not a message to a student
    return DatabaseDown(f"the rooms database could not be {doing} ({_why(error)}); try again in a moment")


def _why(error: DBAPIError) -> str:
    """The driver's own first line (SQLAlchemy's adds the statement and a link)."""
    lines = str(getattr(error, "orig", None) or error).strip().splitlines()
    return lines[0][:200] if lines else "no reason given"


def _where(where: str | Path | None) -> str:
    """A database URL for `Rooms(where)`: None (the configured one), a URL, or a SQLite file's path."""
    if where is None:
        return rooms_url()
    text = str(where)
    return checked_url(text, "the rooms database") if "://" in text else f"sqlite:///{text}"


def _sqlite_engine(url: str) -> sa.Engine:
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_MS / 1000, "check_same_thread": False}, **POOL)

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_conn, _record) -> None:
        dbapi_conn.isolation_level = None   # autocommit reads; a write says BEGIN IMMEDIATE itself
        dbapi_conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")   # an int constant, not input
        dbapi_conn.execute("PRAGMA foreign_keys = ON")

    return engine


class Database:
    """The rooms' tables, shared by threads (a pooled connection per call) and by processes or servers
    (SQLite's file locks, PostgreSQL's row locks). `url` is where they live; `path` the SQLite file, if any."""

    def __init__(self, where: str | Path | None = None):
        try:
            self.url = _where(where)
        except DatabaseUrlError as e:
            raise RoomError(str(e)) from None
        self.path = sqlite_path(self.url)
        self.postgres = self.path is None
        self.engine = (sa.create_engine(engine_url(self.url), pool_pre_ping=True, connect_args=PG_CONNECT, **POOL)
                       if self.postgres else _sqlite_engine(self.url))
        self.lock_sql = " FOR UPDATE" if self.postgres else ""   # SQLite's BEGIN IMMEDIATE already holds all
        self._local = threading.local()
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    def _conn(self) -> Tx | _Reader:
        """This thread's open write (so a read inside it sees its changes), else a reader."""
        return getattr(self._local, "tx", None) or _Reader(self)

    @contextmanager
    def _write(self) -> Iterator[Tx]:
        try:
            with self.engine.connect() as conn:
                try:
                    if not self.postgres:
                        conn.exec_driver_sql("BEGIN IMMEDIATE")   # take the write lock now: no upgrade deadlock
                    self._local.tx = Tx(conn)
                    yield self._local.tx
                    conn.commit()
                except BaseException:
                    conn.rollback()
                    raise
                finally:
                    self._local.tx = None
        except DBAPIError as e:   # busy past BUSY_MS, a database gone, disk full, ...: a message, not a traceback
            said = _unreachable(e, "written")
            if said is e:
                raise
            raise said from e

    def serialise(self, tx: Tx) -> None:
        """Inside a write, wait for every other change across rooms (SQLite's write lock is already one)."""
        if self.postgres:
            tx.execute("SELECT pg_advisory_xact_lock(?)", (PG_LOCK,))

    def close(self) -> None:
        """Close every connection this object opened; the database keeps everything (`Rooms.end` ends a room)."""
        self.engine.dispose()

    def _version(self, tx: Tx) -> int:
        if not self.postgres:
            return tx.execute("PRAGMA user_version").scalar()
        tx.execute("CREATE TABLE IF NOT EXISTS rooms_schema (version INTEGER NOT NULL)")
        have = tx.execute("SELECT version FROM rooms_schema").scalar()
        if have is None:
            tx.execute("INSERT INTO rooms_schema (version) VALUES (0)")
        return have or 0

    def _set_version(self, tx: Tx) -> None:
        if self.postgres:
            tx.execute("UPDATE rooms_schema SET version = ?", (SCHEMA_VERSION,))
        else:
            tx.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")   # an int constant, not input

    def _migrate(self) -> None:
        if not self.postgres:
            try:
                with self.engine.connect() as conn:
                    conn.exec_driver_sql("PRAGMA journal_mode = WAL")   # readers never block the writer; kept
            except DBAPIError as e:   # a folder that does not exist, a file that is not a database
                raise RoomError(f"{self.path} cannot be opened as the rooms database ({_why(e)}): give a "
                                "writable file in an existing folder") from e
        dialect = "postgresql" if self.postgres else "sqlite"
        with self._write() as tx:
            self.serialise(tx)   # two servers starting together: one migrates, the other finds it done
            have = self._version(tx)
            if have > SCHEMA_VERSION:
                where = self.path or "the rooms database"
                raise RoomError(f"{where} was written by a newer version of the app (schema {have}); "
                                "update the app or move the file away")
            for number in range(have, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    only, sql = statement if isinstance(statement, tuple) else (dialect, statement)
                    if only == dialect:
                        tx.conn.exec_driver_sql(re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql) if self.postgres
                                                else sql)
            self._set_version(tx)
