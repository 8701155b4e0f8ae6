"""explorer.figures.projector: a figure for a projector (large text) and a dim room (dark)."""

import numpy as np
import pytest

from explorer.figures.architecture import architecture_diagram, block_diagram
from explorer.figures.attention import attention_heatmap, attention_mosaic, z_slider
from explorer.figures.layout import GRID, figure
from explorer.figures.projector import DARK_BG, DARK_TEXT, DRAWING, LABEL_PX, TICK_PX, TITLE_PX, for_projector
from tests.unit.figures.samples import _all_figures

TOKS = list("abcde")


def _heatmap_with_slider():
    pats = np.full((2, 5, 5), 0.2)
    return attention_heatmap(pats[0], TOKS, TOKS, title="L0 H0", expected=np.eye(5),
                             slider=z_slider(["a", "b"], pats, ["L0 H0", "L0 H1"]))


def test_unchanged_when_no_mode_is_on():
    fig = _heatmap_with_slider()
    assert for_projector(fig, large=False, dark=False) is fig


@pytest.mark.parametrize("index", range(len(_all_figures())))
def test_large_text_everywhere_and_margins_grow_to_hold_it(index):
    fig = _all_figures()[index]
    before = fig.to_json()
    big = for_projector(fig)
    if (fig.layout.meta or {}).get("kind") == DRAWING:   # a diagram's text fits its boxes: see the test below
        return
    assert big is not fig and big.layout.font.size >= 16
    assert big.layout.title.font.size >= TITLE_PX
    for name in [n for n in big.layout if n.startswith(("xaxis", "yaxis"))]:
        axis = big.layout[name]
        assert axis.tickfont.size >= TICK_PX
        if axis.title.text:
            assert axis.title.font.size >= LABEL_PX
    assert big.layout.legend.font.size >= LABEL_PX
    for trace in big.data:
        if getattr(trace, "colorbar", None) is not None:
            assert trace.colorbar.tickfont.size >= TICK_PX
    for side in "lrtb":  # never smaller than the figure's own, which held 12 px labels
        assert big.layout.margin[side] >= fig.layout.margin[side]
    assert big.layout.template.layout.to_plotly_json() == {}  # still no template (a second draw)
    assert fig.to_json() == before  # the original untouched


def test_a_diagram_on_a_projector_has_14_px_text_and_keeps_a_scale_its_boxes_hold():
    """Its boxes are drawn in data units: 14 px text stays inside them down to MIN_PX_PER_UNIT (measured in
    Chromium, tests/browser/test_browser_lesson_screens.py), so a tall one fits `max_height` only that far."""
    from explorer.config import ModelConfig
    from explorer.figures.diagram import MIN_PX_PER_UNIT, PX_PER_UNIT

    def px_per_unit(fig):
        y0, y1 = fig.layout.yaxis.range
        margin = fig.layout.margin
        return (fig.layout.height - margin.t - margin.b) / (y1 - y0), fig.layout.meta["px_per_unit"]

    for fig in (architecture_diagram(ModelConfig()), block_diagram(ModelConfig(), "cross")):
        assert px_per_unit(fig) == pytest.approx((PX_PER_UNIT, PX_PER_UNIT), abs=0.1)
        big = for_projector(fig)
        assert min(a.font.size for a in big.layout.annotations if a.text) == TICK_PX
        assert big.layout.title.font.size >= TICK_PX and big.layout.width >= fig.layout.width
        assert px_per_unit(big) == pytest.approx((PX_PER_UNIT, PX_PER_UNIT), abs=0.1)   # its own scale
        small = for_projector(fig, max_height=300)   # far too short for its text: the least scale
        assert px_per_unit(small) == pytest.approx((MIN_PX_PER_UNIT, MIN_PX_PER_UNIT), abs=0.1)
        assert for_projector(fig, large=False, max_height=300).layout.height == fig.layout.height
    short = block_diagram(ModelConfig(arch="decoder"), "lm-head")
    fitted = for_projector(short, max_height=440)
    assert fitted.layout.height < 440 and px_per_unit(fitted)[0] == pytest.approx(PX_PER_UNIT, abs=0.1)
    cross = block_diagram(ModelConfig(), "cross")
    between = for_projector(cross, max_height=cross.layout.height - 40)   # a little smaller than its own
    assert MIN_PX_PER_UNIT < px_per_unit(between)[0] < PX_PER_UNIT and between.layout.height < cross.layout.height


def test_bigger_labels_need_more_room():
    labels = ["a long token", "another one"]
    fig = figure([], "t", 300, xaxis=dict(title="key", type="category", tickmode="array", tickvals=[0, 1],
                                          ticktext=labels),
                 yaxis=dict(title="query", type="category", tickmode="array", tickvals=[0, 1], ticktext=labels))
    big = for_projector(fig)
    assert big.layout.margin.l > fig.layout.margin.l and big.layout.margin.b > fig.layout.margin.b


def test_small_explicit_tick_fonts_are_raised_and_larger_ones_kept():
    fig = figure([], "t", 300, xaxis=dict(tickfont=dict(size=10)), yaxis=dict(tickfont=dict(size=18)))
    big = for_projector(fig)
    assert big.layout.xaxis.tickfont.size == TICK_PX and big.layout.yaxis.tickfont.size == 18


def test_slider_annotations_and_colorbar_grow_too():
    big = for_projector(_heatmap_with_slider())
    assert big.layout.sliders[0].font.size >= TICK_PX
    assert big.data[0].colorbar.tickfont.size >= TICK_PX and big.data[0].colorbar.title.font.size >= LABEL_PX
    mosaic = for_projector(attention_mosaic(np.full((1, 2, 3, 3), 1 / 3), list("abc"), list("abc")))
    assert all(a.font.size >= TICK_PX for a in mosaic.layout.annotations)


def test_dark_backgrounds_light_text_and_grid():
    fig = _heatmap_with_slider()
    night = for_projector(fig, large=False, dark=True)
    assert night.layout.paper_bgcolor == night.layout.plot_bgcolor == DARK_BG
    assert night.layout.font.color == DARK_TEXT
    assert night.layout.xaxis.gridcolor != GRID and night.layout.sliders[0].font.color == DARK_TEXT
    assert night.layout.xaxis.tickfont.size is None  # dark alone keeps the sizes
    assert fig.layout.paper_bgcolor == "white"


def test_max_height():
    fig = _heatmap_with_slider()
    assert for_projector(fig, large=False, max_height=300).layout.height == 300


def test_dark_masked_cells_are_dark():
    """The grey of the cells attention may not use would glare on a dark page: dark draws them dim."""
    from explorer.figures.attention import MASK_GREY
    from explorer.figures.projector import DARK_MASK

    mask = np.tri(3, dtype=bool)
    for fig in (attention_heatmap(np.full((3, 3), 1 / 3), list("abc"), list("abc"), mask=mask),
                attention_mosaic(np.full((1, 2, 3, 3), 1 / 3), list("abc"), list("abc"), mask=mask)):
        masked = lambda f: next(t for t in f.data if t.name == "masked")  # noqa: E731
        assert masked(fig).colorscale[0][1] == MASK_GREY
        assert {c for _, c in masked(for_projector(fig, large=False, dark=True)).colorscale} == {DARK_MASK}
        assert masked(fig).colorscale[0][1] == MASK_GREY   # the original untouched
