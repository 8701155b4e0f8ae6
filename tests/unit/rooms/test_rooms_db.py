"""The rooms' database: a server restart and two servers at once (on SQLite and PostgreSQL), a PostgreSQL restart
between two calls, WAL, migrations from older releases' files, where it lives and EXPLORER_DATABASE_URL."""

import shutil
import sqlite3
import sys
import threading
import types

import pytest
from sqlalchemy import create_engine

from explorer import rooms as R
from explorer.rooms import RoomError, Rooms
from explorer.rooms import db as rooms_db
from explorer.rooms import seats as rooms_seats
from explorer.store.database import DATABASE_ENV, engine_url
from tests.unit.rooms.samples import DATA, TEACHER, seat


def test_a_server_restart_keeps_room_step_and_predictions(where, clock):
    first = Rooms(where, clock=clock)
    code, teacher = first.create("lesson46", 0, TEACHER), TEACHER
    first.join(code, seat(0), "Ada")
    first.move(code, teacher, "lesson46", 4)
    first.predict(code, seat(0), "lesson46", 4, 0.75)
    first.close()
    again = Rooms(where, clock=clock)
    state = again.state(code)
    assert (state.lesson, state.step, state.closed) == ("lesson46", 4, False)
    assert again.prediction(code, seat(0), "lesson46", 4) == 0.75 and again.is_teacher(code, teacher)
    assert again.names(code, teacher) == ["Ada"]
    again.close()


def test_two_servers_writing_at_once_lose_nothing(where, clock):
    servers = [Rooms(where, clock=clock), Rooms(where, clock=clock)]
    code, teacher = servers[0].create("ch2", 0, TEACHER), TEACHER
    v = servers[0].version(code)
    errors = []

    def work(server, first):
        try:
            for n in range(first, first + 15):
                server.join(code, seat(n))
                server.predict(code, seat(n), "ch2", 0, n % 4)
                server.show_distribution(code, teacher, n % 2 == 0)
        except Exception as e:   # noqa: BLE001 - the test reports any escape
            errors.append(e)

    threads = [threading.Thread(target=work, args=(servers[i % 2], 15 * i)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert servers[1].count(code, "ch2", 0) == (60, 60)
    assert servers[0].version(code) == v + 60 and servers[1].state(code).tally == 120
    assert sum(servers[1].distribution(code, "ch2", 0, teacher).values()) == 60
    for server in servers:
        server.close()


def test_the_file_is_wal_and_an_old_file_migrates(tmp_path, clock):
    path = tmp_path / "rooms.sqlite"
    old = sqlite3.connect(path)                  # a v1 file: the first schema, one room in it
    for statement in rooms_db.MIGRATIONS[0]:
        old.execute(statement)
    old.execute("INSERT INTO rooms (code, teacher_hash, lesson, step, created, touched) VALUES (?, ?, ?, ?, ?, ?)",
                ("ABCDEFG", R._hash("k" * 32), "ch2", 2, clock.now, clock.now))
    old.execute("PRAGMA user_version = 1")
    old.commit()
    old.close()
    db = Rooms(path, clock=clock)
    assert db.state("ABCDEFG").step == 2 and db.join("ABCDEFG", seat(0)).room == "ABCDEFG"
    with pytest.raises(RoomError, match="does not teach"):   # its key lived in URLs: it teaches nothing now
        db.claim("ABCDEFG", "k" * 32, R.new_id())
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == rooms_db.SCHEMA_VERSION
    assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert check.execute("SELECT teacher_hash FROM rooms").fetchall() == [("",)]
    check.execute(f"PRAGMA user_version = {rooms_db.SCHEMA_VERSION + 1}")
    check.close()
    db.close()
    with pytest.raises(RoomError, match="newer version"):
        Rooms(path, clock=clock)
    empty = Rooms(tmp_path / "empty.sqlite", clock=clock)   # user_version 0, no tables
    assert empty.state(empty.create("ch2", 0, TEACHER)) is not None
    empty.close()


def test_a_file_written_by_the_previous_release_upgrades_with_its_class(tmp_path, clock):
    """tests/unit/data/rooms_v2.sqlite was written by the release before this schema (teacher keys in URLs):
    room X4QYMC8 on module6 step 2, Ada and Bo seated, step 1 revealed, their predictions locked."""
    path = tmp_path / "rooms.sqlite"
    shutil.copy(DATA / "rooms_v2.sqlite", path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2
    db = Rooms(path, clock=clock)
    code = "X4QYMC8"
    state = db.state(code)
    assert (state.lesson, state.step, state.closed, state.revealed) == ("module6", 2, False, False)
    assert db.revealed(code, "module6", 1) and db.distribution(code, "module6", 1) == {0: 1, 2: 1}
    assert db.prediction(code, "student-0000", "module6", 2) == 1 and db.count(code, "module6", 2) == (1, 2)
    assert not db.is_teacher(code, "Us6lg90Wn1mxLTSLecsDL4giqhGiGdZk")   # the old URL's key: no authority
    db.predict(code, "student-0001", "module6", 2, 0)                       # the class goes on
    assert [a.nickname for a in db.answers(code, None) if a.step == 1] == ["Ada", "Bo"]   # joining order kept
    places = sqlite3.connect(path).execute("SELECT place, rowid FROM members ORDER BY rowid").fetchall()
    assert [p for p, _ in places] == [r for _, r in places] and len(places) == 2
    new = db.create("module6", 0, TEACHER)                                  # and new rooms work beside it
    assert db.is_teacher(new, TEACHER) and not db.is_teacher(code, TEACHER)
    db.close()


def test_default_file_lives_under_the_runs_folder(tmp_path, monkeypatch):
    # a stand-in for explorer.store.runs, which imports torch: seconds this test does not need
    monkeypatch.setitem(sys.modules, "explorer.store.runs", types.SimpleNamespace(runs_dir=lambda: tmp_path))
    db = Rooms()
    assert db.path == str(tmp_path / "rooms.sqlite")
    db.close()


def test_a_postgresql_restart_between_two_calls_loses_no_lock(postgres, postgres_url, clock):
    db = Rooms(postgres_url, clock=clock)
    code = db.create("ch2", 0, TEACHER)
    db.join(code, seat(0), "Ada")
    db.predict(code, seat(0), "ch2", 0, 2)
    postgres.restart()   # every pooled connection is dead now
    assert db.prediction(code, seat(0), "ch2", 0) == 2 and db.count(code, "ch2", 0) == (1, 1)
    postgres.restart()
    db.join(code, seat(1), "Bo")   # a write after a restart works by itself too
    db.predict(code, seat(1), "ch2", 0, 1)
    assert db.distribution(code, "ch2", 0, TEACHER) == {1: 1, 2: 1}
    db.close()


def test_an_unreachable_database_is_a_message(postgres, clock):
    db = Rooms(postgres.fresh_database(), clock=clock)
    code = db.create("ch2", 0, TEACHER)
    postgres.down()
    try:
        for call in (lambda: db.state(code), lambda: db.join(code, seat(0))):
            with pytest.raises(RoomError, match="rooms database could not be (read|written).*try again"):
                call()
    finally:
        postgres.up()
    assert db.state(code).step == 0   # and back by itself
    db.close()


def test_a_newer_postgresql_schema_is_refused(postgres_url, clock):
    Rooms(postgres_url, clock=clock).close()
    Rooms(postgres_url, clock=clock).close()   # opened again: nothing to migrate
    with create_engine(engine_url(postgres_url)).begin() as conn:
        conn.exec_driver_sql(f"UPDATE rooms_schema SET version = {rooms_db.SCHEMA_VERSION + 1}")
    with pytest.raises(RoomError, match="newer version"):
        Rooms(postgres_url, clock=clock)


def test_the_database_url_setting_picks_the_database_or_says_why_not(tmp_path, monkeypatch):
    monkeypatch.setenv(DATABASE_ENV, f"sqlite:///{tmp_path / 'shared.sqlite'}")
    db = Rooms()
    assert db.path == str(tmp_path / "shared.sqlite") and db.state(db.create("ch2", 0, TEACHER)) is not None
    db.close()
    for bad in ("mysql://u:secret@h/db", "rooms.sqlite", "sqlite://", "postgresql://u:secret@/db"):
        monkeypatch.setenv(DATABASE_ENV, bad)
        with pytest.raises(RoomError) as err:
            Rooms()
        said = str(err.value)
        assert DATABASE_ENV in said and "postgresql://user@host:port/db" in said and "secret" not in said


def test_caps_and_pin_misses_hold_when_two_servers_race(where, clock, monkeypatch):
    """Each of these reads, then writes: the room's cap, the seats' cap and a PIN's misses are counted once."""
    monkeypatch.setattr(R, "MAX_OPEN_ROOMS", 3)
    monkeypatch.setattr(rooms_seats, "MAX_MEMBERS", 3)
    servers = [Rooms(where, clock=clock), Rooms(where, clock=clock)]
    code = servers[0].create("ch2", 0, TEACHER)
    pin = servers[0].new_pin(code, TEACHER)
    wrong = f"{(int(pin) + 1) % 10 ** R.PIN_DIGITS:06d}"

    def race(call, n=8) -> list[str]:
        start, said = threading.Barrier(n), []

        def one(i):
            start.wait()
            try:
                call(servers[i % 2], i)
                said.append("ok")
            except RoomError as e:
                said.append(str(e))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return said

    assert race(lambda s, i: s.create("ch2", 0, TEACHER)).count("ok") == 2   # 1 open + 2 = the cap of 3
    assert race(lambda s, i: s.join(code, seat(i))).count("ok") == 3
    said = race(lambda s, i: s.enter_pin(code, f"guesser-{i:010d}", wrong))
    left = sorted(int(m.split(": ")[1].split()[0]) for m in said if "left before" in m)
    assert left == [1, 2, 3, 4] and sum("no longer works" in m for m in said) == 1
    assert sum("no live" in m for m in said) == 3
    for server in servers:
        server.close()


def test_a_file_that_cannot_hold_the_rooms_is_a_message(tmp_path):
    (tmp_path / "junk.sqlite").write_bytes(b"not a database " * 400)
    for where in (tmp_path / "no" / "such" / "rooms.sqlite", tmp_path / "junk.sqlite"):
        with pytest.raises(RoomError, match="cannot be opened as the rooms database.*existing folder"):
            Rooms(where)
