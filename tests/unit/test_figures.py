"""Figure builders: structure of the returned plotly figures, from small deterministic data."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from explorer.config import ModelConfig, param_count
from explorer.figures.architecture import architecture_diagram, param_breakdown
from explorer.figures.attention import (
    ATTENTION_SCALE,
    attention_entropy_bars,
    attention_heatmap,
    attention_mosaic,
    mosaic_layout,
)
from explorer.figures.curves import line_chart, training_curves
from explorer.figures.gradients import grad_norm_heatmap, grad_norm_profile
from explorer.figures.interpret import (
    ablation_heatmap,
    cosine_heatmap,
    embedding_scatter,
    heads_over_training_lines,
    lens_heatmap,
    parts_bars,
    patching_heatmap,
)
from explorer.figures.layout import (
    AXIS_TITLE_PX,
    COLORBAR,
    COLORBAR_PAD,
    LEGEND_LINE_PX,
    LEGEND_ROW_PX,
    X_LABELS_PX,
    text_px,
)
from explorer.figures.outputs import entropy_chart, output_heatmap
from explorer.figures.positional import pe_heatmap, similarity_heatmap
from explorer.figures.results import bar_with_error, sweep_heatmap

TOKS = ["3", "1", "4", "1", "5"]  # a repeated token on purpose


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _pattern(q=5, k=5, seed=0):
    return _softmax(np.random.default_rng(seed).normal(size=(q, k)))


def _heatmaps(fig):
    return [t for t in fig.data if isinstance(t, go.Heatmap)]


# ------------------------------------------------------------------------------------ attention

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
    assert len(texts) == 6 and "dec 0 H1" in texts and "enc 0 H0" in texts
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


# ------------------------------------------------------------------------------------- heatmaps

def test_pe_heatmap_fixed_diverging_scale():
    table = np.sin(np.arange(20 * 8).reshape(20, 8) / 7)
    fig = pe_heatmap(table, title="PE")
    (hm,) = fig.data
    np.testing.assert_allclose(np.asarray(hm.z), table)
    assert (hm.zmin, hm.zmax) == (-1.0, 1.0)
    assert fig.layout.yaxis.title.text == "position" and fig.layout.xaxis.title.text == "dimension"


def test_similarity_heatmap_symmetric_default_and_explicit_range():
    m = np.array([[1.0, -0.5], [-0.5, 1.0]]) * 0.8
    (hm,) = similarity_heatmap(m, labels=["p0", "p1"]).data
    assert (hm.zmin, hm.zmax) == (-0.8, 0.8)
    fig = similarity_heatmap(m, labels=["p0", "p1"], zmin=-1, zmax=1)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1, 1)
    assert list(fig.layout.xaxis.ticktext) == ["p0", "p1"]


def test_output_heatmap_top_k_is_taken_per_position_and_keeps_every_right_answer():
    probs = np.full((3, 6), 0.02)
    probs[0, 4], probs[1, 1], probs[2, 5], probs[2, 4] = 0.9, 0.7, 0.5, 0.3
    probs /= probs.sum(1, keepdims=True)
    vocab = ["<pad>", "a", "b", "c", "d", "e"]
    fig = output_heatmap(probs, ["x", "y", "z"], vocab, top_k=1, targets=[4, 1, 2])
    hm = fig.data[0]
    # each row's best (d, a, e) and the right answers (d, a, b), in vocabulary order: no row is empty
    assert list(fig.layout.xaxis.ticktext) == ["a", "b", "d", "e"]
    np.testing.assert_allclose(np.asarray(hm.z), probs[:, [1, 2, 4, 5]])
    assert (hm.zmin, hm.zmax) == (0.0, 1.0)
    assert list(fig.layout.yaxis.ticktext) == ["x", "y", "z"]
    (target,) = [t for t in fig.data if t.name == "target"]  # all three right answers outlined
    assert sum(v is None for v in target.x) == 3
    shown = set(output_heatmap(probs, ["x", "y", "z"], vocab, top_k=2).layout.xaxis.ticktext)
    assert all({vocab[i] for i in np.argsort(-row, kind="stable")[:2]} <= shown for row in probs)
    assert len(output_heatmap(probs, ["x", "y", "z"], vocab).data[0].z[0]) == 6


def test_sweep_heatmap_writes_values_in_cells():
    vals = np.array([[0.1, 0.2, np.nan], [0.4, 0.5, 0.6]])
    fig = sweep_heatmap(vals, [1, 2, 4], ["16", "32"], "n_heads", "d_model")
    (hm,) = fig.data
    np.testing.assert_allclose(np.asarray(hm.z, dtype=float), vals)
    assert hm.texttemplate and list(hm.x) == ["1", "2", "4"] and (hm.zmin, hm.zmax) == (0.0, 1.0)
    assert "n_heads" in hm.hovertemplate and "d_model" in hm.hovertemplate


def test_grad_norm_heatmap_log_colour_real_values_in_hover():
    norms = np.array([[1e-3, 1e-2, 1e-1], [1.0, 10.0, 100.0]])
    fig = grad_norm_heatmap(norms, ["layer 0", "layer 1"], steps=[0, 10, 20])
    (hm,) = fig.data
    np.testing.assert_allclose(np.asarray(hm.z), np.log10(norms))
    np.testing.assert_allclose(np.asarray(hm.customdata)[..., 0].astype(float), norms)
    assert list(hm.x) == [0, 10, 20] and (hm.zmin, hm.zmax) == (-3, 2)
    assert list(fig.layout.yaxis.ticktext) == ["layer 0", "layer 1"]
    assert fig.layout.yaxis.autorange != "reversed"  # first layer at the bottom


# ------------------------------------------------------------------------------- curves, bars

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


# ------------------------------------------------------------------------------ every figure

def _all_figures():
    x = np.arange(4)
    hist = pd.DataFrame({"step": x, "loss": x[::-1] * 1.0})
    return [
        attention_heatmap(_pattern(), TOKS, TOKS, expected=np.eye(5), mask=np.ones((5, 5), bool)),
        attention_mosaic(_pattern()[None, None], TOKS, TOKS),
        attention_entropy_bars(np.ones((2, 2))),
        pe_heatmap(np.zeros((3, 4))),
        similarity_heatmap(np.eye(3)),
        line_chart({"a": (x, x)}),
        training_curves(hist),
        grad_norm_heatmap(np.ones((2, 3)), ["a", "b"]),
        grad_norm_profile({"a": [1, 2]}),
        grad_norm_profile({"a": [1, 2], "b": [2, 1]}, labels=["enc 0", "dec 0"]),
        param_breakdown({"a": 1, "b": 2, "total": 3}),
        output_heatmap(np.full((2, 3), 1 / 3), ["a", "b"], ["x", "y", "z"], top_k=2),
        entropy_chart([1.0, 2.0], ["a", "b"], max_entropy=1.1),
        sweep_heatmap(np.ones((1, 1)), ["a"], ["b"], "x", "y"),
        bar_with_error(["a"], [1.0], [0.1], reference={"a": 1.0}),
        architecture_diagram(ModelConfig()),
        *_interpret_figures(),
    ]


def _interpret_figures():
    table = pd.DataFrame({"kind": ["cross"] * 3, "layer": [0, 0, 0], "head": pd.array([0, 1, None], "Int64"),
                          "exact_drop": [0.1, 0.2, 0.9]})
    lines = pd.DataFrame({"step": [1, 2], "layer": [0, 0], "head": [0, 0], "match": [0.1, 0.5], "entropy": [1, 0.5]})
    return [ablation_heatmap(table, "cross", focus=("cross", 0, 1)), parts_bars(table),
            lens_heatmap(np.ones((2, 3)), [["a"] * 3] * 2, ["L0", "L1"], TOKS[:3]),
            patching_heatmap(np.zeros((2, 3)), TOKS[:3], ["L0", "L1"], "position"),
            embedding_scatter(np.ones((3, 2)), TOKS[:3], [0.5, 0.2]), embedding_scatter(np.ones((3, 3)), TOKS[:3]),
            cosine_heatmap(np.eye(3), TOKS[:3]), heads_over_training_lines(lines, "entropy", uniform=1.0)]


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
            assert spec["layout"]["xaxis"]["gridcolor"] == spec["layout"]["yaxis"]["gridcolor"] == "#EBF0F8"
            assert spec["layout"]["autotypenumbers"] == "strict"  # token "12" stays a label, not a number
        # Nor a 1-D typed array (plotly's form of a numpy array), which Plotly cannot compare either;
        # 2-D ones (heatmaps' z) reach Plotly as arrays of rows, which it can.
        assert all("shape" in typed for typed in _typed_arrays(spec)), fig.layout.title.text
        for trace in fig.data:
            assert trace.hoverinfo == "skip" or trace.hovertemplate, type(trace).__name__


# ------------------------------------------------------------------------------- the diagram

def _names(fig, prefix):
    return [s.name for s in fig.layout.shapes if (s.name or "").startswith(prefix)]


def _texts(fig, needle):
    return [a.text for a in fig.layout.annotations if needle in (a.text or "")]


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_diagram_encoder_decoder_blocks_sublayers_and_norm_placement(norm):
    cfg = ModelConfig(arch="encoder-decoder", n_encoder_layers=3, n_decoder_layers=5, norm=norm)
    fig = architecture_diagram(cfg)
    assert sorted(_names(fig, "block:")) == ["block:decoder", "block:encoder"]
    subs = _names(fig, "sublayer:")
    assert sorted(subs) == ["sublayer:cross-attention", "sublayer:ffn", "sublayer:ffn",
                            "sublayer:masked-self-attention", "sublayer:self-attention"]
    assert _texts(fig, "N = 3 ×") and _texts(fig, "N = 5 ×")
    if norm == "pre":  # one LayerNorm before each of the 5 sublayers + a final one per stack
        assert len(_texts(fig, "LayerNorm")) == 7 and len(_texts(fig, "Final LayerNorm")) == 2
        assert not _texts(fig, "Add & Norm") and len(_names(fig, "add")) == 5
    else:  # "Add & Norm" after each sublayer, nothing at the top of the stacks
        assert len(_texts(fig, "Add & Norm")) == 5 and not _texts(fig, "LayerNorm")
        assert not _names(fig, "add")
    assert len(_names(fig, "residual")) == 5 and len(_names(fig, "cross")) == 1
    assert _texts(fig, "encoder output (B, S, 64)") and _texts(fig, "(B, T, 64)")


def test_diagram_cross_wire_ends_at_the_cross_attention_box():
    fig = architecture_diagram(ModelConfig())
    (box,) = [s for s in fig.layout.shapes if s.name == "sublayer:cross-attention"]
    y_mid = (box.y0 + box.y1) / 2
    tips = [(a.x, a.y) for a in fig.layout.annotations if a.showarrow]
    assert any(abs(x - box.x0) < 1e-9 and abs(y - y_mid) < 1e-9 for x, y in tips)


def test_diagram_encoder_classifier_and_decoder_lm_heads():
    enc = architecture_diagram(ModelConfig(arch="encoder", norm="post", activation="gelu"))
    assert _names(enc, "block:") == ["block:encoder"]
    assert sorted(_names(enc, "sublayer:")) == ["sublayer:ffn", "sublayer:self-attention"]
    assert _names(enc, "head:") == ["head:pool", "head:classifier"]
    assert len(_texts(enc, "Add & Norm")) == 2 and _texts(enc, "Feed-forward (GELU)")
    assert not _names(enc, "cross") and not _texts(enc, "Cross-attention")
    dec = architecture_diagram(ModelConfig(arch="decoder", norm="pre", activation="swiglu"))
    assert _names(dec, "block:") == ["block:decoder"]
    assert sorted(_names(dec, "sublayer:")) == ["sublayer:ffn", "sublayer:masked-self-attention"]
    assert _names(dec, "head:") == ["head:linear", "head:softmax"]
    assert len(_texts(dec, "LayerNorm")) == 3 and _texts(dec, "Feed-forward (SwiGLU)")


@pytest.mark.parametrize("pe,box,note", [("sinusoidal", 1, None), ("learned", 1, None),
                                          ("rope", 0, "RoPE"), ("none", 0, "No positional encoding")])
def test_diagram_positional_encoding_box_or_note(pe, box, note):
    fig = architecture_diagram(ModelConfig(arch="decoder", pos_encoding=pe))
    assert len(_names(fig, "input:pe")) == box
    assert len(_names(fig, "input:embedding")) == 1
    if note:
        assert _texts(fig, note) and _names(fig, f"note:{pe}")
    if pe == "rope":
        assert _texts(fig, "rotates q, k inside attention")


def test_diagram_concrete_shapes_and_continuous_inputs():
    fig = architecture_diagram(ModelConfig(arch="encoder", src_vocab_size=0, d_model=32, n_heads=2),
                               batch=8, seq_len=10)
    assert _texts(fig, "(8, 10, 32)") and _texts(fig, "class logits (8, 2)")
    assert not _names(fig, "input:embedding") and _names(fig, "input:vectors")


@pytest.mark.parametrize("cfg", [ModelConfig(), ModelConfig(norm="post", pos_encoding="rope"),
                                 ModelConfig(arch="encoder"), ModelConfig(arch="decoder", n_decoder_layers=96)])
def test_diagram_readable_boxes_do_not_overlap(cfg):
    fig = architecture_diagram(cfg)
    assert all(a.font.size >= 12 for a in fig.layout.annotations if a.text)
    assert fig.layout.xaxis.visible is False and fig.layout.yaxis.scaleanchor == "x"
    boxes = [s for s in fig.layout.shapes if s.type == "rect"]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart = a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0
            assert apart, (a.name, b.name)
    x_lo, x_hi = fig.layout.xaxis.range
    y_lo, y_hi = fig.layout.yaxis.range
    for s in boxes:
        assert x_lo <= s.x0 and s.x1 <= x_hi and y_lo <= s.y0 and s.y1 <= y_hi


def test_line_chart_marks_points_when_a_line_would_draw_nothing():
    one = line_chart({"a": ([20], [0.5])})
    many = line_chart({"a": (np.arange(10), np.arange(10.0))})
    assert "markers" in one.data[0].mode and many.data[0].mode == "lines"


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


def test_a_block_diagram_draws_one_block_with_its_norms_where_the_config_puts_them():
    from explorer.figures.architecture import block_diagram

    names = lambda fig: [s.name for s in fig.layout.shapes]  # noqa: E731
    pre = block_diagram(ModelConfig(norm="pre"), "cross")
    assert names(pre).count("norm:layernorm") == 3 and "sublayer:cross-attention" in names(pre)
    post = block_diagram(ModelConfig(arch="encoder", norm="post"), "encoder")
    assert names(post).count("norm:addnorm") == 2 and "sublayer:cross-attention" not in names(post)
    head = block_diagram(ModelConfig(arch="decoder"), "lm-head")
    assert "head:linear" in names(head) and "block:decoder" not in names(head)
    assert max(f.layout.height for f in (pre, post, head)) < architecture_diagram(ModelConfig()).layout.height
