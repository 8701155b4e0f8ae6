"""EXPLORER_DATABASE_URL's one reader: the forms it takes, what it refuses (naming the variable, never a
password), and the URL each store falls back to when it is unset."""

import pytest

from explorer.store import database as D


@pytest.mark.parametrize("url", ["postgresql://explorer@db.example:5432/course", "postgresql://u:pw@10.0.0.5/db",
                                 "sqlite:///rooms.sqlite", "sqlite:////srv/x.sqlite"])
def test_the_forms_it_takes(url, monkeypatch):
    monkeypatch.setenv(D.DATABASE_ENV, f"  {url} ")
    assert D.database_url() == url == D.rooms_url() == D.studies_url()


@pytest.mark.parametrize("url", ["http://db/x", "sqlite://", "sqlite:///:memory:", "postgresql://u:s3cret@/db",
                                 "postgresql://u:s3cret@h", "rooms.sqlite", "mysql://u:s3cret@h/db",
                                 "postgresql+psycopg://u:s3cret@h/db"])
def test_what_it_refuses(url, monkeypatch):
    monkeypatch.setenv(D.DATABASE_ENV, url)
    with pytest.raises(D.DatabaseUrlError) as err:
        D.database_url()
    said = str(err.value)
    assert said.startswith(D.DATABASE_ENV) and "postgresql://user@host:port/db" in said and "s3cret" not in said
    assert "\n" not in said


def test_unset_each_store_keeps_its_file_in_the_runs_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path))
    monkeypatch.setenv(D.DATABASE_ENV, "  ")
    assert D.database_url() is None
    assert D.rooms_url() == f"sqlite:///{tmp_path / 'rooms.sqlite'}"
    assert D.studies_url() == f"sqlite:///{tmp_path / 'search.db'}"
    assert D.sqlite_path(D.rooms_url()) == str(tmp_path / "rooms.sqlite") and D.sqlite_path("postgresql://h/d") is None
    assert D.engine_url("postgresql://u@h/d") == "postgresql+psycopg://u@h/d"
