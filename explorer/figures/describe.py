"""A chart in words and as a table, for a screen reader (WCAG 1.1.1): `describe(fig)` says in a sentence or
two what the figure's own data show (the largest cell of a heatmap and where it is, each curve's start, end
and extreme, the largest bar; a builder may put a better sentence in `layout.meta["summary"]`, as the
attention mosaic does with its sharpest head), and `table(fig)` gives its data as rows. Both read only the
figure, so the words always match what is drawn; ui/widgets.py puts them beside every chart."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go

MAX_TRACES = 4          # curves named in a description; the rest are counted
MAX_ROWS, MAX_COLS = 60, 24


def plain(text) -> str:
    """A Plotly string without its tags (<br>, <b>, <sup>) and entities, on one line."""
    text = re.sub(r"<br\s*/?>", " ", str(text or ""))
    text = re.sub(r"<[^>]+>", "", text).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return " ".join(text.split())


def title(fig: go.Figure) -> str:
    return plain(fig.layout.title.text) or "Chart"


def _num(v) -> str:
    """A number in three figures; a label (already plain text) as it is."""
    return f"{v:.3g}" if isinstance(v, int | float | np.floating | np.integer) else str(v)


def _axis(trace, which: str, n: int, fig: go.Figure | None = None) -> list:
    """The n labels along a trace's x or y: its own values, else the axis's tick texts at 0..n-1."""
    values = getattr(trace, which, None)
    values = list(values) if values is not None and len(values) == n else list(range(n))
    axis = getattr(fig.layout, f"{which}axis", None) if fig is not None else None
    if axis is not None and axis.ticktext is not None and axis.tickvals is not None:   # labels by position
        at = {v: plain(t) for v, t in zip(axis.tickvals, axis.ticktext)}
        return [at.get(v, v) for v in values]
    return [plain(v) if isinstance(v, str) else v for v in values]


def _heatmap(trace, fig) -> str:
    z = np.asarray(trace.z, dtype=float)
    if z.ndim != 2 or not np.isfinite(z).any():
        return "a heatmap with no values"
    rows, cols = z.shape
    r, c = np.unravel_index(np.nanargmax(z), z.shape)
    y, x = _axis(trace, "y", rows, fig), _axis(trace, "x", cols, fig)
    return (f"a heatmap of {rows} rows by {cols} columns, values from {_num(np.nanmin(z))} to "
            f"{_num(np.nanmax(z))}; the largest is at row {_num(y[r])}, column {_num(x[c])}")


def _line(trace, fig) -> str:
    y = np.asarray([v for v in (trace.y if trace.y is not None else ()) if v is not None], dtype=float)
    if not y.size or not np.isfinite(y).any():
        return f"{plain(trace.name) or 'a curve'} with no values"
    x = _axis(trace, "x", len(trace.y))
    low = int(np.nanargmin(y))
    return (f"{plain(trace.name) or 'a curve'} goes from {_num(y[0])} to {_num(y[-1])} over {len(y)} points "
            f"(lowest {_num(y[low])} at {_num(x[low])}, highest {_num(np.nanmax(y))})")


def _bar(trace, fig) -> str:
    horizontal = trace.orientation == "h"
    values = np.asarray(trace.x if horizontal else trace.y, dtype=float)
    labels = list(trace.y if horizontal else trace.x) if (trace.y if horizontal else trace.x) is not None else []
    if not values.size:
        return "bars with no values"
    labels = labels if len(labels) == len(values) else list(range(len(values)))
    top = int(np.nanargmax(values))
    return f"{len(values)} bars; the largest is {_num(plain(labels[top]))} at {_num(values[top])}"


def describe(fig: go.Figure) -> str:
    """One or two sentences of what `fig` shows, from its data."""
    meta = fig.layout.meta
    if isinstance(meta, dict) and meta.get("summary"):   # a builder that knows better says it (the mosaic)
        return f"{title(fig)}: {plain(meta['summary'])}."
    parts, kinds = [], {"heatmap": _heatmap, "scatter": _line, "scattergl": _line, "bar": _bar}
    traces = [t for t in fig.data if t.type in kinds and t.visible is not False]
    for trace in traces[:MAX_TRACES]:
        parts.append(kinds[trace.type](trace, fig))
    if len(traces) > MAX_TRACES:
        parts.append(f"and {len(traces) - MAX_TRACES} more")
    if not parts:   # a diagram: its boxes are shapes and their words annotations
        words = [plain(a.text) for a in fig.layout.annotations or () if a.text]
        return f"{title(fig)}: a diagram" + (f" of {', '.join(words[:8])}" if words else "") + "."
    return f"{title(fig)}: " + "; ".join(parts) + "."


def table(fig: go.Figure) -> tuple[pd.DataFrame, bool]:
    """The figure's data as a table (at most MAX_ROWS x MAX_COLS cells) and whether it was cut."""
    frames, cut = [], False
    for i, trace in enumerate(fig.data):
        name = plain(trace.name) or f"trace {i + 1}"
        if trace.type == "heatmap" and trace.z is not None:
            z = np.asarray(trace.z, dtype=float)
            if z.ndim != 2:
                continue
            cut |= z.shape[0] > MAX_ROWS or z.shape[1] > MAX_COLS
            z = z[:MAX_ROWS, :MAX_COLS]
            cols = [str(c) for c in _axis(trace, "x", np.asarray(trace.z).shape[1], fig)][:MAX_COLS]
            rows = [str(r) for r in _axis(trace, "y", np.asarray(trace.z).shape[0], fig)][:MAX_ROWS]
            frame = pd.DataFrame(np.round(z, 4), index=rows, columns=_unique(cols))
            frame.index.name = name
            return frame, cut                       # one heatmap is one table
        if trace.type in ("scatter", "scattergl", "bar") and (trace.x is not None or trace.y is not None):
            x = list(trace.x) if trace.x is not None else list(range(len(trace.y)))
            y = list(trace.y) if trace.y is not None else [None] * len(x)
            frames.append(pd.DataFrame({"series": name, "x": [plain(v) if isinstance(v, str) else v for v in x],
                                        "y": y}))
    if not frames:
        return pd.DataFrame(), False
    out = pd.concat(frames, ignore_index=True)
    return out.head(MAX_ROWS), len(out) > MAX_ROWS


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


__all__ = ["describe", "table", "title", "plain"]
