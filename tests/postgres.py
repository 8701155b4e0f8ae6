"""A throwaway PostgreSQL for tests: Debian's PostgreSQL 15 in a temporary folder, on a free loopback port,
trust authentication, run as the `postgres` user (the tests run as root, which PostgreSQL refuses to be).

    server = Postgres.start()              # initdb + postgres; RuntimeError says what is missing
    url = server.fresh_database()          # postgresql://postgres@127.0.0.1:PORT/t_...: a new empty database
    server.restart()                       # a clean stop and start on the same port and data (a restart test)
    server.stop()                          # by the postmaster's pid; the folder is removed

    python -m tests.postgres               # by hand: prints a fresh database's URL, stops on Ctrl-C

tests/conftest.py's session fixture `postgres` yields one of these; `postgres_url` a fresh database per
test. A browser test that runs two app servers on one database gives both the same `fresh_database()`
as EXPLORER_DATABASE_URL and each its own EXPLORER_RUNS_DIR. fsync is off: a test server may lose data to
a power cut, never to a restart (a stop checkpoints).
"""

from __future__ import annotations

import atexit
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

BIN = Path(os.environ.get("EXPLORER_PG_BIN", "/usr/lib/postgresql/15/bin"))
USER = "postgres"
START_S = 30.0
MISSING = (f"PostgreSQL 15 is needed by the tests that run on PostgreSQL, and {BIN}/initdb or {BIN}/postgres or "
           f"the {USER!r} user is missing: install Debian's `postgresql` (apt-get install postgresql, as .ci/run "
           "does), or run only the SQLite half with -k 'not postgresql'")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(*argv: str) -> list[str]:
    return ["runuser", "-u", USER, "--", *argv]


class Postgres:
    """One PostgreSQL server this process started (and stops)."""

    def __init__(self, root: Path, port: int):
        self.root, self.port = root, port
        self.data, self.log = root / "data", root / "postgres.log"
        self._process: subprocess.Popen | None = None

    @classmethod
    def start(cls) -> Postgres:
        if not ((BIN / "initdb").is_file() and (BIN / "postgres").is_file() and shutil.which("runuser")):
            raise RuntimeError(MISSING)
        try:
            account = pwd.getpwnam(USER)
        except KeyError:
            raise RuntimeError(MISSING) from None
        root = Path(tempfile.mkdtemp(prefix="explorer-pg-"))
        os.chown(root, account.pw_uid, account.pw_gid)   # its data folder must be the postgres user's own
        server = cls(root, _free_port())
        init = subprocess.run(_as_postgres(str(BIN / "initdb"), "-D", str(server.data), "-U", USER, "-A", "trust",
                                           "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"),
                              capture_output=True, text=True)
        if init.returncode != 0:
            shutil.rmtree(root, ignore_errors=True)
            raise RuntimeError(f"initdb failed: {(init.stderr or init.stdout).strip()[-500:]}")
        server.up()
        atexit.register(server.stop)   # a session that dies before its teardown leaves no server behind
        return server

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def up(self) -> None:
        """Start the server on its port and data and wait until it accepts connections."""
        log = open(self.log, "ab")   # noqa: SIM115 - the server writes it for as long as it runs
        os.chown(self.log, pwd.getpwnam(USER).pw_uid, -1)
        self._process = subprocess.Popen(
            _as_postgres(str(BIN / "postgres"), "-D", str(self.data), "-p", str(self.port), "-c",
                         "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "fsync=off",
                         "-c", "full_page_writes=off", "-c", "max_connections=200"),
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"postgres exited at start: {self.log.read_text(errors='replace')[-500:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
                if self._ready():
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"postgres did not accept connections within {START_S:.0f} s: see {self.log}")

    def _ready(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.url(), connect_timeout=2):
                return True
        except psycopg.OperationalError:   # "the database system is starting up"
            return False

    def _pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def down(self) -> None:
        """A fast shutdown (SIGINT to the postmaster, by its pid): open connections drop, committed data stays."""
        process, self._process = self._process, None
        if process is None:
            return
        pid = self._pid()
        if pid is not None:
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:
                pass
        try:
            process.wait(timeout=START_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart(self) -> None:
        self.down()
        self.up()

    def stop(self) -> None:
        """Stop the server and remove its folder (again: nothing)."""
        self.down()
        shutil.rmtree(self.root, ignore_errors=True)

    def fresh_database(self) -> str:
        """The URL of a new, empty database on this server: tests that share the server never see each other."""
        import psycopg

        name = f"t_{secrets.token_hex(6)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" STRATEGY FILE_COPY')   # a generated name, not input
        return self.url(name)


if __name__ == "__main__":   # by hand (a bench, servers started in a shell): a URL until Ctrl-C
    started = Postgres.start()
    try:
        print(started.fresh_database(), flush=True)
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        started.stop()
