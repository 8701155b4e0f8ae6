"""A class in one room: explorer.rooms on SQLite and on PostgreSQL (tests/unit/rooms/conftest.py), with a clock
the test moves."""

import math

import pytest
import segno

from explorer import rooms as R
from explorer.rooms import RoomError
from explorer.rooms import seats as rooms_seats
from explorer.rooms.invite import qr_svg, student_path
from tests.unit.rooms.samples import TEACHER, column, dump, seat


def test_happy_path_follow_predict_reveal(db, room):
    code, teacher = room
    assert db.state(code) == R.RoomState(code, "ch2", 0, 1, 0, False, False, False, False,
                                         db.state(code).created, db.state(code).touched)
    for n, nick in enumerate(["Ada", "Bo", "Cy"]):
        assert db.join(code, seat(n), nick).nickname == nick
    db.move(code, teacher, "ch2", 3)
    assert (db.state(code).lesson, db.state(code).step) == ("ch2", 3)
    db.predict(code, seat(0), "ch2", 3, 1)
    db.predict(code, seat(1), "ch2", 3, 1)
    assert db.count(code, "ch2", 3) == (2, 3)
    assert db.prediction(code, seat(0), "ch2", 3) == 1 and isinstance(db.prediction(code, seat(0), "ch2", 3), int)
    assert db.prediction(code, seat(2), "ch2", 3) is None
    assert db.distribution(code, "ch2", 3, teacher=teacher) == {1: 2}
    with pytest.raises(RoomError, match="after the reveal"):
        db.distribution(code, "ch2", 3)   # a student before the reveal
    db.reveal(code, teacher, "ch2", 3)
    assert db.state(code).revealed and db.revealed(code, "ch2", 3)
    assert db.distribution(code, "ch2", 3) == {1: 2}
    assert db.names(code, teacher) == ["Ada", "Bo", "Cy"]


def test_numbers_are_floats_and_choices_ints(db, room):
    code, teacher = room
    for n in range(3):
        db.join(code, seat(n))
    db.predict(code, seat(0), "ch2", 0, 2.5)
    db.predict(code, seat(1), "ch2", 0, 2.5)
    db.predict(code, seat(2), "ch2", 0, 0.1)
    assert db.distribution(code, "ch2", 0, teacher) == {0.1: 1, 2.5: 2}
    for bad in (True, "3", float("nan"), float("inf"), -1, 100, None):
        with pytest.raises(RoomError):
            db.predict(code, seat(0), "ch2", 0, bad)


def test_version_moves_only_on_what_students_must_see(db, room, clock):
    code, teacher = room
    v = db.version(code)
    tab = R.new_id()
    db.join(code, seat(0), "Ada")
    db.predict(code, seat(0), "ch2", 0, 1)
    assert db.claim(code, teacher, tab)
    db.names(code, teacher)
    db.count(code, "ch2", 0)
    assert db.version(code) == v and db.state(code).tally == 2   # joins and locks move the tally only
    for change in (lambda: db.move(code, teacher, "ch2", 1, tab=tab), lambda: db.reveal(code, teacher, "ch2", 1),
                   lambda: db.show_distribution(code, teacher, True), lambda: db.end(code, teacher)):
        change()
        assert db.version(code) == v + 1
        v += 1
    assert db.state(code).show_distribution and db.state(code).closed and not db.state(code).expired


def test_second_lock_replaces_first_until_reveal(db, room):
    code, teacher = room
    db.join(code, seat(0))
    db.predict(code, seat(0), "ch2", 0, 0)
    db.predict(code, seat(0), "ch2", 0, 2)
    assert db.prediction(code, seat(0), "ch2", 0) == 2 and db.count(code, "ch2", 0) == (1, 1)
    db.reveal(code, teacher, "ch2", 0)
    with pytest.raises(RoomError, match="revealed"):
        db.predict(code, seat(0), "ch2", 0, 1)
    assert db.prediction(code, seat(0), "ch2", 0) == 2


def test_lock_on_another_step_or_without_joining_refused(db, room):
    code, teacher = room
    with pytest.raises(RoomError, match="not joined"):
        db.predict(code, seat(0), "ch2", 0, 1)
    db.join(code, seat(0))
    db.move(code, teacher, "ch2", 1)
    with pytest.raises(RoomError, match="moved"):
        db.predict(code, seat(0), "ch2", 0, 1)


def test_wrong_or_borrowed_teacher_key_refused_and_room_unchanged(db, room):
    code, teacher = room
    other_teacher = "another-teacher-id-0002"
    db.create("ch2", 0, other_teacher)            # the teacher of another room
    before = db.state(code)
    for guess in (other_teacher, teacher[:-1] + ("A" if teacher[-1] != "A" else "B"), "", None, 123, "x" * 65):
        assert not db.is_teacher(code, guess)
        for method, *args in ((db.move, "ch2", 5), (db.reveal, "ch2", 0), (db.show_distribution, True),
                              (db.end,), (db.names,), (db.claim, R.new_id())):
            with pytest.raises(RoomError):
                method(code, guess, *args)
    assert db.state(code) == before and db.is_teacher(code, teacher)


def test_two_teacher_tabs_one_authority(db, room, clock):
    code, teacher = room
    first, second = R.new_id(), R.new_id()
    assert db.claim(code, teacher, first) and not db.claim(code, teacher, second)
    with pytest.raises(RoomError, match="read-only"):
        db.move(code, teacher, "ch2", 2, tab=second)
    db.move(code, teacher, "ch2", 2, tab=first)
    assert db.claim(code, teacher, second, take_over=True) and not db.claim(code, teacher, first)
    clock.now += R.HOLDER_S + 1                  # the holder's tab went silent: the other may claim it
    assert db.claim(code, teacher, first)
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
    code, teacher = room
    unknown = next(c for c in ("2" * 7, "3" * 7) if c != code)
    assert db.state(unknown) is None
    with pytest.raises(RoomError, match="no room"):
        db.join(unknown, seat(0))
    db.join(code, seat(0))
    db.end(code, teacher)
    db.end(code, teacher)                            # ending twice is no error
    with pytest.raises(RoomError, match="closed"):
        db.join(code, seat(1))
    with pytest.raises(RoomError, match="closed"):
        db.move(code, teacher, "ch2", 1)
    code2 = db.create("ch2", 0, teacher)
    v = db.version(code2)
    clock.now += R.IDLE_S + 1
    assert db.version(code2) == v + 1            # a student polling learns of the expiry
    state = db.state(code2)
    assert state.closed and state.expired
    with pytest.raises(RoomError, match="closed"):
        db.join(code2, seat(0))
    clock.now += db.retain_days * 86_400
    db.create("ch2", 0, teacher)                     # a week later the old rooms are deleted
    assert db.state(code) is None and db.state(code2) is None


def test_nicknames_sanitised_bounded_and_parameterised(db, room):
    code, teacher = room
    nasty = {"x" * 10_000: "x" * R.MAX_NICKNAME,
             "<script>alert(1)</script>": "<script>alert(1)</script>",   # literal text: the UI renders it as text
             "**bold** [a](http://x)": "**bold** [a](http://x)",
             "a\x00b\x1b[31mc\u200bd\u202eE\nF\t\tG": "ab[31mcdE F G",
             "'; DROP TABLE rooms; --": "'; DROP TABLE rooms; --",
             "\u200b\u200f \n": ""}
    for n, (given, kept) in enumerate(nasty.items()):
        assert db.join(code, seat(n), given).nickname == kept
    assert db.names(code, teacher)[-1] == "anonymous"
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
    monkeypatch.setattr(rooms_seats, "MAX_MEMBERS", 3)
    for n in range(3):
        db.join(code, seat(n))
    with pytest.raises(RoomError, match="full"):
        db.join(code, seat(3))
    db.join(code, seat(0), "back again")         # a member coming back is no new seat
    monkeypatch.setattr(R, "MAX_OPEN_ROOMS", 2)
    db.create("ch2", 0, TEACHER)
    with pytest.raises(RoomError, match="rooms open"):
        db.create("ch2", 0, TEACHER)


def test_the_teacher_is_a_browser_known_by_a_hash_of_its_owner_id(db, room):
    code, teacher = room
    assert db.is_teacher(code, teacher) and not db.is_teacher(code, "someone-else-0003")
    db.join(code, "someone-else-0003")   # a phone given the projected URL: a student, nothing more
    for method, *args in ((db.move, "ch2", 5), (db.reveal, "ch2", 0), (db.end,), (db.claim, R.new_id()),
                          (db.claim, R.new_id(), True), (db.new_pin,), (db.names,)):
        with pytest.raises(RoomError, match="does not teach|only the teacher"):
            method(code, "someone-else-0003", *args)
    stored = dump(db)
    assert teacher not in stored and R._teacher_hash(teacher) in stored   # the hash, never the owner id
    assert column(db, "SELECT teacher_hash FROM rooms") == [""]


def test_a_pin_admits_another_device_once_and_it_gives_up_its_seat(db, room, clock):
    code, teacher = room
    tablet = "teachers-tablet-0004"
    db.join(code, tablet, "me on my tablet")   # the other device opened the students' link first
    assert db.count(code, "ch2", 0) == (0, 1)
    pin = db.new_pin(code, teacher)
    assert len(pin) == R.PIN_DIGITS and pin.isdigit()
    assert pin not in dump(db)   # only its hash is kept
    db.enter_pin(code, tablet, f" {pin[:3]} {pin[3:]} ", member=tablet)
    assert db.is_teacher(code, tablet) and db.is_teacher(code, teacher)
    assert db.count(code, "ch2", 0) == (0, 0) and db.member(code, tablet) is None
    tab = R.new_id()
    assert db.claim(code, tablet, tab, take_over=True)
    db.move(code, tablet, "ch2", 3, tab=tab)
    with pytest.raises(RoomError, match="no live"):   # used up
        db.enter_pin(code, "a-third-device-0005", pin)
    late = db.new_pin(code, tablet)                   # any teacher device may ask for one
    clock.now += R.PIN_TTL_S + 1
    with pytest.raises(RoomError, match="no live"):   # too late
        db.enter_pin(code, "a-third-device-0005", late)
    for typed in ("", "12345", "1234567", "abcdef", None):
        with pytest.raises(RoomError, match="6 digits"):
            db.enter_pin(code, "a-third-device-0005", typed)
    assert not db.is_teacher(code, "a-third-device-0005")


def test_wrong_pins_are_counted_and_void_the_pin(db, room):
    code, teacher = room
    pin = db.new_pin(code, teacher)
    wrong = f"{(int(pin) + 1) % 10 ** R.PIN_DIGITS:06d}"
    said = []
    for n in range(R.MAX_PIN_MISSES):
        with pytest.raises(RoomError, match="wrong PIN") as err:
            db.enter_pin(code, f"guesser-{n:010d}", wrong)   # a new browser each time: the room counts
        said.append(str(err.value))
    assert said[0].startswith(f"wrong PIN: {R.MAX_PIN_MISSES - 1} tries left") and "no longer works" in said[-1]
    with pytest.raises(RoomError, match="no live"):
        db.enter_pin(code, "teachers-tablet-0004", pin)   # the right PIN, too late: it is void
    assert not db.is_teacher(code, "teachers-tablet-0004")
    fresh = db.new_pin(code, teacher)                  # a new PIN starts a new count
    db.enter_pin(code, "teachers-tablet-0004", fresh)
    assert db.is_teacher(code, "teachers-tablet-0004")


def test_codes_are_unguessable_and_links_carry_no_authority(db):
    assert len(set(R.ALPHABET)) == len(R.ALPHABET) == 30 and not set("01OILU") & set(R.ALPHABET)
    assert R.CODE_BITS == R.CODE_LEN * math.log2(30) >= 30 and 6 <= R.CODE_LEN <= 8
    code = db.create("ch2", 0, TEACHER)
    assert len(code) == R.CODE_LEN and set(code) <= set(R.ALPHABET)
    assert student_path(code.lower()) == f"lessons?room={code}"
    stored = column(db, "SELECT teacher_hash FROM teachers WHERE room = ?", code)[0]
    assert TEACHER not in stored and len(stored) == 64


def test_qr_svg_draws_the_link():
    link = "https://example.org/lessons?room=ABCDEFG"
    svg = qr_svg(link)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and "<path" in svg
    qr = segno.make(link, error="m")
    side = (qr.symbol_size(scale=4, border=2))[0]
    assert f'width="{side}"' in svg and qr.error == "M" and qr.version >= 1


def test_versions_reads_every_room_a_server_watches_at_once(db, room, clock):
    code, teacher = room
    other = db.create("ch2", 1, teacher)
    assert db.versions([code, other.lower(), "NOPE", "bad code!"]) == {code: db.version(code), other: db.version(other)}
    v = db.version(code)
    db.move(code, teacher, "ch2", 1)
    assert db.versions([code, other])[code] == v + 1
    clock.now += R.IDLE_S + 1   # nobody used either for a day: the read records the expiry, so the versions move
    before = db.versions([code, other])
    assert before == {code: v + 2, other: db.version(other)} and db.state(other).expired
    assert db.versions([]) == {}
