"""The attention time-lapse: one head across a run's attention snapshots, as the Train page, the report
and the GIF export show it (a `z_slider` heatmap; `figures.attention.playable` / `slider_frames` turn it
into a self-playing figure or into stills)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.evaluation import AttentionSnapshot
from explorer.figures.attention import attention_heatmap, z_slider
from explorer.inspect import ATTENTION_KINDS
from explorer.tasks import Task


def expected(task: Task, snap: AttentionSnapshot) -> np.ndarray | None:
    """(Q, K) cells the task calls right for the snapshot's example (cross-attention only), or None."""
    if snap.kind != "cross":
        return None
    return task.expected_cross_attention(task.example("val", 0)[0])


def focus_head(pattern: np.ndarray, want: np.ndarray | None) -> tuple[int, int]:
    """(layer, head) of a snapshot (L, H, Q, K) that puts the most weight on the expected cells (Q, K),
    or, with no expectation, the most focused one (highest mean of each row's largest weight)."""
    score = (pattern * want).sum((-2, -1)) if want is not None else pattern.max(-1).mean(-1)  # (L, H)
    layer, head = np.unravel_index(int(np.argmax(score)), score.shape)
    return int(layer), int(head)


def timelapse_figure(task: Task, snaps: list[AttentionSnapshot], layer: int | None = None,
                     head: int | None = None) -> go.Figure:
    """The head in the last snapshot; with several, a slider over all of them swaps the heatmap in the
    browser. Layer and head default to `focus_head` of the last snapshot."""
    if not snaps:
        raise ValueError("there are no attention snapshots to replay")
    last = snaps[-1]
    want = expected(task, last)
    if layer is None or head is None:
        layer, head = focus_head(last.pattern, want)
    titles = [f"{ATTENTION_KINDS[last.kind]} · L{layer} H{head} · step {s.step}" for s in snaps]
    slider = None if len(snaps) == 1 else z_slider(
        [str(s.step) for s in snaps], [s.pattern[layer, head] for s in snaps], titles, len(snaps) - 1)
    return attention_heatmap(last.pattern[layer, head], last.q_labels, last.k_labels, title=titles[-1],
                             expected=want, slider=slider, play=True)


__all__ = ["expected", "focus_head", "timelapse_figure"]
