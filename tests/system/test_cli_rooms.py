"""`python -m explorer rooms list` and `rooms export CODE --out FILE.csv` on a runs folder with one room."""

import csv

import pytest

from explorer.cli import main
from explorer.rooms import Rooms
from explorer.store.database import DATABASE_ENV
from tests.unit.rooms.samples import TEACHER, seat


@pytest.fixture
def room(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path))
    rooms = Rooms(tmp_path / "rooms.sqlite")
    code = rooms.create("ch2", 0, TEACHER)
    for n, name in enumerate(["Ada", "Bo"]):
        rooms.join(code, seat(n), name)
    rooms.predict(code, seat(0), "ch2", 0, 1)
    rooms.reveal(code, TEACHER, "ch2", 0)
    rooms.end(code, TEACHER)
    rooms.close()
    return code


def test_export_writes_every_students_answer_after_the_room_ended(room, tmp_path, capsys):
    out = tmp_path / "class.csv"
    assert main(["rooms", "export", room.lower(), "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [(r["step"], r["nickname"], r["correct"]) for r in rows] == [("1", "Ada", "yes"), ("1", "Bo", "")]
    assert rows[0]["prediction"] == "the same vectors, shuffled the same way" and rows[0]["locked_at"]
    assert "2 rows, 2 students, 1 questions" in capsys.readouterr().out
    page = tmp_path / "class.html"
    assert main(["rooms", "export", room, "--out", str(page)]) == 0
    assert "Ada" in page.read_text() and "1 of 1 right" in page.read_text()
    assert main(["rooms", "list"]) == 0
    listed = capsys.readouterr().out
    assert room in listed and "ended" in listed and "2 students, 1 locked answers" in listed


@pytest.mark.parametrize("args, message", [
    (["rooms", "export", "ZZZZZZZ", "--out", "x.csv"], "there is no room ZZZZZZZ"),
    (["rooms", "export", "nope", "--out", "x.csv"], "is not a room code"),
    (["rooms", "export", "{code}", "--out", "x.txt"], "must end in .csv or .html"),
    (["rooms", "export", "{code}", "--out", "/no/such/folder/x.csv"], "its folder does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(room, args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([a.format(code=room) for a in args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "x.csv").exists()


def test_a_server_without_rooms_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path))
    assert main(["rooms", "list"]) == 2
    assert "no rooms on this server" in capsys.readouterr().err and not (tmp_path / "rooms.sqlite").exists()


def test_the_rooms_of_a_shared_database_and_a_bad_url(postgres_url, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "no-rooms-file"))   # the database holds them
    monkeypatch.setenv(DATABASE_ENV, postgres_url)
    rooms = Rooms()
    code = rooms.create("ch2", 0, TEACHER)
    rooms.join(code, seat(0), "Ada")
    rooms.close()
    assert main(["rooms", "list"]) == 0
    assert code in capsys.readouterr().out and not (tmp_path / "no-rooms-file" / "rooms.sqlite").exists()
    monkeypatch.setenv(DATABASE_ENV, "mysql://root:hunter2@db/x")
    assert main(["rooms", "list"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and DATABASE_ENV in err and "postgresql://" in err
    assert "hunter2" not in err and "Traceback" not in err
