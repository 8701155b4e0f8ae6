"""`python -m explorer search` as a researcher drives it, in a process of its own with tiny trials (4 steps):
constraints (built in and the user's) hold in every trial and a bad one exits 2 in one line, enqueued
trials run first with their values, a two-objective study lists its Pareto front as `pareto`, and
`--confirm 3` reports the best configurations with intervals over 3 fresh seeds each."""

import json

from explorer.search.confirm import CONFIRM_SEED
from tests.system.helpers import explorer

SMALL = ["--steps", "4", "--workers", "1", "--sampler", "random", "--json"]


def _search(tmp_path, *argv) -> dict:
    done = explorer(["search", *SMALL, "--storage", f"sqlite:///{tmp_path / 's.db'}", *argv], tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_trial_keeps_the_built_in_and_the_users_constraints_and_a_bad_one_exits_2(tmp_path):
    data = _search(tmp_path, "--trials", "3", "--space", "d_model=8:40", "--space", "d_ff=8:96",
                   "--constraint", "d_ff>=2*d_model", "--constraint", "d_model<=32")
    assert [t["state"] for t in data["trials"]] == ["COMPLETE"] * 3
    for t in data["trials"]:
        d_model, d_ff = t["params"]["d_model"], t["params"]["d_ff"]
        assert d_model % 4 == 0 and d_ff >= 2 * d_model and d_model <= 32   # reversal-fast's recipe: 4 heads
    bad = explorer(["search", "--space", "d_model=16,32", "--constraint", "d_ff>=2*dmodel"], tmp_path / "runs")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert "unknown name 'dmodel'; the numeric fields are d_model" in bad.stderr and not bad.stdout


def test_enqueued_trials_run_first_with_their_values(tmp_path):
    data = _search(tmp_path, "--trials", "3", "--space", "lr=1e-4:1e-2:log", "--space", "d_model=16,32",
                   "--enqueue", "lr=3e-3,d_model=32", "--enqueue", "lr=1e-3,d_model=16")
    first, second, third = data["trials"]
    assert first["params"] == {"lr": 3e-3, "d_model": 32} and second["params"] == {"lr": 1e-3, "d_model": 16}
    assert third["params"] not in (first["params"], second["params"])   # then the sampler's
    assert all(t["state"] == "COMPLETE" and t["run"] for t in data["trials"])


def _dominates(a: dict, b: dict) -> bool:
    """a is no worse than b on both (val_loss and params: lower is better) and better on one."""
    pairs = [(a[k], b[k]) for k in ("val_loss", "params")]
    return all(x <= y for x, y in pairs) and any(x < y for x, y in pairs)


def test_a_two_objective_study_lists_its_pareto_front(tmp_path):
    data = _search(tmp_path, "--trials", "4", "--space", "d_model=16,32,64", "--space", "lr=1e-3:1e-2:log",
                   "--metric", "val_loss", "--metric", "params:min")
    trials = {t["number"]: t for t in data["trials"]}
    assert data["pareto"], data
    for entry in data["pareto"]:
        assert set(entry) == {"number", "params", "values", "run"}
        assert entry["values"] == trials[entry["number"]]["values"] and set(entry["values"]) == {"val_loss", "params"}
        assert entry["params"] == trials[entry["number"]]["params"] and entry["run"]
        assert not any(_dominates(t["values"], entry["values"]) for t in data["trials"])
    off = [t for n, t in trials.items() if n not in {e["number"] for e in data["pareto"]}]
    assert all(any(_dominates(e["values"], t["values"]) or e["values"] == t["values"] for e in data["pareto"])
               for t in off)
    sizes = {t["params"]["d_model"]: t["values"]["params"] for t in data["trials"]}
    assert sorted(sizes.values()) == [sizes[d] for d in sorted(sizes)]   # the parameter count follows the width


def test_confirm_3_reports_the_best_configurations_with_intervals_over_3_seeds(tmp_path):
    data = _search(tmp_path, "--trials", "3", "--space", "lr=1e-3:1e-2:log", "--metric", "val_loss",
                   "--confirm", "3", "--confirm-top", "2")
    confirm = data["confirm"]
    assert [e["rank"] for e in confirm] == [1, 2] and confirm[0]["mean"] <= confirm[1]["mean"]   # lower loss first
    searched = sorted((t for t in data["trials"] if t["state"] == "COMPLETE"), key=lambda t: t["value"])[:2]
    assert {e["trial"] for e in confirm} == {t["number"] for t in searched}
    for e in confirm:
        low, high = e["interval"]
        assert e["n"] == 3 and e["seeds"] == [CONFIRM_SEED + i for i in range(3)] and len(e["values"]) == 3
        assert low < e["mean"] < high and abs(e["mean"] - sum(e["values"]) / 3) < 1e-9
        assert len(e["runs"]) == 3 and all(r.startswith(data["confirm_study"]) for r in e["runs"])
    assert confirm[0]["versus_best"] is None
    assert confirm[1]["versus_best"]["test"] == "Welch's t" and confirm[1]["versus_best"]["n"] == [3, 3]
    assert confirm[1]["verdict"].startswith(("#1 is better than #2", "No difference shown between #1 and #2"))
