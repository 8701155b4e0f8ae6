"""A class in one room: explorer.rooms on a temporary SQLite file, with a clock the test moves."""

import math
import sqlite3
import sys
import threading
import types

import pytest
import segno

from explorer import rooms as R
from explorer import rooms_db
from explorer.rooms import RoomError, Rooms


class Clock:
    def __init__(self, now=1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def db(tmp_path, clock):
    rooms = Rooms(tmp_path / "rooms.sqlite", clock=clock)
    yield rooms
    rooms.close()


@pytest.fixture
def room(db):
    code, key = db.create("ch2", 0)
    return code, key


def seat(n):
    return f"student-{n:04d}"


def test_happy_path_follow_predict_reveal(db, room):
    code, key = room
    assert db.state(code) == R.RoomState(code, "ch2", 0, 1, 0, False, False, False, False,
                                         db.state(code).created, db.state(code).touched)
    for n, nick in enumerate(["Ada", "Bo", "Cy"]):
        assert db.join(code, seat(n), nick).nickname == nick
    db.move(code, key, "ch2", 3)
    assert (db.state(code).lesson, db.state(code).step) == ("ch2", 3)
    db.predict(code, seat(0), "ch2", 3, 1)
    db.predict(code, seat(1), "ch2", 3, 1)
    assert db.count(code, "ch2", 3) == (2, 3)
    assert db.prediction(code, seat(0), "ch2", 3) == 1 and isinstance(db.prediction(code, seat(0), "ch2", 3), int)
    assert db.prediction(code, seat(2), "ch2", 3) is None
    assert db.distribution(code, "ch2", 3, key=key) == {1: 2}
    with pytest.raises(RoomError, match="after the reveal"):
        db.distribution(code, "ch2", 3)   # a student before the reveal
    db.reveal(code, key, "ch2", 3)
    assert db.state(code).revealed and db.revealed(code, "ch2", 3)
    assert db.distribution(code, "ch2", 3) == {1: 2}
    assert db.names(code, key) == ["Ada", "Bo", "Cy"]


def test_numbers_are_floats_and_choices_ints(db, room):
    code, key = room
    for n in range(3):
        db.join(code, seat(n))
    db.predict(code, seat(0), "ch2", 0, 2.5)
    db.predict(code, seat(1), "ch2", 0, 2.5)
    db.predict(code, seat(2), "ch2", 0, 0.1)
    assert db.distribution(code, "ch2", 0, key) == {0.1: 1, 2.5: 2}
    for bad in (True, "3", float("nan"), float("inf"), -1, 100, None):
        with pytest.raises(RoomError):
            db.predict(code, seat(0), "ch2", 0, bad)


def test_version_moves_only_on_what_students_must_see(db, room, clock):
    code, key = room
    v = db.version(code)
    tab = R.new_id()
    db.join(code, seat(0), "Ada")
    db.predict(code, seat(0), "ch2", 0, 1)
    assert db.claim(code, key, tab)
    db.names(code, key)
    db.count(code, "ch2", 0)
    assert db.version(code) == v and db.state(code).tally == 2   # joins and locks move the tally only
    for change in (lambda: db.move(code, key, "ch2", 1, tab=tab), lambda: db.reveal(code, key, "ch2", 1),
                   lambda: db.show_distribution(code, key, True), lambda: db.end(code, key)):
        change()
        assert db.version(code) == v + 1
        v += 1
    assert db.state(code).show_distribution and db.state(code).closed and not db.state(code).expired


def test_second_lock_replaces_first_until_reveal(db, room):
    code, key = room
    db.join(code, seat(0))
    db.predict(code, seat(0), "ch2", 0, 0)
    db.predict(code, seat(0), "ch2", 0, 2)
    assert db.prediction(code, seat(0), "ch2", 0) == 2 and db.count(code, "ch2", 0) == (1, 1)
    db.reveal(code, key, "ch2", 0)
    with pytest.raises(RoomError, match="revealed"):
        db.predict(code, seat(0), "ch2", 0, 1)
    assert db.prediction(code, seat(0), "ch2", 0) == 2


def test_lock_on_another_step_or_without_joining_refused(db, room):
    code, key = room
    with pytest.raises(RoomError, match="not joined"):
        db.predict(code, seat(0), "ch2", 0, 1)
    db.join(code, seat(0))
    db.move(code, key, "ch2", 1)
    with pytest.raises(RoomError, match="moved"):
        db.predict(code, seat(0), "ch2", 0, 1)


def test_wrong_or_borrowed_teacher_key_refused_and_room_unchanged(db, room):
    code, key = room
    _, other_key = db.create("ch2", 0)
    before = db.state(code)
    for guess in (other_key, key[:-1] + ("A" if key[-1] != "A" else "B"), "", None, 123):
        assert not db.is_teacher(code, guess)
        for method, *args in ((db.move, "ch2", 5), (db.reveal, "ch2", 0), (db.show_distribution, True),
                              (db.end,), (db.names,), (db.claim, R.new_id())):
            with pytest.raises(RoomError):
                method(code, guess, *args)
    assert db.state(code) == before and db.is_teacher(code, key)


def test_two_teacher_tabs_one_authority(db, room, clock):
    code, key = room
    first, second = R.new_id(), R.new_id()
    assert db.claim(code, key, first) and not db.claim(code, key, second)
    with pytest.raises(RoomError, match="read-only"):
        db.move(code, key, "ch2", 2, tab=second)
    db.move(code, key, "ch2", 2, tab=first)
    assert db.claim(code, key, second, take_over=True) and not db.claim(code, key, first)
    clock.now += R.HOLDER_S + 1                  # the holder's tab went silent: the other may claim it
    assert db.claim(code, key, first)
    assert db.state(code).step == 2


@pytest.mark.parametrize("text", ["", "ABC", "ABCDEFGH", "ABCDEF0", "ABCDEFI", "'; DROP TABLE rooms; --",
                                  None, 1234567, "ＡＢＣＤＥＦＧ", "A" * 10_000])
def test_garbled_codes_get_a_message_before_any_sql(db, room, text):
    assert db.state(text) is None and db.version(text) is None and not db.is_teacher(text, room[1])
    for call in (lambda: db.join(text, seat(0)), lambda: db.predict(text, seat(0), "ch2", 0, 1),
                 lambda: db.count(text, "ch2", 0), lambda: db.move(text, room[1], "ch2", 1)):
        with pytest.raises(RoomError, match="not a room code"):
            call()
    assert db.state(room[0]) is not None


def test_codes_are_case_and_separator_insensitive(db, room):
    code, _ = room
    typed = f" {code[:3].lower()}-{code[3:]} "
    assert db.state(typed).code == code and db.join(typed, seat(0)).room == code


def test_unknown_closed_and_expired_rooms(db, room, clock):
    code, key = room
    unknown = next(c for c in ("2" * 7, "3" * 7) if c != code)
    assert db.state(unknown) is None
    with pytest.raises(RoomError, match="no room"):
        db.join(unknown, seat(0))
    db.join(code, seat(0))
    db.end(code, key)
    db.end(code, key)                            # ending twice is no error
    with pytest.raises(RoomError, match="closed"):
        db.join(code, seat(1))
    with pytest.raises(RoomError, match="closed"):
        db.move(code, key, "ch2", 1)
    code2, key2 = db.create("ch2", 0)
    v = db.version(code2)
    clock.now += R.IDLE_S + 1
    assert db.version(code2) == v + 1            # a student polling learns of the expiry
    state = db.state(code2)
    assert state.closed and state.expired
    with pytest.raises(RoomError, match="closed"):
        db.join(code2, seat(0))
    clock.now += R.RETAIN_S
    db.create("ch2", 0)                          # a week later the old rooms are deleted
    assert db.state(code) is None and db.state(code2) is None


def test_nicknames_sanitised_bounded_and_parameterised(db, room):
    code, key = room
    nasty = {"x" * 10_000: "x" * R.MAX_NICKNAME,
             "<script>alert(1)</script>": "<script>alert(1)</script>",   # literal text: the UI renders it as text
             "**bold** [a](http://x)": "**bold** [a](http://x)",
             "a\x00b\x1b[31mc\u200bd\u202eE\nF\t\tG": "ab[31mcdE F G",
             "'; DROP TABLE rooms; --": "'; DROP TABLE rooms; --",
             "\u200b\u200f \n": ""}
    for n, (given, kept) in enumerate(nasty.items()):
        assert db.join(code, seat(n), given).nickname == kept
    assert db.names(code, key)[-1] == "anonymous"
    assert db.state(code) is not None and db.count(code, "ch2", 0) == (0, len(nasty))


def test_a_reopened_tab_keeps_its_seat_and_prediction(db, room):
    code, _ = room
    joined = db.join(code, seat(0), "Ada").joined
    db.predict(code, seat(0), "ch2", 0, 1)
    again = db.join(code, seat(0), "Ada L.")
    assert again.joined == joined and again.nickname == "Ada L." and db.prediction(code, seat(0), "ch2", 0) == 1
    assert db.count(code, "ch2", 0) == (1, 1)
    for bad in ("short", "x" * 65, "a b c d e f", None):
        with pytest.raises(RoomError, match="malformed"):
            db.join(code, bad)


def test_a_flood_of_locks_is_rate_limited_for_that_seat_only(db, room, clock):
    code, _ = room
    db.join(code, seat(0))
    db.join(code, seat(1))
    refused = []
    for n in range(100):
        try:
            db.predict(code, seat(0), "ch2", 0, n % 3)
        except RoomError as e:
            refused.append(str(e))
    assert len(refused) == 100 - R.LOCK_BURST and all(m.startswith("too many locks: wait 2 s") for m in refused)
    db.predict(code, seat(1), "ch2", 0, 2)       # another seat at once
    assert db.prediction(code, seat(0), "ch2", 0) == (R.LOCK_BURST - 1) % 3
    clock.now += R.LOCK_WINDOW_S / R.LOCK_BURST
    db.predict(code, seat(0), "ch2", 0, 0)
    assert db.count(code, "ch2", 0) == (2, 2)


def test_room_full_and_server_full(db, room, monkeypatch):
    code, _ = room
    monkeypatch.setattr(R, "MAX_MEMBERS", 3)
    for n in range(3):
        db.join(code, seat(n))
    with pytest.raises(RoomError, match="full"):
        db.join(code, seat(3))
    db.join(code, seat(0), "back again")         # a member coming back is no new seat
    monkeypatch.setattr(R, "MAX_OPEN_ROOMS", 2)
    db.create("ch2", 0)
    with pytest.raises(RoomError, match="rooms open"):
        db.create("ch2", 0)


def test_a_server_restart_keeps_room_step_and_predictions(tmp_path, clock):
    path = tmp_path / "rooms.sqlite"
    first = Rooms(path, clock=clock)
    code, key = first.create("lesson46", 0)
    first.join(code, seat(0), "Ada")
    first.move(code, key, "lesson46", 4)
    first.predict(code, seat(0), "lesson46", 4, 0.75)
    first.close()
    again = Rooms(path, clock=clock)
    state = again.state(code)
    assert (state.lesson, state.step, state.closed) == ("lesson46", 4, False)
    assert again.prediction(code, seat(0), "lesson46", 4) == 0.75 and again.is_teacher(code, key)
    assert again.names(code, key) == ["Ada"]
    again.close()


def test_two_servers_writing_at_once_lose_nothing(tmp_path, clock):
    path = tmp_path / "rooms.sqlite"
    servers = [Rooms(path, clock=clock), Rooms(path, clock=clock)]
    code, key = servers[0].create("ch2", 0)
    v = servers[0].version(code)
    errors = []

    def work(server, first):
        try:
            for n in range(first, first + 15):
                server.join(code, seat(n))
                server.predict(code, seat(n), "ch2", 0, n % 4)
                server.show_distribution(code, key, n % 2 == 0)
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
    assert sum(servers[1].distribution(code, "ch2", 0, key).values()) == 60
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
    assert db.state("ABCDEFG").step == 2 and db.claim("ABCDEFG", "k" * 32, R.new_id())
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == rooms_db.SCHEMA_VERSION
    assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    check.execute(f"PRAGMA user_version = {rooms_db.SCHEMA_VERSION + 1}")
    check.close()
    db.close()
    with pytest.raises(RoomError, match="newer version"):
        Rooms(path, clock=clock)
    empty = Rooms(tmp_path / "empty.sqlite", clock=clock)   # user_version 0, no tables
    assert empty.state(empty.create("ch2", 0)[0]) is not None
    empty.close()


def test_default_file_lives_under_the_runs_folder(tmp_path, monkeypatch):
    # a stand-in for explorer.runs, which imports torch: seconds this test does not need
    monkeypatch.setitem(sys.modules, "explorer.runs", types.SimpleNamespace(runs_dir=lambda: tmp_path))
    db = Rooms()
    assert db.path == str(tmp_path / "rooms.sqlite")
    db.close()


def test_codes_and_keys_are_unguessable(db):
    assert len(set(R.ALPHABET)) == len(R.ALPHABET) == 30 and not set("01OILU") & set(R.ALPHABET)
    assert R.CODE_BITS == R.CODE_LEN * math.log2(30) >= 30 and 6 <= R.CODE_LEN <= 8
    code, key = db.create("ch2", 0)
    assert len(code) == R.CODE_LEN and set(code) <= set(R.ALPHABET)
    assert R.KEY_BYTES * 8 >= 128 and len(key) >= 128 / 6
    assert key not in R.student_path(code) and R.student_path(code.lower()) == f"lessons?room={code}"
    stored = sqlite3.connect(db.path).execute("SELECT teacher_hash FROM rooms WHERE code = ?", (code,)).fetchone()[0]
    assert key not in stored and len(stored) == 64


def test_qr_svg_draws_the_link():
    link = "https://example.org/lessons?room=ABCDEFG"
    svg = R.qr_svg(link)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and "<path" in svg
    qr = segno.make(link, error="m")
    side = (qr.symbol_size(scale=4, border=2))[0]
    assert f'width="{side}"' in svg and qr.error == "M" and qr.version >= 1
