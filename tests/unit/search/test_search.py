"""Hyperparameter search: the space refuses bad specs naming the field, and a space whose trials cannot
run against the fixed settings before any trial; a study resumes from its SQLite file and runs only the
missing trials, never repeating a point (each trial's sampler is seeded by its number), nor do two drivers
(these on SQLite and on PostgreSQL: the `storage` fixture); the default storage follows EXPLORER_DATABASE_URL;
a failing trial is recorded as failed while the study goes on, and a study whose trials all failed fails;
the pruner stops a trial worse than its peers, trials are saved as resumable runs, the slot pool gates
the app's trials, and the CLI keeps its JSON contract, its one-line errors and its --set.

Tiny: reversal-fast, 6 steps, 20 validation examples. val_loss is the objective where results
are compared, as it differs between any two trials (exact match is 0 for all of them this early).
"""

import io
import json
import math
import socket
import sys
from contextlib import redirect_stderr, redirect_stdout

import optuna
import pytest

from explorer import cli
from explorer.jobs import budget
from explorer.jobs.slots import _SlotPool
from explorer.search import PooledExecutor, SearchSpec, SerialExecutor, open_study, parse_space, run_search
from explorer.search.driver import trial_spec
from explorer.search.ray_cluster import RayUnavailable, connect
from explorer.search.study import INTERRUPTED, counts
from explorer.search.trial import PRUNED, run_trial
from explorer.store import runs

TINY = dict(task="reversal-fast", steps=6, eval_examples=20, metric="val_loss")


def tiny(**kw) -> SearchSpec:
    return SearchSpec(**{**TINY, "space": ("lr=1e-3:1e-2:log", "d_model=16,32"), "trials": 2, **kw})


@pytest.mark.parametrize(("spec", "named", "says"), [
    ("lr=a:b", "lr", "not a number"),
    ("colour=1,2", "colour", "unknown field"),
    ("d_model=", "d_model", "no choices"),
    ("d_model= , ", "d_model", "no choices"),
    ("lr=1e-2:1e-3", "lr", "empty"),
    ("lr=0:1e-2:log", "lr", "out of range"),
    ("norm=pre,sideways", "norm", "sideways"),
    ("pos_encoding=1:2", "pos_encoding", "list choices"),
    ("dropout=0:1.5", "dropout", "out of range"),
    ("n_heads=2.5,4", "n_heads", "whole number"),
    ("d_model=16,16", "d_model", "twice"),
    ("lr", "lr", "field=LOW:HIGH"),
])
def test_a_bad_space_is_refused_with_the_field_named(spec, named, says):
    with pytest.raises(ValueError) as err:
        parse_space([spec])
    assert named in str(err.value) and says in str(err.value)


def test_a_space_parses_ranges_and_choices():
    space = parse_space(["lr=1e-4:1e-2:log", "d_model=16, 32,64", "norm=pre,post"])
    assert (space["lr"].low, space["lr"].high, space["lr"].log) == (1e-4, 1e-2, True)
    assert space["d_model"].choices == (16, 32, 64) and space["norm"].choices == ("pre", "post")
    with pytest.raises(ValueError, match="lr is a range"):
        SearchSpec(space=("lr=1e-4:1e-2", "d_model=16,32"), sampler="grid")


def test_the_residuals_and_the_attention_scale_can_be_searched_or_fixed():
    from explorer.search.trial import configs

    spec = SearchSpec(space=("residual=add,none", "attn_scale=sqrt_d_k,none"), base={"residual": "none"})
    _, cfg, _ = configs(trial_spec(spec, 0, {"attn_scale": "none"}, [], None))
    assert (cfg.residual, cfg.attn_scale) == ("none", "none")
    with pytest.raises(ValueError, match="residual: off not known; choose from add, none"):
        parse_space(["residual=add,off"])


def test_a_study_resumes_from_its_storage_and_runs_only_the_missing_trials(storage):
    first = run_search(tiny(storage=storage, sampler="random"))
    assert [t["state"] for t in first["trials"]] == ["COMPLETE", "COMPLETE"]
    again = run_search(tiny(storage=storage, sampler="random", trials=3))
    assert len(again["trials"]) == 3 and again["trials"][:2] == first["trials"]  # untouched, not rerun
    assert again["trials"][2]["state"] == "COMPLETE" and again["study"] == first["study"]
    done = run_search(tiny(storage=storage, sampler="random", trials=3))
    assert done["trials"] == again["trials"]   # it holds 3 finished trials: nothing more runs


def test_a_resumed_study_never_repeats_a_point_and_runs_as_one_run_would(tmp_path):
    resumed = tiny(storage=f"sqlite:///{tmp_path / 'resumed.db'}", sampler="random", trials=3)
    run_search(resumed)
    points = [t["params"] for t in run_search(resumed.replace(trials=6))["trials"]]
    assert len({p["lr"] for p in points}) == 6
    at_once = run_search(tiny(storage="memory", sampler="random", trials=6, keep_runs=False))
    assert [t["params"] for t in at_once["trials"]] == points   # the same study run the same way


def test_tpe_resumed_does_not_repeat_its_random_start(tmp_path):
    spec = tiny(storage=f"sqlite:///{tmp_path / 'tpe.db'}", trials=2, keep_runs=False)
    run_search(spec)
    lrs = [t["params"]["lr"] for t in run_search(spec.replace(trials=4))["trials"]]
    assert len(set(lrs)) == 4


def test_two_drivers_on_one_study_propose_different_points(storage):
    import threading

    spec = tiny(storage=storage, sampler="random", trials=4, steps=2, keep_runs=False)
    open_study(spec)
    drivers = [threading.Thread(target=run_search, args=(spec,)) for _ in range(2)]
    for d in drivers:
        d.start()
    for d in drivers:
        d.join(120)
    trials = open_study(spec).get_trials()
    assert len(trials) == 4 and len({t.params["lr"] for t in trials}) == 4
    assert len({t.user_attrs["driver"] for t in trials}) == 1   # one host:pid, two drivers (threads)


@pytest.mark.parametrize(("kw", "says"), [
    (dict(space=("d_model=7",)), "d_model=7 (with n_heads=4, pos_encoding=sinusoidal), which cannot run: "
                                  "d_model=7 is not divisible by n_heads=4"),
    (dict(space=("n_heads=3,4",), base={"d_model": 16}), "n_heads=3 (with d_model=16"),
    (dict(space=("pos_encoding=rope", "d_model=16,24"), base={"n_heads": 8}), "d_model=24, pos_encoding=rope"),
    (dict(space=("lr=1e-3:1e-2",), base={"d_model": 30, "n_heads": 4}), "the fixed settings d_model=30, n_heads=4"),
    (dict(space=("lr=1e-3:1e-2",), steps=0), "steps=0 must be a whole number >= 1"),
    (dict(space=("batch_size=0:8",)), "batch_size: 0 is out of range"),
])
def test_a_space_that_cannot_run_is_refused_before_any_trial(kw, says):
    with pytest.raises(ValueError) as err:
        SearchSpec(**{**TINY, "storage": "memory", **kw})
    assert says in str(err.value)


def test_a_space_that_can_run_passes_whatever_its_widths():
    SearchSpec(**TINY, space=("d_model=16,24", "n_heads=1,2,4,8"), base={})
    SearchSpec(**TINY, space=("d_model=8:100000",), base={"n_heads": 1})   # one head fits any width, at once
    SearchSpec(**TINY, space=("pos_encoding=rope,none", "d_model=16,32"), base={"n_heads": 4})


def test_a_study_whose_trials_all_fail_fails_with_the_first_reason():
    spec = SearchSpec(**TINY, space=("lr=1e6,1e8",), trials=2, sampler="grid", storage="memory", keep_runs=False)
    out = run_search(spec)
    first = out["trials"][0]
    assert [t["state"] for t in out["trials"]] == ["FAIL", "FAIL"] and "diverged" in first["error"]
    assert out["failure"] == f"all 2 trials failed; trial 0: {first['error']}"
    assert run_search(tiny(storage="memory", keep_runs=False))["failure"] is None


def test_a_trial_left_running_by_a_dead_driver_is_run_again(storage):
    spec = tiny(storage=storage, trials=1)
    study = open_study(spec)
    orphan = study.ask()   # as if the driver had crashed mid-trial
    orphan.set_user_attr("driver", f"{socket.gethostname()}:999999999")
    out = run_search(spec)
    assert [t["state"] for t in out["trials"]] == ["INTERRUPTED", "COMPLETE"]
    assert counts(open_study(spec)) == (1, 0)


def test_a_study_made_for_another_search_is_refused(storage):
    open_study(tiny(storage=storage, study="mine"))
    with pytest.raises(ValueError, match="another search.*space"):
        open_study(tiny(storage=storage, study="mine", space=("lr=1e-3:1e-1:log",)))


def test_a_failing_trial_is_recorded_as_failed_and_the_study_goes_on():
    # the sweep's study, which runs an impossible cell to report it (a search refuses the space instead)
    spec = SearchSpec(**TINY, space=("n_heads=3,4",), trials=2, sampler="grid", storage="memory",
                      base={"d_model": 16, "n_layers": 1}, refuse_invalid=False)
    out = run_search(spec)
    by_heads = {t["params"]["n_heads"]: t for t in out["trials"]}
    assert by_heads[3]["state"] == "FAIL" and "n_heads" in by_heads[3]["error"]   # 16 is not divisible by 3
    assert by_heads[4]["state"] == "COMPLETE" and out["best"]["params"] == {"n_heads": 4}


def _peer(value: float, steps) -> optuna.trial.FrozenTrial:
    """A finished trial as the driver sends it: its reports, and the halving pruner's rungs passed."""
    return optuna.trial.create_trial(state=optuna.trial.TrialState.COMPLETE, value=value, params={},
                                     distributions={}, intermediate_values={s: value for s in steps},
                                     system_attrs={f"completed_rung_{r}": value for r in range(4)})


@pytest.mark.parametrize("pruner", ["median", "halving"])
def test_a_trial_worse_than_its_peers_at_a_report_is_pruned(pruner):
    spec = trial_spec(tiny(pruner=pruner, steps=16), 0, {"lr": 3e-3, "d_model": 16}, [], None)
    peers = [_peer(0.01, range(1, 17)) for _ in range(3)]  # a loss no 16-step run gets near
    out = run_trial({**spec, "peers": peers})
    assert out["state"] == PRUNED and len(out["reports"]) == 1 and out["value"] > 0.01
    free = run_trial(spec)  # no peers: nothing to compare with, it runs to the end
    assert free["state"] == "COMPLETE" and free["reports"][-1][0] == 16
    assert free["reports"][0] == out["reports"][0]   # the same trial, up to where it was pruned


def test_every_trial_is_saved_as_a_resumable_run_of_its_owner():
    out = run_search(tiny(storage="memory"), owner="visitor-1")
    best = out["best"]
    info = next(r for r in runs.list_runs() if r.name == best["run"])
    assert info.owner == "visitor-1" and info.steps == 6 and info.train["lr"] == best["params"]["lr"]
    assert info.model["d_model"] == best["params"]["d_model"]
    _, _, cfg, state, _ = runs.open_for_resume(best["run"])
    assert state.step == cfg.steps == 6 and len(state.history) == 6


def test_the_pooled_executor_starts_a_trial_only_in_a_free_slot(monkeypatch):
    import explorer.jobs.slots as slots

    monkeypatch.setattr(slots, "MAX_CONCURRENT_JOBS", 1)
    pool = _SlotPool()

    class Holder:
        def _granted(self):
            pass

    other = Holder()
    pool.enqueue(other)                    # a training run holds the only slot
    executor = PooledExecutor(SerialExecutor(), pool)
    assert not executor.ready() and executor.queued() == 1
    pool.release(other)
    assert executor.ready()
    assert executor.submit(abs, -3).result() == 3
    assert pool.counts() == (0, 0)         # the trial gave its slot back
    pool.enqueue(Holder())
    with pytest.raises(RuntimeError, match="holds no slot"):
        PooledExecutor(SerialExecutor(), pool).submit(abs, 1)


def test_an_unanswering_ray_address_fails_naming_it():
    with socket.socket() as s:   # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RayUnavailable, match=f"127.0.0.1:{port}"):
        connect(f"127.0.0.1:{port}")
    with pytest.raises(RayUnavailable, match="HOST:PORT"):
        connect("nowhere")


def test_without_ray_the_message_says_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)   # import ray now raises ImportError
    with pytest.raises(RayUnavailable, match="pip install ray"):
        connect("127.0.0.1:6379")


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["search", *argv])
    return code, out.getvalue(), err.getvalue()


def test_the_cli_prints_the_json_contract(tmp_path):
    code, out, err = _cli("--trials", "2", "--space", "lr=1e-3:1e-2:log", "--space", "d_model=16,32", "--steps",
                          "6", "--workers", "1", "--metric", "val_loss", "--json",
                          "--storage", f"sqlite:///{tmp_path / 's.db'}")
    assert code == 0 and "2/2 trials" in err
    data = json.loads(out)
    host, _, pid = data["driver"].rpartition(":")
    assert host == socket.gethostname() and pid.isdigit()
    assert [t["number"] for t in data["trials"]] == [0, 1]
    for t in data["trials"]:
        assert {"number", "params", "value", "state", "worker", "seconds"} <= set(t)
        assert t["state"] == "COMPLETE" and t["worker"] == data["driver"] and t["seconds"] > 0
        assert set(t["params"]) == {"lr", "d_model"}
    assert set(data["best"]) >= {"params", "value", "run"}
    assert data["best"]["value"] == min(t["value"] for t in data["trials"])   # val_loss: lower is better
    assert runs.run_folder(data["best"]["run"]).is_dir()


@pytest.mark.parametrize(("argv", "says"), [
    (["--space", "lr=a:b"], "lr: 'a' is not a number"),
    (["--space", "colour=1"], "unknown field 'colour'"),
    (["--space", "d_model="], "d_model: no choices"),
    (["--space", "lr=1e-3:1e-2", "--workers", "0"], "--workers 0"),
    (["--space", "lr=1e-3:1e-2", "--ray", "nowhere"], "Ray address 'nowhere'"),
    (["--space", "d_model=7"], "d_model=7 (with n_heads=4, pos_encoding=sinusoidal), which cannot run"),
    (["--space", "lr=1e-3:1e-2", "--steps", "0"], "steps=0 must be a whole number >= 1"),
    (["--space", "lr=1e-3:1e-2", "--set", "n_heads=3"], "the fixed settings d_model=32, n_heads=3"),
    (["--space", "lr=1e-3:1e-2", "--set", "warmup=a"], "--set warmup: 'a' is not a whole number"),
    (["--space", "lr=1e-3:1e-2", "--set", "norm=sideways"], "--set norm: 'sideways' not known"),
    (["--space", "lr=1e-3:1e-2", "--set", "colour=1"], "FIELD one of d_model"),
    (["--space", "lr=1e-3:1e-2", "--set", "lr=0.1"], "lr is searched"),
    (["--space", "lr=1e-3:1e-2", "--set", "steps=5"], "give --steps instead"),
])
def test_the_cli_refuses_bad_input_in_one_line_with_status_2(argv, says):
    code, out, err = _cli(*argv)
    assert code == 2 and says in err and err.count("\n") == 1 and "Traceback" not in err and not out


def test_the_cli_refuses_a_bad_database_url_in_one_line_with_status_2(monkeypatch):
    monkeypatch.setenv("EXPLORER_DATABASE_URL", "postgresql://ann:hunter2@/nodb")
    code, out, err = _cli("--space", "lr=1e-3:1e-2")
    assert code == 2 and err.count("\n") == 1 and "EXPLORER_DATABASE_URL" in err and "hunter2" not in err
    assert "Traceback" not in err and not out


def test_set_fixes_the_settings_of_every_trial_and_the_recipe_the_rest(tmp_path):
    code, out, _ = _cli("--trials", "1", "--space", "lr=1e-3:1e-2:log", "--steps", "6", "--workers", "1", "--json",
                        "--set", "n_heads=2", "--set", "warmup=3", "--set", "norm=post",
                        "--storage", f"sqlite:///{tmp_path / 's.db'}")
    assert code == 0
    name = json.loads(out)["best"]["run"]
    run = next(r for r in runs.list_runs() if r.name == name)
    assert (run.model["n_heads"], run.model["norm"], run.train["warmup"]) == (2, "post", 3)
    assert (run.model["d_model"], run.train["batch_size"]) == (32, 64)   # reversal-fast's recipe


def test_a_study_whose_trials_all_fail_exits_1_naming_the_first_reason(tmp_path):
    code, out, err = _cli("--trials", "1", "--space", "lr=1e8,1e9", "--steps", "6", "--workers", "1", "--sampler",
                          "grid", "--storage", f"sqlite:///{tmp_path / 's.db'}")
    assert code == 1 and "FAIL" in out
    assert err.splitlines()[-1].startswith("search: all 1 trial failed; trial 0: diverged")


def test_an_interrupted_trial_is_not_a_finished_one():
    spec = tiny(storage="memory", trials=1)
    study = open_study(spec)
    trial = study.ask()
    trial.set_user_attr(INTERRUPTED, True)
    study.tell(trial, state=optuna.trial.TrialState.FAIL)
    assert counts(study) == (0, 0)


def test_a_stop_keeps_the_finished_trials_and_a_resume_runs_the_rest(tmp_path):
    import threading

    spec = tiny(storage=f"sqlite:///{tmp_path / 'study.db'}", trials=3)
    stop = threading.Event()
    out = run_search(spec, on_record=lambda study: stop.set() if counts(study)[0] >= 1 else None, stop=stop)
    assert out["stopped"] and [t["state"] for t in out["trials"]] == ["COMPLETE"]
    again = run_search(spec)
    assert not again["stopped"] and again["trials"][0] == out["trials"][0]
    assert [t["state"] for t in again["trials"]] == ["COMPLETE"] * 3


def test_a_stop_ends_a_running_trial_after_its_step_and_it_does_not_count(monkeypatch):
    import threading

    monkeypatch.setattr(budget, "MAX_RUN_SECONDS", math.inf)   # a trial of hours, checked like any: let it start
    spec = tiny(storage="memory", trials=1, steps=100_000)   # hours, were it not stopped
    stop = threading.Event()
    threading.Timer(1.0, stop.set).start()
    out = run_search(spec, stop=stop)
    assert out["stopped"] and [t["state"] for t in out["trials"]] == ["INTERRUPTED"]
    assert out["trials"][0]["run"] is None and out["best"] is None


def test_the_default_storage_follows_the_database_url_or_says_why_not(tmp_path, monkeypatch, postgres_url):
    from explorer.search.study import default_storage

    assert default_storage() == f"sqlite:///{runs.runs_dir() / 'search.db'}"   # unset: the runs folder's file
    monkeypatch.setenv("EXPLORER_DATABASE_URL", postgres_url)
    assert default_storage() == postgres_url
    study = open_study(tiny())   # storage None: the shared database
    assert study.study_name in optuna.get_all_study_names(postgres_url.replace("postgresql:", "postgresql+psycopg:"))
    from explorer.rooms import Rooms
    rooms = Rooms()   # the rooms beside the studies, in the same database
    assert rooms.url == postgres_url and rooms.state(rooms.create("ch2", 0, "teachers-owner-id-0001")) is not None
    rooms.close()
    monkeypatch.setenv("EXPLORER_DATABASE_URL", "postgres://ann:hunter2@db")
    with pytest.raises(ValueError, match="EXPLORER_DATABASE_URL.*postgresql://user@host:port/db") as err:
        open_study(tiny())
    assert "hunter2" not in str(err.value)


def test_drivers_on_postgresql_wait_for_the_right_to_ask_held_on_another_host(postgres_url):
    import threading
    import time

    import psycopg

    from explorer.search.driver import ASK_LOCK

    spec = tiny(storage=postgres_url, sampler="random", trials=1, keep_runs=False)
    open_study(spec)
    with psycopg.connect(postgres_url, autocommit=True) as other:   # another server's driver, counting and asking
        other.execute("SELECT pg_advisory_lock(%s)", (ASK_LOCK,))
        driver = threading.Thread(target=run_search, args=(spec,))
        driver.start()
        deadline = time.monotonic() + 120
        while not other.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                                ).fetchone()[0]:
            assert time.monotonic() < deadline, "the driver never asked for the lock"
            time.sleep(0.05)
        assert open_study(spec).get_trials() == []   # waiting: nothing asked while the other holds it
        other.execute("SELECT pg_advisory_unlock(%s)", (ASK_LOCK,))
        driver.join(120)
    assert [t.state for t in open_study(spec).get_trials()] == [optuna.trial.TrialState.COMPLETE]
