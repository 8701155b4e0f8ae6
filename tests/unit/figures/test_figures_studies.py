"""A study's figures (explorer/figures/studies.py): Optuna's own plots in the house style, each clickable
point knowing its trial, log axes for a log-scaled lr in every plot of a parameter (parallel coordinates
ticked 1-2-5 per decade), the Pareto front of a two-objective study, and words where there is nothing to draw."""

from __future__ import annotations

import json
import math

import optuna
import pytest

from explorer.figures import studies as fs
from explorer.figures.describe import describe
from tests.unit.search.samples import pareto, single

NAMES = ["val_exact"]


@pytest.fixture(scope="module")
def study():
    return single()


@pytest.fixture(scope="module")
def two():
    return pareto()


def _all(study):
    return [fs.history(study, NAMES), fs.intermediate(study, NAMES), fs.timeline(study),
            fs.slice_plot(study, NAMES), fs.contour(study, NAMES, "lr", "d_model"), fs.edf(study, NAMES),
            fs.parallel(study, NAMES), fs.importances(study, NAMES)]


def test_every_figure_is_in_the_house_style_and_described(study, two):
    for fig in [*_all(study), fs.pareto(two, ["val_exact", "params"])]:
        spec = json.loads(fig.to_json())
        assert "template" not in spec["layout"] and spec["layout"]["datarevision"] == 0, fig.layout.title.text
        assert all(t.hoverinfo == "skip" or t.hovertemplate for t in fig.data), fig.layout.title.text
        assert '"bdata"' not in json.dumps(spec["data"]), fig.layout.title.text   # no typed array (layout.py)
        assert "Feasible" not in describe(fig) and "no-name" not in describe(fig)


def test_each_clickable_point_knows_its_trial(study):
    complete = {t.number: t for t in study.trials if t.state.name == "COMPLETE"}
    hist = fs.history(study, NAMES)
    marks = next(i for i, t in enumerate(hist.data) if t.name == "trials")
    for i, x in enumerate(hist.data[marks].x):
        assert fs.trial_at(hist, {"curve_number": marks, "point_index": i}) == x
    assert fs.trial_at(hist, {"curve_number": 99, "point_index": 0}) is None
    curves = fs.intermediate(study, NAMES)
    assert sorted(t.meta for t in curves.data) == [t.number for t in study.trials]
    for fig in (fs.slice_plot(study, NAMES), fs.contour(study, NAMES, "lr", "d_model")):
        for trace in fig.data:
            if isinstance(trace.meta, (list, tuple)):
                xs = trace.x
                param = (fig.layout[f"xaxis{str(trace.xaxis or 'x')[1:]}"].title.text or "").removesuffix(" (log)")
                for n, x in zip(trace.meta, xs):
                    assert str(complete[n].params[param]) == str(x) or math.isclose(complete[n].params[param], x)
    lines = [t for t in fs.parallel(study, NAMES).data if t.mode == "lines"]
    assert sorted(t.meta for t in lines) == sorted(complete)
    for line in lines:   # the line of trial n shows trial n's values
        shown = dict(line.customdata)
        assert float(shown["lr"]) == pytest.approx(complete[line.meta].params["lr"], rel=1e-2)
    bars = fs.timeline(study)
    assert sorted(n for t in bars.data for n in t.meta) == [t.number for t in study.trials]


def test_a_log_scaled_lr_has_a_log_axis_in_every_plot_of_a_parameter(study):
    assert fs.is_log(study, "lr") and not fs.is_log(study, "d_model")
    sliced = fs.slice_plot(study, NAMES)
    lr_axis = next(a for a in ("xaxis", "xaxis2", "xaxis3") if sliced.layout[a].title.text == "lr")
    assert sliced.layout[lr_axis].type == "log"
    contour = fs.contour(study, NAMES, "lr", "d_model")
    log_axis = "xaxis" if contour.layout.xaxis.title.text.startswith("lr") else "yaxis"
    assert contour.layout[log_axis].type == "log" and contour.layout[log_axis].title.text == "lr (log)"
    par = fs.parallel(study, NAMES)
    labels = list(par.layout.xaxis.ticktext)
    assert "lr (log)" in labels and "d_model" in labels
    place = labels.index("lr (log)")
    ticks = sorted((a.y, float(a.text)) for a in par.layout.annotations if a.x == place)
    assert sum(f"{v:e}"[0] in "125" for _, v in ticks) >= 3   # 1, 2 and 5 of each decade (and the ends)
    # equal steps of log10(value) are equal distances up the axis: a log axis, not a linear one
    inner = [(y, v) for y, v in ticks if 0 < y < 1]
    slopes = {round((b[0] - a[0]) / (math.log10(b[1]) - math.log10(a[1])), 6) for a, b in zip(inner, inner[1:])}
    assert len(inner) >= 3 and len(slopes) == 1


def test_the_pareto_front_marks_the_studys_best_trials(two):
    fig = fs.pareto(two, ["val_exact", "params"])
    front = next(t for t in fig.data if t.name == "on the front")
    assert sorted(front.meta) == sorted(t.number for t in two.best_trials)
    others = next(t for t in fig.data if t.name == "dominated")
    assert set(others.meta).isdisjoint(front.meta)
    assert fig.layout.xaxis.title.text == "val_exact" and fig.layout.yaxis.title.text == "params"
    assert list(front.customdata) == list(front.meta)   # what a click on the Search page's front reads
    assert fig.layout.xaxis.type == "linear" and fig.layout.yaxis.type == "log"   # a parameter count
    with pytest.raises(ValueError, match="two or more objectives"):
        fs.pareto(single(trials=3), NAMES)


def test_a_multi_objective_study_draws_its_first_objective_and_no_learning_curves(two):
    names = ["val_exact", "params"]
    assert fs.history(two, names).layout.title.text == "Optimisation history: val_exact"
    assert fs.parallel(two, names).layout.xaxis.ticktext[0] == "val_exact"
    with pytest.raises(ValueError, match="intermediate"):
        fs.intermediate(two, names)


def test_a_study_with_nothing_to_draw_says_why():
    empty = optuna.create_study()
    for draw in (lambda: fs.history(empty, NAMES), lambda: fs.edf(empty, NAMES),
                 lambda: fs.parallel(empty, NAMES), lambda: fs.importances(empty, NAMES)):
        with pytest.raises(ValueError, match="completed trial"):
            draw()
    with pytest.raises(ValueError, match="has not started|no trial has started"):
        fs.timeline(empty)
    with pytest.raises(ValueError, match="pruner"):
        fs.intermediate(pareto_free := optuna.create_study(), NAMES)
    assert pareto_free.trials == []
    study = single(trials=3)
    with pytest.raises(ValueError, match="two different"):
        fs.contour(study, NAMES, "lr", "lr")


def test_stored_names_are_quoted_for_plotly(study):
    fig = fs.history(study, ["<b>x</b>"])
    assert "&lt;b&gt;" in fig.layout.title.text and "<b>" not in fig.layout.title.text


def test_a_visitors_text_in_a_trial_on_the_front_is_shown_as_text():
    study = optuna.create_study(directions=["maximize", "minimize"])
    study.add_trial(optuna.trial.create_trial(
        params={"norm": "<b>x</b>"}, values=[0.5, 10.0],
        distributions={"norm": optuna.distributions.CategoricalDistribution(["<b>x</b>"])}))
    text = " ".join(" ".join(trace.text) for trace in fs.pareto(study, ["val_exact", "params"]).data)
    assert "norm = &lt;b&gt;x&lt;/b&gt;" in text and "<b>x</b>" not in text
