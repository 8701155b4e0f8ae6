"""Heatmap figures other than attention: positional tables and similarities, output probabilities,
sweeps and gradient norms over training; their values, axes and fixed colour scales."""

from __future__ import annotations

import numpy as np

from explorer.figures.gradients import grad_norm_heatmap
from explorer.figures.outputs import output_heatmap
from explorer.figures.positional import pe_heatmap, similarity_heatmap
from explorer.figures.results import sweep_heatmap
from explorer.quoting import label


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
    # tick text is quoted for Plotly (explorer.quoting): "<pad>" is written "&lt;pad&gt;", drawn "<pad>"
    assert all({label(vocab[i]) for i in np.argsort(-row, kind="stable")[:2]} <= shown for row in probs)
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
