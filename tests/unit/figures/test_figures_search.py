"""A study's figures (explorer/figures/search.py): built from trial rows in the house style, the best-so-far
line is the running best, categorical parameters get their levels as ticks, importances sort largest on top."""

import json

from explorer.figures.search import importance_bars, optimization_history, parallel_coordinates

ROWS = [
    {"number": 0, "params": {"lr": 0.01, "norm": "pre"}, "value": 0.5, "state": "COMPLETE"},
    {"number": 1, "params": {"lr": 0.001, "norm": "post"}, "value": 0.7, "state": "COMPLETE"},
    {"number": 2, "params": {"lr": 0.02, "norm": "post"}, "value": 0.1, "state": "PRUNED"},
    {"number": 3, "params": {"lr": 0.005, "norm": "pre"}, "value": 0.6, "state": "COMPLETE"},
    {"number": 4, "params": {"lr": 0.5, "norm": "pre"}, "value": None, "state": "FAIL"},
]


def _figures():
    return [optimization_history(ROWS, "val_exact"), parallel_coordinates(ROWS, ["lr", "norm"], "val_exact"),
            importance_bars({"lr": 0.7, "norm": 0.3})]


def test_search_figures_have_the_house_style_and_no_template():
    for fig in _figures():
        spec = json.loads(fig.to_json())
        assert "template" not in spec["layout"] and spec["layout"]["datarevision"] == 0
        assert spec["layout"]["height"] >= 250 and spec["layout"]["plot_bgcolor"] == "white"


def test_the_history_marks_each_state_and_draws_the_running_best():
    fig = optimization_history(ROWS, "val_exact")
    by_name = {t.name: t for t in fig.data}
    assert list(by_name["complete"].x) == [0, 1, 3] and list(by_name["pruned"].x) == [2]
    assert list(by_name["best so far"].y) == [0.5, 0.7, 0.7]          # a failed trial draws nothing
    low = optimization_history(ROWS, "val_loss", minimize=True)
    assert list(next(t for t in low.data if t.name == "best so far").y) == [0.5, 0.5, 0.5]


def test_parallel_coordinates_have_an_axis_per_parameter_and_the_objective():
    dims = parallel_coordinates(ROWS, ["lr", "norm"], "val_exact").data[0].dimensions
    assert [d.label for d in dims] == ["lr", "norm", "val_exact"]
    assert list(dims[0].values) == [0.01, 0.001, 0.005]                   # complete trials only
    assert list(dims[1].ticktext) == ["post", "pre"] and list(dims[1].values) == [1, 0, 1]
    assert tuple(dims[2].range) == (0, 1)                                 # an accuracy's whole range


def test_importances_are_sorted_largest_on_top():
    bars = importance_bars({"norm": 0.1, "lr": 0.6, "d_model": 0.3}).data[0]
    assert list(bars.y) == ["norm", "d_model", "lr"] and list(bars.x) == [0.1, 0.3, 0.6]
