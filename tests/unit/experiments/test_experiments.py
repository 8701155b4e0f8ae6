"""The experiments: every one runs end to end at its tiny budget, the claims that must show at a small
budget do, results survive the cache and CSV, the sweep fills its grid, and the CLI writes CSV.
Verdicts: one seed never decides a claim, pe-order at its default budget holds with its evidence, and
the work of one experiment is capped."""

import dataclasses
import json
import math
import sys
import threading
import types

import pandas as pd
import plotly.graph_objects as go
import pytest
import torch

from explorer.cli import main
from explorer.experiments import (
    CURVE_COLUMNS,
    EXPERIMENTS,
    MAX_WORK,
    SAMPLE_COLUMNS,
    TABLE_COLUMNS,
    ProcessExecutor,
    SerialExecutor,
    Stopped,
    cache_path,
    cached,
    load_result,
    refusal_of,
    run,
    run_cached,
    save_csv,
    work_units,
)
from explorer.experiments.norm import NormParams, init_gradients
from explorer.experiments.runner import OLD_VERDICT, RESULT_FILE
from explorer.jobs.experiment import ExperimentJob

_RESULTS: dict = {}
OPEN_QUESTIONS = ("length", "sweep")   # the seeds ask rather than claim: never a verdict


def tiny(name, seeds: int | None = None):
    """Each experiment's tiny run (with `seeds` if given), computed once for the whole file (no cache)."""
    exp = EXPERIMENTS[name]
    params = exp.tiny if seeds is None else dataclasses.replace(exp.tiny, seeds=seeds)
    if (name, params) not in _RESULTS:
        seen = []
        _RESULTS[name, params] = (run(name, params, progress=lambda f, t: seen.append(f), executor=SerialExecutor()),
                                  seen)
    return _RESULTS[name, params]


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_tiny_budget_gives_the_documented_result(name, tmp_path):
    exp = EXPERIMENTS[name]
    assert exp.question.endswith("?") and exp.prediction and exp.title and exp.source
    result, seen = tiny(name)
    assert list(result.table.columns) == list(TABLE_COLUMNS) and len(result.table) >= 2
    assert list(result.samples.columns) == list(SAMPLE_COLUMNS)
    assert (result.table["n"] >= 1).all() and (result.table["std"] >= 0).all()
    assert result.curves is None or list(result.curves.columns) == list(CURVE_COLUMNS)
    assert result.figures and all(isinstance(f, go.Figure) for f in result.figures)
    for fig in result.figures:
        json.loads(fig.to_json())
    assert result.verdict and result.holds in (True, False, None) and not result.partial
    assert result.params == dataclasses.asdict(exp.tiny) and result.seconds > 0
    assert seen and seen[-1] == 1.0 and all(0 <= f <= 1 for f in seen)
    # CSV round trip: the same frames come back and draw the same number of figures
    save_csv(result, tmp_path)
    back = load_result(tmp_path)
    pd.testing.assert_frame_equal(back.table, result.table, check_dtype=False)
    pd.testing.assert_frame_equal(back.samples, result.samples, check_dtype=False)
    for key, frame in result.extra.items():
        pd.testing.assert_frame_equal(back.extra[key].reset_index(drop=True), frame.reset_index(drop=True),
                                      check_dtype=False)
    assert len(exp.figures(back)) == len(result.figures) and back.verdict == result.verdict
    assert back.holds == result.holds and [e.to_json() for e in back.evidence] == [e.to_json() for e in result.evidence]


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_one_seed_at_the_tiny_budget_is_inconclusive(name):
    result, _ = tiny(name, seeds=1)
    assert result.holds is None
    if name in OPEN_QUESTIONS:
        assert all(e.holds is None for e in result.evidence)
        assert "open" in result.verdict.lower() or "no claim" in result.verdict
        return
    assert result.evidence and "as predicted" not in result.verdict.lower()
    for e in result.evidence:
        assert e.holds is None and min(e.n) <= 1 and e.reason == "too few seeds (n=1; at least 3 decide)"
        assert f"Inconclusive whether {e.claim}: too few seeds (n=1; at least 3 decide)" in result.verdict


def test_a_result_stored_before_verdicts_had_evidence_loads_as_inconclusive(tmp_path):
    result, _ = tiny("heads")
    save_csv(dataclasses.replace(result, holds=True, verdict="4 heads 74%, 1 head 76%: as predicted"), tmp_path)
    meta = json.loads((tmp_path / RESULT_FILE).read_text())
    assert meta["holds"] is True and isinstance(meta["evidence"], list)
    del meta["evidence"]
    (tmp_path / RESULT_FILE).write_text(json.dumps(meta))
    old = load_result(tmp_path)
    assert old.holds is None and old.evidence == () and old.verdict == OLD_VERDICT
    pd.testing.assert_frame_equal(old.table, result.table, check_dtype=False)


def test_order_detection_needs_positional_encoding_even_at_a_small_budget():
    table = tiny("pe-order")[0].table
    acc = table[table["metric"] == "accuracy"].set_index("condition")["mean"]
    assert acc["with PE"] >= 0.9 and acc["without PE"] <= 0.7


def test_induction_heads_measures_both_depths_and_the_phase_change():
    """The claim itself needs ~250 steps (default budget: 0.82 +- 0.03 against 0.18 +- 0.002 over 3 seeds,
    bench/README.md); the tiny run checks what is measured and where."""
    result = tiny("induction-heads")[0]
    rows = result.samples.groupby(["condition", "metric"])["value"].count()
    assert rows[("2 layers", "induction score")] == rows[("1 layer", "induction score")] == 2
    assert rows[("2 layers", "phase change step")] == 2 and ("1 layer", "phase change step") not in rows
    assert set(result.curves["metric"]) == {"repeat_loss"} and result.curves["step"].max() == 30
    assert ((result.samples["value"] >= 0) & (result.samples["value"] <= 30)).all()


def test_grokking_measures_when_each_accuracy_reaches_99_and_the_key_frequencies():
    """Grokking itself takes ~1,500 full-batch steps (bench/README.md); the tiny run checks the measurements."""
    result = tiny("grokking")[0]
    values = result.samples.set_index(["condition", "seed", "metric"])["value"].sort_index()
    for condition in ("weight decay 1", "no weight decay"):
        for seed in (0, 1):
            v = values[condition, seed]
            assert v["delay (steps)"] == v["validation 99% step"] - v["train 99% step"]
            assert 0 <= v["final validation accuracy"] <= 1 and 1 <= v["key frequencies"] <= 6   # p = 11: 0..5
            assert v["validation 99% step"] <= 20                                               # at most the budget
    assert set(result.curves["metric"]) == {"train_acc", "val_acc"}
    with pytest.raises(ValueError, match="train_fraction"):
        EXPERIMENTS["grokking"].make_params({"train_fraction": 1.0})


def test_pre_ln_gradients_are_more_even_across_12_layers_than_post_ln():
    p = NormParams(init_layers=12)
    ratio = {norm: [] for norm in ("pre", "post")}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for norm in ratio:
            for seed in range(3):
                params, inputs = init_gradients(p, norm, seed)
                assert len(params) == len(inputs) == 12 and min(params) > 0
                ratio[norm].append(max(params) / min(params))
    finally:
        torch.set_num_threads(threads)
    assert sum(ratio["pre"]) < sum(ratio["post"])


def test_the_cache_returns_a_stored_result_without_running(tmp_path, monkeypatch):
    calls = []
    exp = EXPERIMENTS["pe-order"]

    def counting(p, ctx):
        calls.append(p)
        return exp.run(p, ctx)

    monkeypatch.setitem(EXPERIMENTS, "pe-order", dataclasses.replace(exp, run=counting))
    small = {"steps": 5, "seeds": 1, "n_train": 50, "n_val": 20}
    assert cached("pe-order", small, cache_dir=tmp_path) is None
    first = run_cached("pe-order", small, cache_dir=tmp_path)
    second = run_cached("pe-order", small, cache_dir=tmp_path)
    assert len(calls) == 1 and not first.cached and second.cached
    pd.testing.assert_frame_equal(second.table, first.table, check_dtype=False)
    pd.testing.assert_frame_equal(second.curves, first.curves, check_dtype=False)
    assert second.verdict == first.verdict and len(second.figures) == len(first.figures)
    run_cached("pe-order", {**small, "seeds": 2}, cache_dir=tmp_path)  # another configuration: runs
    assert len(calls) == 2
    run_cached("pe-order", small, cache_dir=tmp_path, refresh=True)
    assert len(calls) == 3


def test_a_stop_keeps_finished_seeds_and_is_not_cached(tmp_path):
    stop = threading.Event()

    def progress(fraction, text):
        if "(2/" in text:  # the second unit has started: stop inside it
            stop.set()

    params = {"steps": 20, "seeds": 2, "n_train": 50, "n_val": 20}
    result = run_cached("pe-order", params, progress=progress, stop=stop, cache_dir=tmp_path)
    assert result.partial and "Stopped early" in result.verdict and result.holds is None
    assert all(e.holds is None and e.reason == "run stopped after 1 of 4 runs" for e in result.evidence)
    assert "run stopped after 1 of 4 runs" in result.verdict
    assert set(result.samples["condition"]) == {"with PE"} and (result.table["n"] == 1).all()
    assert not cache_path("pe-order", params, tmp_path).exists()
    with pytest.raises(Stopped):
        run("pe-order", params, stop=stop)  # already set: nothing finishes


def test_sweep_fills_its_grid_and_reports_invalid_cells():
    p = EXPERIMENTS["sweep"].make_params({"x_values": (16, 32), "y_values": (1, 2, 3)}, tiny=True)
    result = run("sweep", p, executor=SerialExecutor())
    grid = result.extra["grid"]
    assert len(result.table) == 6 and len(grid) == 6
    bad = grid[(grid["x"] == 16) & (grid["y"] == 3)]  # 16 is not divisible by 3 heads
    assert math.isnan(bad["value"].iloc[0]) and "n_heads" in bad["error"].iloc[0]
    assert grid["value"].notna().sum() == 4 and "could not run" in result.verdict
    z = result.figures[0].data[0].z
    assert len(z) == 3 and len(z[0]) == 2  # rows: y values, columns: x values


def test_process_executor_returns_every_cell(monkeypatch):
    # A spawned worker re-runs the parent's __main__ by path. Under the CLI that is explorer's __main__;
    # inside this test process Streamlit's AppTest has left app.py there, which a worker must not run.
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    assert sorted(ProcessExecutor(max_workers=1).map(math.sqrt, [1.0, 4.0, 9.0])) == [1.0, 2.0, 3.0]


def test_params_name_the_bad_field():
    exp = EXPERIMENTS["pe-order"]
    with pytest.raises(ValueError, match="seeds"):
        exp.make_params({"seeds": 0})
    with pytest.raises(ValueError, match="no parameter"):
        exp.make_params({"colour": "red"})
    with pytest.raises(ValueError, match="x_axis and y_axis"):
        EXPERIMENTS["sweep"].make_params({"y_axis": "d_model"})


def test_cli_tiny_writes_csv_and_prints_the_verdict(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path))
    out = tmp_path / "csv"
    assert main(["experiment", "heads", "--tiny", "--seeds", "1", "--set", "steps=5", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    table = pd.read_csv(out / "table.csv")
    assert list(table.columns) == list(TABLE_COLUMNS) and set(table["condition"]) == {"4 heads", "1 head"}
    assert (table["n"] == 1).all() and not pd.read_csv(out / "curves.csv").empty
    assert "4 heads" in printed.out and json.loads((out / "result.json").read_text())["verdict"] in printed.out
    assert "%" in printed.err  # progress went to stderr
    assert "too few seeds (n=1; at least 3 decide)" in printed.out and "Evidence:" in printed.out
    assert json.loads((out / "result.json").read_text())["holds"] is None
    assert main(["experiment", "heads", "--tiny", "--set", "steps=many"]) == 2
    assert main(["experiment", "nonsense"]) == 2
    assert main(["experiment", "--list"]) == 0 and "pe-order" in capsys.readouterr().out


def test_every_default_budget_fits_the_work_cap():
    for name, exp in EXPERIMENTS.items():
        assert 0 < work_units(name) <= MAX_WORK and refusal_of(name) is None, name
        assert work_units(name, exp.tiny) < work_units(name)
    assert work_units("pe-order") == 2 * 5 * 300 and work_units("label-smoothing") == 2 * 3 * 600
    assert work_units("sweep") == 9 * 1 * 300
    steps_axis = {"x_axis": "steps", "x_values": (100, 200), "y_values": (1, 2)}
    assert work_units("sweep", steps_axis) == 2 * (100 + 200)   # the axis's steps, not the base's 300


def test_too_many_conditions_are_refused_naming_the_limit(tmp_path, capsys):
    many = {"epsilons": (0.0, 0.1) * 100}
    message = refusal_of("label-smoothing", many)
    assert message and "MAX_WORK" in message and f"{MAX_WORK:,}" in message and "200 runs per seed" in message
    with pytest.raises(ValueError, match="MAX_WORK"):
        run("label-smoothing", many)
    with pytest.raises(ValueError, match="MAX_WORK"):
        ExperimentJob("label-smoothing", many, cache_dir=tmp_path)
    assert refusal_of("label-smoothing", {"epsilons": (0.0, 0.05, 0.1)}) is None
    assert refusal_of("pe-order", {"seeds": 10, "steps": 3000}) is not None   # seeds x steps count too
    capsys.readouterr()
    epsilons = ",".join(["0.0,0.1"] * 100)
    assert main(["experiment", "label-smoothing", "--set", f"epsilons={epsilons}", "--out", str(tmp_path)]) == 2
    printed = capsys.readouterr()
    lines = printed.err.strip().splitlines()
    assert len(lines) == 1 and "MAX_WORK" in lines[0] and "Traceback" not in printed.err and not printed.out
    assert not any(tmp_path.iterdir())   # nothing ran or was written


def test_residuals_compares_a_deep_stack_with_and_without_residuals_and_a_shallow_one():
    from explorer.experiments.residuals import ResidualParams
    from explorer.tasks import make_task
    p = EXPERIMENTS["residuals"].tiny
    result, _ = tiny("residuals")
    conditions = ["3 layers, residual", "3 layers, no residual", "1 layer, residual", "1 layer, no residual"]
    assert [p.deep, p.plain, p.shallow_residual, p.shallow] == conditions
    assert conditions == list(dict.fromkeys(result.table["condition"]))
    assert set(result.samples["metric"]) == {"val loss", "next-character accuracy", "log10 first/last block gradient"}
    assert result.holds in (True, False, None) and len(result.evidence) == 4
    assert [e.test for e in result.evidence] == ["Welch's t", "one-sample t", "Welch's t", "paired t"]
    grads = result.curves[result.curves["metric"] == "grad_init"]   # one norm per block, seed and deep condition
    assert set(grads["condition"]) == set(conditions[:2]) and (grads.groupby(["condition", "seed"]).size() == 3).all()
    unigram = result.table.set_index(["condition", "metric"]).loc[(p.plain, "val loss"), "expected"]
    assert 1.0 < unigram < math.log(len(make_task("char-lm").vocab))   # frequencies: below a uniform guess
    assert work_units("residuals") == 4 * ResidualParams().seeds * ResidualParams().steps
    with pytest.raises(ValueError, match="shallow_layers=12 must be fewer than layers=12"):
        ResidualParams(shallow_layers=12)
