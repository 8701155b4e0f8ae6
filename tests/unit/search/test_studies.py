"""The studies kept in a storage (explorer/search/studies.py): listed with their facts, the viewer's own
first and another's private one hidden; deleted by their owner only; their trials as CSV."""

from __future__ import annotations

import csv
import io
import math

import optuna
import pytest

from explorer.search import studies
from tests.unit.search.samples import pareto, single


@pytest.fixture
def storage(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'search.db'}"


@pytest.fixture(scope="module")
def kept(tmp_path_factory) -> str:
    """One storage for the tests that only read it (a SQLite study takes seconds to fill on a busy machine)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('studies') / 'search.db'}"
    single(url, "cli-study", trials=8)
    single(url, "mine", owner="me", trials=3)
    single(url, "private", owner="me", trials=2, spec={"task": "pairs", "data": "ab12"})
    pareto(url, "two", trials=6)
    return url


def test_a_storage_that_does_not_exist_lists_nothing_and_is_not_created(tmp_path):
    url = f"sqlite:///{tmp_path / 'none.db'}"
    assert studies.list_studies(storage=url) == []
    assert not (tmp_path / "none.db").exists()
    with pytest.raises(KeyError, match="nothing has been searched"):
        studies.load("x", url)


def test_studies_are_listed_with_their_facts_the_viewers_own_first(kept):
    storage = kept
    listed = studies.list_studies(viewer="me", storage=storage)
    assert {s.name for s in listed[:2]} == {"mine", "private"} and {s.name for s in listed[2:]} == {"cli-study", "two"}
    cli = next(s for s in listed if s.name == "cli-study")
    assert (cli.task, cli.sampler, cli.pruner, cli.owner) == ("reversal-fast", "random", "median", None)
    assert cli.space == ("lr=0.0001:0.01:log", "d_model=16,32", "n_heads=1:4")
    study = studies.load("cli-study", storage)
    states = [t.state.name for t in study.trials]
    assert cli.counts == {s: states.count(s) for s in set(states)} and cli.trials == 8
    assert cli.counts.get("PRUNED", 0) >= 1 and cli.metrics == ("val_exact",)
    assert cli.best == (study.best_value,) and cli.started <= cli.last
    two = next(s for s in listed if s.name == "two")
    assert two.directions == ("maximize", "minimize") and two.metrics == ("val_exact", "params")
    assert two.front == len(studies.load("two", storage).best_trials) >= 1


def test_a_study_on_own_data_is_listed_to_its_owner_only(kept):
    assert "private" in [s.name for s in studies.list_studies(viewer="me", storage=kept)]
    for viewer in ("someone", None):
        assert {s.name for s in studies.list_studies(viewer=viewer, storage=kept)} == {"cli-study", "mine", "two"}
    assert "private" in {s.name for s in studies.list_studies(storage=kept, everyone=True)}   # the server's shell


def test_only_the_owner_deletes_a_study_and_a_cli_study_is_nobodys(storage):
    single(storage, "mine", owner="me", trials=1)
    single(storage, "cli", trials=1)
    with pytest.raises(PermissionError, match="another visitor"):
        studies.delete_study("mine", owner="you", storage=storage)
    with pytest.raises(PermissionError, match="no owner"):
        studies.delete_study("cli", owner="me", storage=storage)
    assert {s.name for s in studies.list_studies(storage=storage)} == {"mine", "cli"}
    studies.delete_study("mine", owner="me", storage=storage)
    assert [s.name for s in studies.list_studies(storage=storage)] == ["cli"]
    with pytest.raises(KeyError, match="no study 'mine'; the studies here: cli"):
        studies.load("mine", storage)


def test_claim_marks_only_a_study_with_no_owner_and_no_trial():
    fresh = optuna.create_study(study_name="fresh")
    studies.claim(fresh, "me")
    assert fresh.user_attrs[studies.OWNER] == "me"
    studies.claim(fresh, "you")                       # owned already: stays the first owner's
    assert fresh.user_attrs[studies.OWNER] == "me"
    cli = single(name="cli", trials=2)
    studies.claim(cli, "me")                          # a CLI study with trials is nobody's to claim
    assert studies.OWNER not in cli.user_attrs


def test_the_trials_csv_holds_params_values_states_seconds_and_runs():
    study = single()
    rows = list(csv.DictReader(io.StringIO(studies.trials_csv(study))))
    assert len(rows) == len(study.trials)
    assert list(rows[0])[:3] == ["number", "state", "val_exact"]
    assert {"lr", "d_model", "n_heads", "seconds", "run", "started", "completed"} <= set(rows[0])
    for row, t in zip(rows, study.trials):
        assert int(row["number"]) == t.number and row["state"] == t.state.name
        assert math.isclose(float(row["lr"]), t.params["lr"])
        if t.state.name == "COMPLETE":
            assert math.isclose(float(row["val_exact"]), t.value) and row["run"] == f"single-t{t.number}"
            assert row["seconds"] == "1.5"
        else:   # a pruned trial keeps its last reported value (Optuna's optimize), and saved no run here
            assert row["val_exact"] == ("" if t.value is None else repr(t.value)) and row["run"] == ""


def test_a_csv_cell_that_would_start_a_formula_is_quoted():
    study = optuna.create_study()
    study.enqueue_trial({"x": 1.0})
    trial = study.ask({"x": optuna.distributions.FloatDistribution(0, 2)})
    trial.set_user_attr("run", "=HYPERLINK(1)")
    study.tell(trial, -0.5)
    row = next(csv.DictReader(io.StringIO(studies.trials_csv(study))))
    assert row["run"] == "'=HYPERLINK(1)" and row["objective 0"] == "-0.5"


def test_best_config_gives_the_best_trials_values_and_settings():
    study = single()
    best = studies.best_config(study)
    assert best["trial"] == study.best_trial.number and best["val_exact"] == study.best_value
    assert best["lr"] == study.best_trial.params["lr"]
    front = studies.best_config(pareto())
    assert {"trial", "val_exact", "params", "d_model", "n_layers"} == set(front)
    assert studies.best_config(optuna.create_study()) == {}


def test_a_two_objective_studys_csv_has_a_column_per_objective():
    study = pareto(trials=3)
    header = studies.trials_csv(study).splitlines()[0].split(",")
    assert header[:4] == ["number", "state", "val_exact", "params"]


def test_a_study_the_search_made_with_two_metrics_is_listed_under_their_names(storage):
    from explorer.search.study import SearchSpec, open_study  # the searching side, as the CLI makes it
    spec = SearchSpec(space=("lr=1e-4:1e-2:log",), metrics=("val_exact", "params:min"), storage=storage,
                      study="two-metrics")
    open_study(spec)
    listed = studies.list_studies(storage=storage)
    assert [(s.name, s.metrics, s.directions) for s in listed] == [
        ("two-metrics", ("val_exact", "params"), ("maximize", "minimize"))]
