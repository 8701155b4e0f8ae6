"""Where the shared state lives: `EXPLORER_DATABASE_URL` (a contract), the one reader of that variable.

    EXPLORER_DATABASE_URL=postgresql://user@host:port/db    several app servers share one PostgreSQL (psycopg 3)
    EXPLORER_DATABASE_URL=sqlite:///path/to/file.sqlite      one SQLite file (one machine)
    unset                                                    runs/rooms.sqlite and runs/search.db, as before

It holds the rooms (explorer/rooms) and the Optuna studies (explorer/search/study.py). A password in the
URL is never repeated in a message. Nothing here imports torch (explorer.store.runs is imported lazily).
"""

from __future__ import annotations

import os

DATABASE_ENV = "EXPLORER_DATABASE_URL"
ROOMS_FILE, STUDIES_FILE = "rooms.sqlite", "search.db"   # under the runs folder when the variable is unset
VALID = "postgresql://user@host:port/db or sqlite:///path/to/file"


class DatabaseUrlError(ValueError):
    """A one-line message: which setting is wrong and what is valid."""


def _scheme(url: str) -> str:
    return url.split("://", 1)[0][:20] if "://" in url else url[:20]


def checked_url(url: str, name: str = DATABASE_ENV) -> str:
    """`url` if it is a PostgreSQL or SQLite URL SQLAlchemy can open, else DatabaseUrlError naming `name`."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    url = url.strip()
    bad = DatabaseUrlError(f"{name} starting {_scheme(url)!r} is not a database URL: give {VALID} "
                           f"(or leave {DATABASE_ENV} unset for files in the runs folder)")
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise bad from None
    if parsed.drivername == "postgresql":   # psycopg 3 is implied (engine_url): one spelling everywhere
        if not parsed.host or not parsed.database:
            raise DatabaseUrlError(f"{name}: a PostgreSQL URL names a host and a database: "
                                   "postgresql://user@host:port/db")
        return url
    if parsed.drivername == "sqlite" and url.startswith("sqlite:///") and parsed.database not in (None, "",
                                                                                                 ":memory:"):
        return url
    raise bad


def database_url() -> str | None:
    """$EXPLORER_DATABASE_URL, checked; None when it is unset or blank (each store then uses its own file
    in the runs folder). A bad value raises DatabaseUrlError: what is wrong and what is valid."""
    text = os.environ.get(DATABASE_ENV, "").strip()
    return checked_url(text) if text else None


def _default(file_name: str) -> str:
    from explorer.store.runs import runs_dir  # lazily: explorer.store.runs imports torch

    return f"sqlite:///{runs_dir() / file_name}"


def rooms_url() -> str:
    """The rooms' database: $EXPLORER_DATABASE_URL, else runs/rooms.sqlite."""
    return database_url() or _default(ROOMS_FILE)


def studies_url() -> str:
    """The Optuna studies' storage: $EXPLORER_DATABASE_URL, else runs/search.db."""
    return database_url() or _default(STUDIES_FILE)


def engine_url(url: str) -> str:
    """The URL SQLAlchemy is given: PostgreSQL always through psycopg 3 (the driver requirements.txt pins)."""
    return "postgresql+psycopg://" + url.removeprefix("postgresql://") if url.startswith("postgresql://") else url


def sqlite_path(url: str) -> str | None:
    """The file a sqlite:/// URL names; None for any other URL."""
    return url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else None


def is_disconnect(error: BaseException) -> bool:
    """A database error that means the connection died (a server restart): worth one more try."""
    return bool(getattr(error, "connection_invalidated", False))
