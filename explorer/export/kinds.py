"""The app's figures by name, built for one Subject (a shipped model or a saved run): what
`python -m explorer figure KIND` exports and the report shows. Each is drawn by the same builder in
explorer/figures/ as the app's page; nothing here draws a figure of its own.

Adding a kind is one line in KINDS: a name, a help text and `build(subject, example) -> go.Figure`
(ValueError with a message when the subject has nothing to show, e.g. a run without snapshots).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch

from explorer.analysis import views
from explorer.analysis.gradients import grad_norm_table
from explorer.figures.attention import attention_mosaic
from explorer.figures.curves import training_curves
from explorer.figures.gradients import grad_norm_heatmap
from explorer.figures.interpret import ablation_heatmap
from explorer.figures.outputs import entropy_chart, output_heatmap
from explorer.figures.positional import pe_heatmap
from explorer.figures.timelapse import timelapse_figure
from explorer.inspect import ATTENTION_KINDS
from explorer.interpret.stored import ablation_table
from explorer.positional import LearnedEncoding, SinusoidalEncoding, rope_angles
from explorer.store.subject import Subject
from explorer.task_kinds import KINDS as TASK_KINDS
from explorer.tasks import EOS as TASK_EOS

MAX_GRAD_STEPS = 200  # as the Train page: a long run still draws quickly
ABLATION_EXAMPLES = 200  # validation examples a knock-out is measured on, as the Inside the model page
LOSS = {"loss": "train loss", "val_loss": "validation loss"}
ACCURACY = {"token_acc": "train accuracy", "val_token_acc": "validation accuracy",
            "val_exact": "validation exact match"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _example(s: Subject, example: int):
    return s.task.example("val", example)                           # (src, target); ValueError names the range


def attention_view(s: Subject, example: int = 0) -> views.AttentionView:
    src, _ = _example(s, example)
    tgt_in = views.decoder_input(s.model, s.task, src, teacher=False) if s.task.kind == "seq2seq" else None
    return views.attention_for(s.model, s.task, src, tgt_in)


def mosaic(view: views.AttentionView, kind: str) -> go.Figure:
    """Every head of one attention kind, as the Attention page's mosaic (without its click targets)."""
    n_l, n_h = view.patterns[kind].shape[:2]
    title = f"{ATTENTION_KINDS[kind]}: {_plural(n_l, 'layer')} × {_plural(n_h, 'head')}"
    return attention_mosaic(views.masked_for_mosaic(view.patterns[kind], view.masks[kind]), view.q_labels[kind],
                            view.k_labels[kind], title=title, mask=view.masks[kind])


def attention_mosaics(s: Subject, example: int = 0) -> dict[str, go.Figure]:
    view = attention_view(s, example)
    return {kind: mosaic(view, kind) for kind in view.kinds}


def _attention(s: Subject, example: int) -> go.Figure:
    """The mosaic of the attention the task is about (cross for seq2seq, as the Train page's snapshots)."""
    view = attention_view(s, example)
    kind = TASK_KINDS[s.task.kind].attention
    return mosaic(view, kind if kind in view.kinds else view.kinds[-1])


def _positional(s: Subject, _example: int) -> go.Figure:
    cfg, stack = s.model.cfg, getattr(s.model, "encoder", None) or getattr(s.model, "decoder", None)
    pos = getattr(stack, "pos", None)
    if isinstance(pos, (SinusoidalEncoding, LearnedEncoding)):
        table, what = pos.table().detach().numpy(), cfg.pos_encoding
    elif cfg.pos_encoding == "rope":  # cos and sin of every rotation angle, as the Positional encoding page
        angles = rope_angles(cfg.max_len, cfg.d_head, cfg.pe_base)
        table, what = np.stack([np.cos(angles), np.sin(angles)], axis=-1).reshape(cfg.max_len, -1), "rope (cos, sin)"
    else:
        raise ValueError(f"{s.name!r} uses no positional encoding (pos_encoding={cfg.pos_encoding!r}): "
                         "no table to draw")
    return pe_heatmap(table, title=f"Positional encoding of {s.name}: {what}")


def _history(s: Subject):
    if s.history.empty or "step" not in s.history.columns:
        raise ValueError(f"{s.name!r} has no training history (metrics.csv)")
    return s.history


def _curves(s: Subject, _example: int) -> go.Figure:
    h = _history(s).rename(columns=LOSS)
    return training_curves(h, metrics=[m for m in LOSS.values() if m in h.columns], title=f"Loss of {s.name}",
                           layout=dict(yaxis=dict(title="cross-entropy (nats)")))


def _accuracy(s: Subject, _example: int) -> go.Figure:
    h = _history(s).rename(columns=ACCURACY)
    return training_curves(h, metrics=[m for m in ACCURACY.values() if m in h.columns], title=f"Accuracy of {s.name}",
                           layout=dict(yaxis=dict(title="right")), percent=True)


def _gradients(s: Subject, _example: int) -> go.Figure:
    norms, labels, steps = grad_norm_table(_history(s), MAX_GRAD_STEPS)
    if not steps:
        raise ValueError(f"{s.name!r} recorded no gradient norms per layer")
    return grad_norm_heatmap(norms, labels, steps, title=f"Gradient norm per layer of {s.name}")


def _probs(s: Subject, example: int) -> tuple[np.ndarray, list[str], list[str], list | None]:
    """Output softmax (T, V), its row labels, its column labels, the right answers (as the Outputs page)."""
    src, target = _example(s, example)
    task = s.task
    if task.kind == "seq2seq":
        tgt_in = views.decoder_input(s.model, task, src, teacher=False)
        probs = views.output_distribution(s.model, task, src, tgt_in)
        rows = [f"{t}: after {tok}" for t, tok in enumerate(task.tokens(tgt_in))]
        return probs, rows, list(task.vocab), (list(target) + [TASK_EOS])[:len(rows)]
    probs = views.output_distribution(s.model, task, src, None)
    if task.kind == "classify":
        return probs, ["this input"], list(task.class_names), list(target)
    rows = [f"{t}: after {ch}" for t, ch in enumerate(task.position_labels(list(src)))]
    return probs, rows, list(task.vocab), (list(target) or None)


def _outputs(s: Subject, example: int) -> go.Figure:
    probs, rows, vocab, targets = _probs(s, example)
    return output_heatmap(probs, rows, vocab, top_k=min(20, probs.shape[1]), targets=targets,
                          title=f"{s.name}: probability of each token")


def _entropy(s: Subject, example: int) -> go.Figure:
    probs, rows, _, _ = _probs(s, example)
    return entropy_chart(views.row_entropy(probs), [r.split(":")[0] for r in rows],
                         max_entropy=math.log(probs.shape[1]), title=f"Output entropy per position of {s.name}")


def _timelapse(s: Subject, _example: int) -> go.Figure:
    if not s.snapshots and s.source == "shipped":
        raise ValueError(f"{s.name!r} has no attention snapshots for a time-lapse: its training was not replayed; "
                         f"run python -m explorer interpret snapshots --model {s.name}")
    if not s.snapshots:
        raise ValueError(f"{s.name!r} has no attention snapshots for a time-lapse; train a run with "
                         "--snapshot-every N (the app's Train page records them)")
    return timelapse_figure(s.task, list(s.snapshots))


def _ablation(s: Subject, _example: int) -> go.Figure:
    """Every head knocked out in turn (zero mode, 200 validation examples): the Inside the model page's grid, read
    from a shipped model's stored table when it is of these weights."""
    table = ablation_table(s.name if s.source == "shipped" else None, s.model, s.task, "zero", ABLATION_EXAMPLES)
    kinds = [k for k in ATTENTION_KINDS if k in set(table["kind"])]
    return ablation_heatmap(table, kinds, title=f"What knocking out each head costs {s.name}")


@dataclass(frozen=True)
class FigureKind:
    help: str
    build: Callable[[Subject, int], go.Figure]


KINDS: dict[str, FigureKind] = {
    "attention": FigureKind("every head of every layer, one mosaic (the Attention page)", _attention),
    "positional": FigureKind("the model's positional encoding table (the Positional encoding page)", _positional),
    "curves": FigureKind("training and validation loss by step (Train, Runs)", _curves),
    "accuracy": FigureKind("training and validation accuracy by step (Train, Runs)", _accuracy),
    "gradients": FigureKind("gradient norm per layer and step (Train, Gradients)", _gradients),
    "outputs": FigureKind("the output softmax per position (the Outputs page)", _outputs),
    "entropy": FigureKind("the output entropy per position (the Outputs page)", _entropy),
    "timelapse": FigureKind("one head across the run's attention snapshots (Train); .gif animates it", _timelapse),
    "ablation": FigureKind("exact-match drop with each head knocked out (Inside the model)", _ablation),
}


def build_figure(kind: str, s: Subject, example: int = 0) -> go.Figure:
    """KINDS[kind] for subject s; ValueError for an unknown kind or nothing to show."""
    if kind not in KINDS:
        raise ValueError(f"unknown figure kind {kind!r}; choose one of {', '.join(KINDS)}")
    with torch.inference_mode():
        return KINDS[kind].build(s, example)


__all__ = ["KINDS", "FigureKind", "build_figure", "attention_view", "attention_mosaics", "mosaic"]
