"""`python -m explorer search list` and `search export NAME --out F.csv` as processes: the studies kept in
the runs folder's storage listed, one study's trials written as CSV, and a wrong name or folder refused in
one line with exit status 2."""

from __future__ import annotations

import csv

from explorer.search.study import STORAGE_FILE
from tests.system.helpers import explorer
from tests.unit.search.samples import pareto, single


def test_search_list_and_export_write_a_studys_trials(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    url = f"sqlite:///{runs / STORAGE_FILE}"
    study = single(url, "kept", trials=5)
    pareto(url, "two", trials=3)
    listed = explorer(["search", "list"], runs)
    assert listed.returncode == 0, listed.stderr
    assert {line.split()[0] for line in listed.stdout.splitlines()} == {"kept", "two"}
    out = tmp_path / "kept.csv"
    done = explorer(["search", "export", "kept", "--out", str(out)], runs)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(out.open()))
    assert [int(r["number"]) for r in rows] == [t.number for t in study.trials]
    assert [r["state"] for r in rows] == [t.state.name for t in study.trials]
    assert {"val_exact", "lr", "d_model", "n_heads", "seconds", "run"} <= set(rows[0])


def test_export_refuses_a_missing_study_or_folder_in_one_line(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    single(f"sqlite:///{runs / STORAGE_FILE}", "kept", trials=1)
    for args, says in ((["nope", "--out", str(tmp_path / "x.csv")], "no study 'nope'; the studies here: kept"),
                       (["kept", "--out", str(tmp_path / "no" / "x.csv")], "give a file in a folder that exists")):
        refused = explorer(["search", "export", *args], runs)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and says in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
