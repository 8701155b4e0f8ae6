"""A run report: one self-contained HTML file (Plotly's JavaScript inlined, nothing fetched from any
network) with a model's config, recipe, curves, attention, time-lapse, gradients, output entropy and
metrics. `python -m explorer report NAME --out FILE.html`, or the Download report button (Runs, Train).

Every chart is the app's own figure (explorer/export/kinds.py); the time-lapse is made to play in
Plotly itself (`figures.attention.playable`), as there is no server behind the file.
"""

from __future__ import annotations

import html
import math
from datetime import UTC, datetime

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from explorer.export.kinds import KINDS, attention_mosaics
from explorer.figures.attention import playable
from explorer.store.subject import Subject

PLOT_CONFIG = {"displaylogo": False, "responsive": True}
MAX_METRIC_ROWS = 20  # evaluated steps listed in the metrics table, evenly spaced (the last always)
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1200px;
       padding: 16px 24px 48px; color: #1f2328; line-height: 1.45; }
h1 { font-size: 1.7rem; margin-bottom: 0.2rem; } h2 { font-size: 1.25rem; margin-top: 2rem;
     border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
.muted { color: #59636e; } .grid { display: flex; flex-wrap: wrap; gap: 24px; }
table { border-collapse: collapse; font-size: 0.9rem; margin: 8px 0; }
td, th { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; } th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.figure { width: 100%; margin: 8px 0 16px; }
"""


def _cell(value) -> str:
    if isinstance(value, float):
        text = "—" if math.isnan(value) else f"{value:.6g}"
        return f'<td class="num">{text}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="num">{value:,}</td>'
    return f"<td>{html.escape('—' if value is None else str(value))}</td>"


def _pairs(title: str, values: dict) -> str:
    if not values:
        return f"<div><h3>{html.escape(title)}</h3><p class='muted'>not recorded</p></div>"
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th>{_cell(v)}</tr>" for k, v in values.items())
    return f"<div><h3>{html.escape(title)}</h3><table>{rows}</table></div>"


def _frame(table: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(_cell(v.item() if hasattr(v, "item") else v) for v in row) + "</tr>"
                   for row in table.itertuples(index=False))
    return f"<table><tr>{head}</tr>{body}</table>"


def evaluated_steps(history: pd.DataFrame) -> pd.DataFrame:
    """The steps that measured validation metrics, at most MAX_METRIC_ROWS of them (the last always)."""
    cols = [c for c in ("step", "loss", "token_acc", "val_loss", "val_token_acc", "val_exact") if c in history]
    if "val_loss" not in history.columns:
        return history[cols].tail(1)
    rows = history[history["val_loss"].notna()][cols]
    if len(rows) > MAX_METRIC_ROWS:
        stride = math.ceil(len(rows) / MAX_METRIC_ROWS)
        rows = pd.concat([rows.iloc[:-1:stride], rows.iloc[-1:]])
    return rows


class _Charts:
    """Figures as <div>s; the first one carries plotly.js inline, the rest share it."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, fig: go.Figure) -> str:
        self.count += 1
        div = pio.to_html(fig, full_html=False, include_plotlyjs=self.count == 1, config=PLOT_CONFIG,
                          div_id=f"chart-{self.count}", include_mathjax=False, auto_play=False)
        return f'<div class="figure">{div}</div>'


def _figure_or_note(chart: _Charts, kind: str, s: Subject, example: int) -> str:
    try:
        fig = KINDS[kind].build(s, example)
    except ValueError as e:
        return f"<p class='muted'>{html.escape(str(e))}.</p>"
    return chart(playable(fig) if kind == "timelapse" and fig.layout.sliders else fig)


def build_report(s: Subject, example: int = 0) -> str:
    """The report of subject s as one HTML document (a str); `example` picks the validation input."""
    chart, src = _Charts(), s.task.example("val", example)[0]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    source = {"shipped": "a shipped model", "run": "a saved run", "session": "a run of an app session"}[s.source]
    parts = [f"<h1>{html.escape(s.name)}</h1>",
             f"<p class='muted'>Transformer Explorer report · {source} · task {html.escape(s.task.name)} · "
             f"written {when}. Every chart is interactive and drawn by the Plotly inside this file: it opens "
             "offline.</p>",
             "<h2>Configuration and recipe</h2><div class='grid'>",
             _pairs("Model", s.model.cfg.to_dict()), _pairs("Task", s.task.cfg.to_dict()),
             _pairs("Recipe (training settings)", s.train), "</div>",
             "<h2>Curves</h2>", _figure_or_note(chart, "curves", s, example),
             _figure_or_note(chart, "accuracy", s, example),
             f"<h2>Attention</h2><p class='muted'>Validation example {example}: "
             f"<code>{html.escape(' '.join(map(str, s.task.position_labels(list(src)))))}</code>. Rows of tiles "
             "are layers, columns heads; in each tile rows are queries, columns keys.</p>"]
    parts += [chart(fig) for fig in attention_mosaics(s, example).values()]
    parts += ["<h2>Attention time-lapse</h2><p class='muted'>Press Play, or drag the slider: the head as it "
              "was at each snapshot recorded while the model trained.</p>",
              _figure_or_note(chart, "timelapse", s, example),
              "<h2>Gradient norms per layer</h2>", _figure_or_note(chart, "gradients", s, example),
              "<h2>Output entropy</h2>", _figure_or_note(chart, "entropy", s, example),
              "<h2>Metrics</h2><div class='grid'>", _pairs("Final", s.final), "</div>"]
    if not s.history.empty:
        parts += ["<h3>Evaluated steps</h3>", _frame(evaluated_steps(s.history))]
    body = "\n".join(parts)
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(s.name)} · Transformer Explorer report</title><style>{STYLE}</style></head>"
            f"<body>\n{body}\n</body></html>\n")


__all__ = ["build_report", "evaluated_steps", "MAX_METRIC_ROWS"]
