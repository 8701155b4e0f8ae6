"""Charts in words and as tables (explorer/figures/describe.py): what a screen reader is told matches the
figure's own data."""

import numpy as np
import plotly.graph_objects as go

from explorer.figures import describe
from explorer.figures.architecture import param_breakdown
from explorer.figures.attention import attention_heatmap, attention_mosaic
from explorer.figures.curves import line_chart
from tests.unit.figures.samples import _all_figures  # noqa: PLC2701


def test_a_heatmap_names_its_largest_cell_by_its_labels():
    p = np.full((3, 3), 0.1)
    p[2, 0] = 0.8
    fig = attention_heatmap(p, ["a", "b", "<c>"], ["x", "y", "z"], title="L0 <b>H1</b>")
    text = describe.describe(fig)
    assert text.startswith("L0 H1: a heatmap of 3 rows by 3 columns") and "row <c>, column x" in text
    frame, cut = describe.table(fig)
    assert frame.shape == (3, 3) and frame.loc["<c>", "x"] == 0.8 and not cut


def test_the_mosaic_names_its_sharpest_head_and_its_strongest_link():
    p = np.full((2, 2, 4, 4), 0.25)
    p[1, 0] = np.eye(4)[[3, 0, 1, 2]]                     # L1 H0 looks back one token, sharply
    text = describe.describe(attention_mosaic(p, list("abcd"), list("abcd"), title="All heads"))
    assert "the sharpest head is L1 H0" in text and "top weight 1.00" in text


def test_curves_and_bars_say_where_they_start_end_and_peak():
    fig = line_chart({"loss": ([0, 1, 2, 3], [2.0, 0.5, 0.7, 0.9])}, title="Loss", x_title="step", y_title="loss")
    assert "loss goes from 2 to 0.9 over 4 points (lowest 0.5 at 1, highest 2)" in describe.describe(fig)
    bars = param_breakdown({"attention": 30, "feed-forward": 60, "norms": 10}, "Parameters")
    assert "3 bars; the largest is feed-forward at 60" in describe.describe(bars)
    frame, _ = describe.table(bars)
    assert list(frame["y"]) == ["attention", "feed-forward", "norms"] or len(frame) == 3


def test_every_figure_of_the_app_is_described_and_tabulated():
    for fig in _all_figures():
        text = describe.describe(fig)
        assert text.endswith(".") and len(text) > len(describe.title(fig)) + 10, text
        describe.table(fig)   # never raises


def test_a_big_heatmap_is_cut_and_says_so():
    fig = go.Figure(go.Heatmap(z=np.arange(100 * 40).reshape(100, 40)))
    frame, cut = describe.table(fig)
    assert frame.shape == (describe.MAX_ROWS, describe.MAX_COLS) and cut
