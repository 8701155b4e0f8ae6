"""Output figures: the softmax over the vocabulary per position, and its entropy."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.figures.layout import (
    BAR_LINE,
    COLORBAR,
    LEGEND_BELOW,
    PALETTE,
    as_array,
    as_list,
    cell_outlines,
    figure,
    hline,
    pair_customdata,
    token_axis,
)
from explorer.quoting import hover

OUTPUT_SCALE = "Blues"


def output_heatmap(probs, pos_labels, vocab, top_k=None, title="", targets=None, layout=None,
                   rows: str = "position") -> go.Figure:
    """Softmax rows (T, V): y = position (or what `rows` names), x = vocabulary token. `top_k` keeps, for
    every position, its k most likely tokens: the columns are their union (in vocabulary order), so no row
    is left empty.
    `targets` (T,) vocabulary indices of the right answers: always shown, and outlined."""
    p = as_array(probs)  # (T, V)
    cols = np.arange(p.shape[1])
    if top_k is not None and top_k < p.shape[1]:
        best = np.argsort(-p, axis=1, kind="stable")[:, :top_k]          # (T, k)
        wanted = [best.ravel()] + ([] if targets is None else [np.asarray(list(targets), dtype=int)])
        cols = np.unique(np.concatenate(wanted))
    vocab = [str(vocab[c]) for c in cols]
    traces = [go.Heatmap(
        z=p[:, cols], x=list(range(len(cols))), y=list(range(p.shape[0])), zmin=0.0, zmax=1.0,
        colorscale=OUTPUT_SCALE, customdata=pair_customdata(pos_labels, vocab),
        colorbar=dict(COLORBAR, title="p"),
        hovertemplate=f"{rows} %{{y}} (%{{customdata[0]}})<br>token %{{customdata[1]}}"
                      "<br>p %{z:.3f}<extra></extra>")]
    if targets is not None:
        where = {int(c): i for i, c in enumerate(cols)}
        cells = [(t, where[int(v)]) for t, v in enumerate(targets) if int(v) in where]
        traces.append(cell_outlines(cells, "target"))
    return figure(traces, title, 110 + p.shape[0] * min(36, max(14, 520 // p.shape[0])), layout,
                  xaxis=token_axis(vocab, "token"), legend=LEGEND_BELOW,
                  yaxis=dict(token_axis(pos_labels, rows), autorange="reversed"))


def entropy_chart(entropy, labels, max_entropy=None, title="", layout=None) -> go.Figure:
    """Output entropy per position (T,); the dashed line is log(V), a uniform guess."""
    e = as_array(entropy)  # (T,)
    bar = go.Bar(
        x=list(range(len(e))), y=as_list(e), marker=dict(color=PALETTE[0], line=BAR_LINE),
        customdata=[hover(t) for t in labels],
        hovertemplate="position %{x} (%{customdata})<br>entropy %{y:.3f} nats<extra></extra>")
    line = {} if max_entropy is None else hline(max_entropy, f"log V = {max_entropy:.2f}", left=True)
    return figure([bar], title, 320, layout, **line, xaxis=token_axis(labels, "position"),
                  yaxis=dict(title="entropy (nats)"))


__all__ = ["OUTPUT_SCALE", "output_heatmap", "entropy_chart"]
