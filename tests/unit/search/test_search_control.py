"""Search control without training: constraints (the grammar, the built-in ones, every sampler proposing
only feasible points), enqueued trials asked first with their values and checked against the space, the
caps and the constraints, a multi-objective study's Pareto front, and the confirmation's ranking and
intervals from given reruns. Trials here are asked and told by hand: nothing trains."""

import io
import math
from contextlib import redirect_stderr, redirect_stdout

import pytest

from explorer import cli
from explorer.cli.search import _confirm_table
from explorer.search import SearchSpec, open_study
from explorer.search.confirm import CONFIRM_SEED, best_configurations, confirm_spec, summarise
from explorer.search.constraints import parse_constraint
from explorer.search.space import suggest
from explorer.search.study import best, pareto, trial_rows

TINY = dict(task="reversal-fast", steps=6, eval_examples=20, storage="memory", keep_runs=False)


def _asked(spec: SearchSpec, n: int) -> list[dict]:
    """The params of the study's first `n` trials, each told a value made from its params."""
    study, dims, out = open_study(spec), spec.dims(), []
    for _ in range(n):
        trial = study.ask()
        params = suggest(trial, dims)
        out.append(params)
        study.tell(trial, [float(len(out))] * len(spec.objectives()) if spec.metrics else float(len(out)))
    return out


@pytest.mark.parametrize(("text", "values", "holds"), [
    ("d_ff>=2*d_model", {"d_ff": 64, "d_model": 32}, True),
    ("d_ff >= 2 * d_model", {"d_ff": 63, "d_model": 32}, False),
    ("lr*batch_size<=0.5", {"lr": 1e-2, "batch_size": 64}, False),
    ("(d_model - 8) / n_heads == 6", {"d_model": 32, "n_heads": 4}, True),
    ("-n_layers < -1", {"n_layers": 2}, True),
    ("d_model != 1.5e1", {"d_model": 16}, True),
])
def test_a_constraint_is_read_by_its_grammar(text, values, holds):
    assert parse_constraint(text).holds(values) is holds


@pytest.mark.parametrize(("text", "says"), [
    ("", "empty"),
    ("d_ff>=", "a number or a field name is missing"),
    ("d_ff", "a comparison is missing"),
    ("d_ff>=2**d_model", "'*' is out of place"),
    ("d_ff>=2*(d_model", "a bracket is not closed"),
    ("x>1", "unknown name 'x'; the numeric fields are d_model"),
    ("pos_encoding>1", "unknown name 'pos_encoding'"),
    ("__import__('os').system('true')>1", "cannot read"),
    ("__import__>1", "unknown name '__import__'"),
    ("d_model>1>0", "one comparison only"),
    ("1<2", "it names no field"),
    ("d_model; 1", "cannot read"),
])
def test_a_bad_constraint_names_what_is_wrong_and_the_grammar(text, says):
    with pytest.raises(ValueError) as err:
        parse_constraint(text)
    assert says in str(err.value) and "e.g. d_ff>=2*d_model" in str(err.value)


@pytest.mark.parametrize("sampler", ["random", "tpe"])
def test_heads_divide_d_model_in_every_proposed_point(sampler):
    spec = SearchSpec(**TINY, space=("d_model=16:64", "n_heads=2,3,4"), trials=30, sampler=sampler)
    points = _asked(spec, 30)
    assert all(p["d_model"] % p["n_heads"] == 0 for p in points)
    assert len({p["d_model"] for p in points}) > 5          # the range is explored, not a few safe widths
    assert points == _asked(spec, 30)                       # and proposed the same way every time


def test_the_grid_leaves_out_the_combinations_that_cannot_train():
    spec = SearchSpec(**TINY, space=("d_model=16,24,32", "n_heads=2,3,4", "d_ff=32,64"), trials=9, sampler="grid",
                      constraints=("d_ff>=2*d_model",))
    points = _asked(spec, 9)
    feasible = {(d, h, f) for d in (16, 24, 32) for h in (2, 3, 4) for f in (32, 64) if d % h == 0 and f >= 2 * d}
    assert {(p["d_model"], p["n_heads"], p["d_ff"]) for p in points} == feasible and len(feasible) == 9


def test_d_ff_stays_at_least_d_model_when_both_are_searched_and_a_user_constraint_holds():
    spec = SearchSpec(**TINY, space=("d_model=16:64", "d_ff=16:128", "lr=1e-4:1e-2:log"), trials=20,
                      sampler="random", base={"n_heads": 1}, constraints=("lr*d_model<=0.2",))
    for p in _asked(spec, 20):
        assert p["d_ff"] >= p["d_model"] and p["lr"] * p["d_model"] <= 0.2


@pytest.mark.parametrize(("kw", "says"), [
    (dict(space=("d_model=16,32", "d_ff=16,32"), constraints=("d_ff>=4*d_model",)),
     "the space can give d_model=16, but no point with it may train: it breaks d_ff>=4*d_model"),
    (dict(space=("d_model=16:24", "lr=1e-3:1e-2"), constraints=("d_model>=100",)),
     "no point of the space satisfies the constraints (d_model>=100)"),
    (dict(space=("n_heads=3,5",), base={"d_model": 16}), "n_heads=3 (with d_model=16"),
    (dict(space=("lr=1e-3:1e-2",), constraints=("d_model>=16",)), "names no searched field"),
    (dict(space=("lr=1e-3:1e-2",), metrics=("val_loss", "params:min"), pruner="median"), "cannot prune"),
    (dict(space=("lr=1e-3:1e-2",), metrics=("accuracy",)), "metric 'accuracy' is not known"),
    (dict(space=("lr=1e-3:1e-2",), metrics=("params:least",)), "must be :min or :max"),
])
def test_a_space_no_point_of_which_may_train_is_refused(kw, says):
    with pytest.raises(ValueError) as err:
        SearchSpec(**{**TINY, **kw})
    assert says in str(err.value)


def test_enqueued_trials_are_asked_first_with_their_values():
    spec = SearchSpec(**TINY, space=("lr=1e-4:1e-2:log", "d_model=16,32,64"), trials=4, sampler="random",
                      enqueue=("lr=3e-3,d_model=32", "d_model=64", {"lr": 1e-3, "d_model": 16}))
    points = _asked(spec, 4)
    assert points[0] == {"lr": 3e-3, "d_model": 32} and points[2] == {"lr": 1e-3, "d_model": 16}
    assert points[1]["d_model"] == 64 and 1e-4 <= points[1]["lr"] <= 1e-2   # the rest drawn by the sampler
    study = open_study(spec.replace(storage="memory"))
    assert sum(t.state.name == "WAITING" for t in study.get_trials()) == 3   # each once, however often opened


@pytest.mark.parametrize(("item", "says"), [
    ("lr=3e-3,d_model=48", "d_model=48 is not one of the space's choices (16, 32, 64)"),
    ("lr=0.5", "lr=0.5 is outside the space's range 0.0001..0.01"),
    ("d_ff=64", "d_ff is not searched; give fields of the space: lr, d_model"),
    ("lr", "'lr' must read FIELD=VALUE"),
    ("lr=abc", "lr: 'abc' is not a number"),
    ("lr=1e-3,lr=2e-3", "given twice"),
    ("", "enqueue: empty"),
])
def test_a_bad_enqueued_trial_names_what_is_wrong(item, says):
    with pytest.raises(ValueError) as err:
        SearchSpec(**TINY, space=("lr=1e-4:1e-2:log", "d_model=16,32,64"), enqueue=(item,))
    assert says in str(err.value)


def test_an_enqueued_trial_keeps_to_the_caps_and_the_constraints():
    with pytest.raises(ValueError, match="d_model=1,024 is over the limit"):
        SearchSpec(**TINY, space=("d_model=16:2048",), base={"n_heads": 1}, enqueue=("d_model=1024",))
    with pytest.raises(ValueError, match="may not train: n_heads=3 does not divide d_model=32"):
        SearchSpec(**TINY, space=("d_model=24,32", "n_heads=3,4"), enqueue=("d_model=32,n_heads=3",))
    with pytest.raises(ValueError, match="may not train: it breaks d_ff>=2\\*d_model"):
        SearchSpec(**TINY, space=("d_model=16,32", "d_ff=32,64"), constraints=("d_ff>=2*d_model",),
                   enqueue=("d_model=32,d_ff=32",))


def test_a_two_objective_study_keeps_its_pareto_front():
    spec = SearchSpec(**TINY, space=("d_model=16,32,64",), trials=4, sampler="grid",
                      metrics=("val_exact", "params:min"))
    study = open_study(spec)
    told = [(0.5, 100.0), (0.9, 300.0), (0.4, 200.0), (0.9, 400.0)]   # 2 and 3 are dominated
    for exact, params in told:
        trial = study.ask()
        suggest(trial, spec.dims())
        study.tell(trial, [exact, params])
    front = pareto(study)
    assert [(t["number"], t["values"]) for t in front] == [(0, {"val_exact": 0.5, "params": 100.0}),
                                                           (1, {"val_exact": 0.9, "params": 300.0})]
    assert set(front[0]) == {"number", "params", "values", "run"}
    assert best(study)["number"] == 1 and best(study)["values"] == {"val_exact": 0.9, "params": 300.0}
    assert trial_rows(study)[3]["values"] == {"val_exact": 0.9, "params": 400.0}


def test_the_confirmation_reruns_the_best_distinct_configurations_on_fresh_seeds():
    spec = SearchSpec(**TINY, space=("lr=1e-3:1e-2:log",), trials=3, metric="val_loss")
    study = open_study(spec)
    for value in (2.0, 1.0, 1.5):
        trial = study.ask()
        suggest(trial, spec.dims())
        study.tell(trial, value)
    picks = best_configurations(study, 2)
    assert [p["number"] for p in picks] == [1, 2]           # val_loss: lower first
    rerun = confirm_spec(spec, picks, 3)
    assert rerun.trials == 6 and [e["seed"] for e in rerun.enqueue[:3]] == [CONFIRM_SEED + i for i in range(3)]
    assert rerun.study_name().startswith(spec.study_name() + "-confirm-")


def _row(lr, seed, value, n=0):
    return {"number": n, "params": {"lr": lr, "seed": seed}, "value": value, "state": "COMPLETE", "run": f"r{n}"}


def test_the_confirmation_ranks_by_the_mean_with_intervals_and_welch_against_the_best():
    picks = [{"number": 4, "params": {"lr": 1e-3}, "value": 0.99}, {"number": 7, "params": {"lr": 2e-3}, "value": 0.9}]
    rows = ([_row(1e-3, s, v) for s, v in zip(range(3), (0.50, 0.52, 0.48))]
            + [_row(2e-3, s, v) for s, v in zip(range(3), (0.90, 0.91, 0.89))])
    first, second = summarise(picks, rows, [("val_exact", "maximize")])
    assert (first["trial"], first["rank"], second["trial"], second["rank"]) == (7, 1, 4, 2)   # the reruns decide
    assert first["n"] == 3 and first["seeds"] == [0, 1, 2] and math.isclose(first["mean"], 0.9)
    low, high = first["interval"]
    assert low < 0.9 < high and high - low < 0.1
    assert second["versus_best"]["holds"] is True and second["versus_best"]["test"] == "Welch's t"
    assert second["versus_best"]["claim"] == ("configuration #1 (trial 7) has a higher val_exact than "
                                              "configuration #2 (trial 4)")
    assert second["verdict"].startswith("#1 is better than #2 (difference 40.0 points, 95% CI [")


@pytest.mark.parametrize(("spread", "says"), [
    (0.001, "No meaningful difference between #1 and #2: 90% CI"),   # within the 2-point margin
    (0.05, "No difference shown between #1 and #2"),                  # too noisy to say either
])
def test_the_confirmation_says_no_meaningful_difference_only_within_the_margin(spread, says):
    picks = [{"number": 4, "params": {"lr": 1e-3}, "value": 0.9}, {"number": 7, "params": {"lr": 2e-3}, "value": 0.9}]
    rows = ([_row(1e-3, s, 0.900 + d * spread) for s, d in zip(range(4), (1, -1, 0.5, -0.5))]
            + [_row(2e-3, s, 0.901 + d * spread) for s, d in zip(range(4), (-1, 1, -0.5, 0.5))])
    second = summarise(picks, rows, [("val_exact", "maximize")])[1]
    assert second["verdict"].startswith(says), second["verdict"]
    assert second["versus_best"]["margin"] == 0.02 and second["versus_best"]["equivalent"] is (spread < 0.01)
    if spread < 0.01:
        assert "within the ±2.0 points margin" in second["verdict"]


def test_a_two_objective_confirmation_picks_by_pareto_rank_and_ranks_the_means_so():
    spec = SearchSpec(**TINY, space=("d_model=16,32,64,128",), trials=4, sampler="grid",
                      metrics=("val_exact", "params:min"))
    study = open_study(spec)
    for exact, params in [(0.5, 100.0), (0.9, 300.0), (0.6, 500.0), (0.95, 900.0)]:   # 2 is dominated by 1
        trial = study.ask()
        suggest(trial, spec.dims())
        study.tell(trial, [exact, params])
    assert [p["number"] for p in best_configurations(study, 3)] == [3, 1, 0]   # the front, by val_exact
    assert [p["number"] for p in best_configurations(study, 4)] == [3, 1, 0, 2]
    picks = [{"number": n, "params": {"lr": lr}, "value": 0.9} for n, lr in ((1, 1e-3), (2, 2e-3), (3, 3e-3))]
    # The reruns: 2 beats 3 on both metrics; 1 is the smallest, the worst on val_exact: 2 and 1 make the front.
    told = {1e-3: (0.90, 300.0), 2e-3: (0.95, 900.0), 3e-3: (0.92, 950.0)}
    rows = [{"number": 0, "params": {"lr": lr, "seed": s}, "state": "COMPLETE", "run": "r", "value": e + s / 100,
             "values": {"val_exact": e + s / 100, "params": p}} for lr, (e, p) in told.items() for s in range(3)]
    out = summarise(picks, rows, [("val_exact", "maximize"), ("params", "minimize")])
    assert [(e["trial"], e["rank"], e["on_front"]) for e in out] == [(2, 1, True), (1, 2, True), (3, 3, False)]
    assert math.isclose(out[1]["metrics"]["params"]["mean"], 300.0)
    assert out[2]["versus_best"]["holds"] is True   # #1 against #3 on the first metric
    text = _confirm_table({"configurations": out, "seeds": 3, "study": "s", "metric": "val_exact"})
    assert "ranked by val_exact within Pareto rank" in text
    assert "over 3 seeds, params 900 (on the front)" in text and "over 3 seeds, params 950  " in text


def test_a_configuration_without_a_mean_is_ranked_last_and_pushes_none_off_the_front():
    picks = [{"number": n, "params": {"lr": lr}, "value": 0.9} for n, lr in ((1, 1e-3), (2, 2e-3))]
    rows = [{"number": 0, "params": {"lr": 1e-3, "seed": s}, "state": "COMPLETE", "run": "r", "value": 0.0,
             "values": {"val_exact": 0.0, "params": 500.0}} for s in range(3)]   # 2e-3: no rerun completed
    out = summarise(picks, rows, [("val_exact", "maximize"), ("params", "minimize")])
    assert [(e["trial"], e["on_front"]) for e in out] == [(1, True), (2, False)]


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["search", *argv])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("argv", "says"), [
    (["--constraint", "d_model>=2**n_heads"], "constraint 'd_model>=2**n_heads': '*' is out of place"),
    (["--constraint", "colour>1"], "unknown name 'colour'"),
    (["--enqueue", "lr=5"], "lr=5 is outside the space's range"),
    (["--enqueue", "d_model=32"], "d_model is not searched"),
    (["--metric", "val_exact", "--metric", "accuracy"], "--metric 'accuracy' is not known"),
    (["--metric", "params:most"], "must be :min or :max"),
    (["--confirm", "1"], "seeds=1 must be a whole number from 2 to 20"),
    (["--confirm", "3", "--confirm-top", "0"], "configurations=0 must be a whole number from 1 to 10"),
])
def test_the_cli_refuses_bad_search_control_in_one_line_with_status_2(argv, says):
    code, out, err = _cli("--space", "lr=1e-3:1e-2", "--storage", "memory", *argv)
    assert code == 2 and says in err and err.count("\n") == 1 and "Traceback" not in err and not out
