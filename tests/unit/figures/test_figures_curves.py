"""Curves and bars: line charts with bands, training curves, gradient profiles, parameter breakdowns,
entropy and error bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer.config import ModelConfig, param_count
from explorer.figures.architecture import param_breakdown
from explorer.figures.curves import line_chart, training_curves
from explorer.figures.gradients import grad_norm_profile
from explorer.figures.outputs import entropy_chart
from explorer.figures.results import bar_with_error


def test_line_chart_band_shares_line_colour():
    x = np.arange(5)
    fig = line_chart({"a": (x, x * 1.0), "b": (x, x * 2.0)}, log_y=True,
                     bands={"a": (x, x - 0.5, x + 0.5)})
    band, line_a, line_b = fig.data
    assert band.fill == "toself" and band.fillcolor == line_a.line.color != line_b.line.color
    assert len(band.x) == 10 and fig.layout.yaxis.type == "log"
    np.testing.assert_allclose(line_b.y, x * 2.0)


def test_training_curves_single_run_drops_nan_and_uses_second_axis_for_lr():
    hist = pd.DataFrame({"step": [0, 1, 2, 3], "loss": [2.0, 1.5, 1.0, 0.8],
                         "val_loss": [np.nan, 1.6, np.nan, 0.9], "lr": [0.0, 1e-3, 1e-3, 1e-3]})
    fig = training_curves(hist, metrics=("loss", "val_loss", "lr", "token_acc"))
    names = [t.name for t in fig.data]
    assert names == ["loss", "val_loss", "lr"]  # a metric never recorded is skipped
    val = fig.data[1]
    assert list(val.x) == [1, 3] and list(val.y) == [1.6, 0.9]
    assert fig.data[2].yaxis == "y2" and fig.layout.yaxis2.overlaying == "y"
    assert len({t.line.color for t in fig.data}) == 3


def test_training_curves_overlay_colour_per_run_dash_per_metric():
    h = pd.DataFrame({"step": [0, 1], "loss": [1.0, 0.5], "val_loss": [1.1, 0.6]})
    fig = training_curves({"pre": h, "post": h}, metrics=("loss", "val_loss"))
    by = {t.name: t for t in fig.data}
    assert set(by) == {"pre · loss", "pre · val_loss", "post · loss", "post · val_loss"}
    assert by["pre · loss"].line.color == by["pre · val_loss"].line.color != by["post · loss"].line.color
    assert by["pre · loss"].line.dash == by["post · loss"].line.dash != by["pre · val_loss"].line.dash


def test_grad_norm_profile_log_y_lines_markers():
    fig = grad_norm_profile({"Pre-LN": [1.0, 1.1, 0.9], "Post-LN": [1e-3, 1e-2, 1e-1]})
    assert [t.name for t in fig.data] == ["Pre-LN", "Post-LN"]
    assert fig.layout.yaxis.type == "log" and fig.data[0].mode == "lines+markers"
    assert list(fig.data[1].x) == [0, 1, 2]


def test_grad_norm_profile_names_the_layers_when_given():
    fig = grad_norm_profile({"Xavier": [1.0, 2.0, 3.0]}, labels=["enc 0", "dec 0", "dec 1"])
    assert list(fig.layout.xaxis.ticktext) == ["enc 0", "dec 0", "dec 1"]
    assert list(fig.layout.xaxis.tickvals) == [0, 1, 2] and list(fig.data[0].customdata) == ["enc 0", "dec 0", "dec 1"]


def test_param_breakdown_leaves_out_total():
    parts = param_count(ModelConfig())
    fig = param_breakdown(parts)
    (bar,) = fig.data
    assert "total" not in list(bar.y) and bar.orientation == "h"
    assert sum(bar.x) == parts["total"]


def test_entropy_chart_bars_and_uniform_line():
    fig = entropy_chart([0.1, 1.0, 2.0], ["a", "b", "a"], max_entropy=np.log(8))
    assert list(fig.data[0].y) == [0.1, 1.0, 2.0]
    assert list(fig.layout.xaxis.ticktext) == ["a", "b", "a"]
    assert fig.layout.shapes[0].line.dash == "dash" and fig.layout.shapes[0].y0 == pytest.approx(np.log(8))


def test_bar_with_error_reference_only_when_given():
    fig = bar_with_error(["none", "0.1"], [0.8, 0.9], [0.05, 0.02], y_title="acc")
    assert len(fig.data) == 1 and list(fig.data[0].error_y.array) == [0.05, 0.02]
    fig = bar_with_error(["none", "0.1"], [0.8, 0.9], [0.05, 0.02], reference={"0.1": 0.95})
    assert list(fig.data[1].x) == ["0.1"] and list(fig.data[1].y) == [0.95]


def test_line_chart_marks_points_when_a_line_would_draw_nothing():
    one = line_chart({"a": ([20], [0.5])})
    many = line_chart({"a": (np.arange(10), np.arange(10.0))})
    assert "markers" in one.data[0].mode and many.data[0].mode == "lines"
