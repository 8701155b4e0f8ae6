"""Attention figures: the close-up heatmap (tokens on the axes, expected cells outlined, masked cells
greyed), the mosaic of every head and the entropy bars."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures.attention import (
    ATTENTION_SCALE,
    attention_entropy_bars,
    attention_heatmap,
    attention_mosaic,
    mosaic_layout,
)
from tests.unit.figures.samples import TOKS, _heatmaps, _pattern, _softmax


def test_attention_heatmap_axes_values_and_scale():
    pat = _pattern()
    fig = attention_heatmap(pat, TOKS, TOKS, title="L0 H0")
    (hm,) = _heatmaps(fig)
    np.testing.assert_allclose(np.asarray(hm.z), pat)
    assert (hm.zmin, hm.zmax) == (0.0, 1.0)
    assert hm.colorscale == go.Heatmap(colorscale=ATTENTION_SCALE).colorscale
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert list(axis.ticktext) == TOKS          # the real tokens, duplicates included
        assert list(axis.tickvals) == [0, 1, 2, 3, 4]  # ...kept apart by position
    assert fig.layout.yaxis.autorange == "reversed"  # query 0 on top, reading order
    assert {"query", "key", "weight"} <= set(hm.hovertemplate.replace("<br>", " ").split())
    assert tuple(hm.customdata[3][2]) == ("1", "4")  # (query token, key token) of cell (3, 2)
    assert len(fig.data) == 1  # no overlays unless asked


def test_attention_heatmap_expected_outlines_the_right_cells():
    expected = np.eye(5)[::-1]  # reversal: query i attends to key 4 - i
    fig = attention_heatmap(_pattern(), TOKS, TOKS, expected=expected)
    (outline,) = [t for t in fig.data if t.name == "expected"]
    xs = [x for x in outline.x if x is not None]
    ys = [y for y in outline.y if y is not None]
    centres = {(round(np.mean(ys[i:i + 5][:4])), round(np.mean(xs[i:i + 5][:4]))) for i in range(0, len(xs), 5)}
    assert centres == {(i, 4 - i) for i in range(5)}


def test_attention_heatmap_mask_greys_only_blocked_cells_and_keeps_weights():
    mask = np.tril(np.ones((5, 5), bool))
    pat = _pattern() * mask
    fig = attention_heatmap(pat, TOKS, TOKS, mask=mask, zmax=0.5)
    weights, grey = _heatmaps(fig)
    np.testing.assert_allclose(np.asarray(weights.z), pat)
    assert weights.zmax == 0.5
    grey_z = np.asarray(grey.z, dtype=float)
    assert np.all(np.isnan(grey_z[mask])) and np.all(grey_z[~mask] == 1.0)
    assert grey.showscale is False


def test_attention_heatmap_accepts_torch_tensor_and_rectangular_cross_attention():
    torch = pytest.importorskip("torch")
    pat = torch.softmax(torch.randn(3, 6, generator=torch.Generator().manual_seed(0)), dim=-1)
    fig = attention_heatmap(pat, list("abc"), list("uvwxyz"))
    np.testing.assert_allclose(np.asarray(fig.data[0].z), pat.numpy(), rtol=1e-6)
    assert list(fig.layout.xaxis.ticktext) == list("uvwxyz")


def test_mosaic_places_tiles_at_offsets_with_nan_gaps():
    rng = np.random.default_rng(1)
    pats = _softmax(rng.normal(size=(3, 2, 4, 5)))  # (L, H, Q, K)
    fig = attention_mosaic(pats, list("abcd"), list("vwxyz"), layer_names=["enc 0", "enc 1", "dec 0"])
    (hm,) = fig.data
    z = np.asarray(hm.z, dtype=float)
    m = mosaic_layout(2, 4, 5)
    assert fig.layout.meta["row_stride"] == m["row_stride"]
    covered = np.zeros(z.shape, bool)
    for li in range(3):
        for hi in range(2):
            r0, c0 = li * m["row_stride"], hi * m["col_stride"]
            np.testing.assert_allclose(z[r0:r0 + 4, c0:c0 + 5], pats[li, hi])
            covered[r0:r0 + 4, c0:c0 + 5] = True
    assert np.all(np.isnan(z[~covered])) and (~covered).any()
    assert (hm.zmin, hm.zmax) == (0.0, 1.0) and hm.hoverongaps is False
    texts = [a.text for a in fig.layout.annotations]
    assert len(texts) == 6 and "dec 0 H0" in texts and "enc 0 H0" in texts and texts.count("H1") == 3
    r0, c0 = 2 * m["row_stride"] + 1, 1 * m["col_stride"] + 3  # layer 2, head 1, query 1, key 3
    assert tuple(hm.customdata[r0][c0]) == ("dec 0", "1", "b (pos 1)", "y (pos 3)")


def test_mosaic_12x8_is_one_heatmap_and_grows_with_layers():
    rng = np.random.default_rng(2)
    toks = [str(i % 10) for i in range(16)]
    big = attention_mosaic(_softmax(rng.normal(size=(12, 8, 16, 16))), toks, toks)
    assert len(big.data) == 1 and isinstance(big.data[0], go.Heatmap)
    assert len(big.layout.annotations) == 96
    small = attention_mosaic(_softmax(rng.normal(size=(2, 8, 16, 16))), toks, toks)
    assert big.layout.height > small.layout.height
    one = attention_mosaic(_pattern(4, 4)[None, None], list("abcd"), list("abcd"))
    np.testing.assert_allclose(np.asarray(one.data[0].z, dtype=float), _pattern(4, 4))
    assert [a.text for a in one.layout.annotations] == ["L0 H0"]


def test_attention_entropy_bars_one_trace_per_head():
    ent = np.arange(6, dtype=float).reshape(2, 3) / 3
    fig = attention_entropy_bars(ent, layer_names=["L0", "L1"], max_entropy=np.log(5))
    assert [t.name for t in fig.data] == ["H0", "H1", "H2"]
    np.testing.assert_allclose(fig.data[2].y, ent[:, 2])
    assert list(fig.data[0].x) == ["L0", "L1"]
    assert fig.layout.shapes[0].y0 == pytest.approx(np.log(5))


def test_mosaic_greys_masked_cells_in_every_tile_as_the_close_up_does():
    pats = _softmax(np.random.default_rng(3).normal(size=(2, 2, 3, 3)))
    mask = np.tri(3, dtype=bool)  # causal: a query sees itself and the past
    fig = attention_mosaic(pats, list("abc"), list("abc"), mask=mask)
    heat, grey = fig.data
    m = fig.layout.meta
    z = np.asarray(grey.z, dtype=float)
    for li in range(2):
        for hi in range(2):
            tile = z[li * m["row_stride"]:li * m["row_stride"] + 3, hi * m["col_stride"]:hi * m["col_stride"] + 3]
            assert np.array_equal(~np.isnan(tile), ~mask)
    close_up = attention_heatmap(pats[0, 0], "abc", "abc", mask=mask)
    assert grey.name == "masked" and grey.colorscale == close_up.data[1].colorscale  # the same grey
    assert len(attention_mosaic(pats, list("abc"), list("abc"), mask=np.ones((3, 3), bool)).data) == 1
