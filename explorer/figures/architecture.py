"""Architecture figures: the block diagram of a config, and its parameters by part."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from explorer.config import human
from explorer.figures import diagram
from explorer.figures.layout import BAR_LINE, CATEGORY_AXIS, PALETTE, figure, no_template


def architecture_diagram(cfg, **kwargs) -> go.Figure:
    """The block diagram of a config (explorer/figures/diagram.py); it sets every colour itself."""
    no_template()
    return diagram.architecture_diagram(cfg, **kwargs)


def block_diagram(cfg, kind="encoder", **kwargs) -> go.Figure:
    """One block (or the LM head) of a config alone (explorer/figures/diagram.py `block_diagram`)."""
    no_template()
    return diagram.block_diagram(cfg, kind, **kwargs)


def param_breakdown(parts, title="", layout=None, unit="parameters") -> go.Figure:
    """Counts by part as horizontal bars with their shares: parameters by part (from `config.param_count`;
    "total" is left out), or any other counts in `unit` (a class's predictions per choice)."""
    items = [(k, v) for k, v in parts.items() if k != "total"]
    total = sum(v for _, v in items) or 1
    names, counts = [str(k) for k, _ in items], [v for _, v in items]
    bar = go.Bar(
        x=counts, y=names, orientation="h", marker=dict(color=PALETTE[0], line=BAR_LINE),
        text=[f"{human(v)} ({100 * v / total:.0f}%)" for v in counts],
        textposition="outside", cliponaxis=False, customdata=[100 * v / total for v in counts],
        hovertemplate=f"%{{y}}<br>%{{x:,}} {unit} (%{{customdata:.1f}}%)<extra></extra>")
    room = 1.3 * max(counts, default=0) or 1  # for the count written outside the longest bar
    whole = {} if unit == "parameters" else dict(dtick=max(1, math.ceil(room / 5)), tickformat="d")  # no 0.5 student
    return figure([bar], title or f"{human(total)} {unit}", 120 + 34 * len(names), layout,
                  xaxis=dict(title=unit, range=[0, room], **whole), yaxis=dict(CATEGORY_AXIS, autorange="reversed"))


__all__ = ["architecture_diagram", "block_diagram", "param_breakdown"]
