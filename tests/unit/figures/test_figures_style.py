"""The house style of every figure: no template, fixed colours, typed arrays Plotly can compare, and
margins made in advance for what each figure puts in them (colorbars, legends, labels)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd

from explorer.figures.architecture import param_breakdown
from explorer.figures.attention import attention_heatmap, z_slider
from explorer.figures.curves import line_chart, training_curves
from explorer.figures.gradients import grad_norm_profile
from explorer.figures.layout import (
    AXIS_TITLE_PX,
    COLORBAR,
    COLORBAR_PAD,
    GRID,
    LEGEND_LINE_PX,
    LEGEND_ROW_PX,
    X_LABELS_PX,
    figure,
    fit_title,
    text_px,
)
from explorer.figures.results import sweep_heatmap
from tests.unit.figures.samples import TOKS, _all_figures, _pattern

# ------------------------------------------------------------------------------ every figure


def _typed_arrays(spec):
    if isinstance(spec, dict):
        if "bdata" in spec:
            yield spec
        for value in spec.values():
            yield from _typed_arrays(value)
    elif isinstance(spec, list):
        for value in spec:
            yield from _typed_arrays(value)


def test_every_figure_serialises_with_house_style_and_no_template():
    import streamlit.elements.lib.streamlit_plotly_theme  # noqa: F401  (makes "streamlit" plotly's default)

    for fig in _all_figures():
        spec = json.loads(fig.to_json())
        assert spec["layout"]["height"] >= 250
        # A template object would make the browser recalculate and redraw every new chart a second time.
        assert "template" not in spec["layout"] and spec["layout"]["datarevision"] == 0
        if spec["layout"].get("xaxis", {}).get("visible", True):  # the diagram draws on hidden axes
            assert spec["layout"]["plot_bgcolor"] == "white"
            assert spec["layout"]["xaxis"]["gridcolor"] == spec["layout"]["yaxis"]["gridcolor"] == GRID
            assert spec["layout"]["autotypenumbers"] == "strict"  # token "12" stays a label, not a number
        # Nor a 1-D typed array (plotly's form of a numpy array), which Plotly cannot compare either;
        # 2-D ones (heatmaps' z) reach Plotly as arrays of rows, which it can.
        assert all("shape" in typed for typed in _typed_arrays(spec)), fig.layout.title.text
        for trace in fig.data:
            assert trace.hoverinfo == "skip" or trace.hovertemplate, type(trace).__name__


# ------------------------------------------------------------------------ margins made in advance
# Whether Plotly keeps these margins (draws each chart once) is checked in the browser, on every page
# (tests/test_browser.py GROWN); here, that each margin follows what the figure puts in it.

def test_margins_make_room_for_a_colorbar_and_its_title():
    plain = sweep_heatmap(np.ones((2, 2)), ["a", "b"], ["c", "d"], "x", "y")
    assert plain.layout.margin.r >= 2 * COLORBAR_PAD + COLORBAR["thickness"]
    titled = attention_heatmap(_pattern(), TOKS, TOKS)   # "weight" over the bar is wider than its labels
    assert titled.layout.margin.r > plain.layout.margin.r
    # at the plot's edge, not 2% of its width beyond: the room it needs does not depend on the width
    assert plain.data[0].colorbar.x == titled.data[0].colorbar.x == 1.0


def test_margins_grow_with_legend_names_and_pin_the_legend_to_the_plots_edge():
    short = grad_norm_profile({"a": [1, 2], "b": [2, 1]})
    long = grad_norm_profile({"a": [1, 2], "a much longer variant name": [2, 1]})
    assert long.layout.margin.r - short.layout.margin.r >= 100
    assert (long.layout.legend.x, long.layout.legend.xanchor) == (1.0, "left")
    one = grad_norm_profile({"a": [1, 2]})                # one line: no legend, no room for one
    assert one.layout.margin.r == 30
    inside = grad_norm_profile({"a": [1, 2], "b": [2, 1]}, layout=dict(legend=dict(x=0.02, y=0.98)))
    assert inside.layout.margin.r == 30 and inside.layout.legend.x == 0.02   # a page's own place stays
    assert line_chart({}).layout.margin.r == 30            # nothing drawn yet: nothing to make room for


def test_margins_under_the_plot_hold_the_axis_and_then_the_legend_in_rows():
    x = np.arange(3)
    hist = pd.DataFrame({"step": x, "loss": x * 1.0, "a": x * 1.0, "b": x * 1.0, "c": x * 1.0})
    one = training_curves(hist, metrics=("loss",))         # one line: no legend
    two = training_curves(hist, metrics=("loss", "a"))
    assert two.layout.legend.yref == "container" and two.layout.legend.y == 0   # at the bottom edge
    assert two.layout.margin.b >= one.layout.margin.b + LEGEND_ROW_PX         # under the axis, not on it
    names = ("loss", "a rather long metric name", "another long metric name", "c")
    wrapped = training_curves(hist.rename(columns=dict(zip(("loss", "a", "b", "c"), names))), metrics=names)
    assert wrapped.layout.margin.b >= two.layout.margin.b + LEGEND_LINE_PX


def test_margins_hold_axis_titles_and_long_category_labels_and_keep_a_larger_given_margin():
    short = param_breakdown({"a": 1, "b": 2})
    long = param_breakdown({"a very long part name": 1, "b": 2})
    assert long.layout.margin.l > short.layout.margin.l >= 60
    assert short.layout.margin.b >= X_LABELS_PX + AXIS_TITLE_PX     # "parameters" under the ticks
    given = param_breakdown({"a": 1}, layout=dict(margin=dict(l=200)))
    assert given.layout.margin.l == 200


def test_text_px_errs_wide_of_arial_and_grows_with_text():
    # Arial's widths at 12 px, measured in Chromium: "0.8" 16.7, "Embeddings" 66.7, "position" 41.4
    for text, arial in (("0.8", 16.7), ("Embeddings", 66.7), ("position", 41.4)):
        assert arial < text_px(text) < 1.3 * arial
    assert text_px("position", 14) > text_px("position")


def test_a_long_title_breaks_into_lines_a_phone_holds_at_a_mark_and_grows_its_top_margin():
    long = figure([], "Sinusoidal encoding: 100 positions × d_model 64", 300)
    fitted = fit_title(long, 340)
    assert fitted.layout.title.text == "Sinusoidal encoding:<br>100 positions × d_model 64"
    assert fitted.layout.margin.t >= long.layout.margin.t + 20 and long.layout.title.text.count("<br>") == 0
    words = "a fairly long title without any marks in it that still goes on and on past the edge"
    lines = fit_title(figure([], words, 300), 200).layout.title.text.split("<br>")
    assert len(lines) >= 3 and " ".join(lines) == words
    assert all(text_px(line, 16.8) <= 200 for line in lines)
    short = figure([], "Loss", 300)
    assert fit_title(short) is short  # nothing to break: the figure itself, not a copy


def test_the_titles_a_slider_swaps_in_break_as_the_first_one_does():
    titles = [f"layer {i} head 0: attention of the last input, step {i}" for i in range(2)]
    fig = attention_heatmap(_pattern(), TOKS, TOKS, title=titles[0],
                            slider=z_slider(["0", "1"], [_pattern(), _pattern()], titles))
    fitted = fit_title(fig, 300)
    swapped = [s.args[1]["title.text"] for s in fitted.layout.sliders[0].steps]
    assert fitted.layout.title.text == swapped[0] and all("<br>" in t for t in swapped)
    assert [t.replace("<br>", " ") for t in swapped] == titles


class _Shared(dict):
    """A trace's properties in a figure every session shares: read, never changed, not even for a moment."""

    def pop(self, *args):
        raise AssertionError(f"a shared figure's trace lost {args[0]!r} while being copied")

    def __delitem__(self, key):
        raise AssertionError(f"a shared figure's trace lost {key!r} while being copied")

    def __deepcopy__(self, memo):  # a copy is the copier's own, a plain dict
        return copy.deepcopy(dict(self), memo)


def test_a_shared_figure_is_copied_by_reading_it_only():
    # go.Figure(fig) pops each trace's "type" out of fig for a moment: a room's sessions copying one cached
    # lesson figure at once then saw a heatmap as a Scatter with a colorbar, and a student's step failed.
    from explorer.figures.attention import playable, slider_frames
    from explorer.figures.layout import copy_figure
    from explorer.figures.projector import for_projector
    from explorer.lessons.base import result_figure
    title = "layer 0 head 0: attention of the last input over a fairly long sequence, step 0"
    fig = attention_heatmap(_pattern(), TOKS, TOKS, title=title,
                            slider=z_slider(["0", "1"], [_pattern(), _pattern()], [title, title + "!"]))
    fig._data[:] = [_Shared(trace) for trace in fig._data]
    before = fig.to_json()
    copies = [copy_figure(fig), fit_title(fig, 300), for_projector(fig, dark=True), result_figure(fig),
              *slider_frames(fig), playable(fig)]
    assert all(c.data[0].type == "heatmap" for c in copies) and fig.to_json() == before
