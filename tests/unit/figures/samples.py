"""Small deterministic inputs for the figure tests, and one of every figure (`_all_figures`), which
tests/unit/figures/test_figures_style.py checks for the house style and tests/unit/figures/test_projector.py
restyles."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.config import ModelConfig
from explorer.figures.architecture import architecture_diagram, param_breakdown
from explorer.figures.attention import attention_entropy_bars, attention_heatmap, attention_mosaic
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
from explorer.figures.learning import fourier_spectrum, grokking_curves, induction_over_training
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
        *_learning_figures(),
    ]


def _learning_figures():
    heads = pd.DataFrame({"step": [1, 2, 1, 2], "layer": [0, 0, 1, 1], "head": [0, 0, 0, 0],
                          "induction": [0.1, 0.1, 0.1, 0.8], "previous_token": [0.2, 0.6, 0.1, 0.1]})
    history = pd.DataFrame({"step": [1, 2], "repeat_loss": [3.0, 0.1]})
    curves = pd.DataFrame({"step": [1, 10, 100], "train_acc": [0.1, 1.0, 1.0], "val_acc": [0.0, None, 1.0],
                           "weight_norm": [30.0, None, 20.0]})
    spectrum = pd.DataFrame({"step": [1, 1, 2, 2], "frequency": [0, 1, 0, 1], "share": [0.5, 0.5, 0.1, 0.9]})
    return [induction_over_training(heads, history), grokking_curves(curves), fourier_spectrum(spectrum)]


def _interpret_figures():
    table = pd.DataFrame({"kind": ["cross"] * 3, "layer": [0, 0, 0], "head": pd.array([0, 1, None], "Int64"),
                          "exact_drop": [0.1, 0.2, 0.9]})
    lines = pd.DataFrame({"step": [1, 2], "layer": [0, 0], "head": [0, 0], "match": [0.1, 0.5], "entropy": [1, 0.5]})
    return [ablation_heatmap(table, "cross", focus=("cross", 0, 1)), parts_bars(table),
            lens_heatmap(np.ones((2, 3)), [["a"] * 3] * 2, ["L0", "L1"], TOKS[:3]),
            patching_heatmap(np.zeros((2, 3)), TOKS[:3], ["L0", "L1"], "position"),
            embedding_scatter(np.ones((3, 2)), TOKS[:3], [0.5, 0.2]), embedding_scatter(np.ones((3, 3)), TOKS[:3]),
            cosine_heatmap(np.eye(3), TOKS[:3]), heads_over_training_lines(lines, "entropy", uniform=1.0)]
