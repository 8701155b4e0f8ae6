"""Hostile visitor text for the tests that check it stays inert (explorer/quoting.py): the values, a TSV of
pairs made of such tokens, and the checks of what reaches markdown and Plotly. Every value names ex.com, so a
check only has to ask whether "ex.com" (or a tag) survived outside a code span or unescaped."""

from __future__ import annotations

import json
import re

HOST = "ex.com"
VALUES = [
    "1` [click](https://ex.com/a) `",
    "1e-4:1e-2:log` ![i](https://ex.com/p.png)",
    "<i>it</i><b>B</b><br>&amp;<img src=https://ex.com/q.png>",
    "https://ex.com/" + "x" * 10_000,
    "a\x00\x1b[31m\nb\r\n\n# https://ex.com/ctl\u202eevil\u2066",
    "שלום עולם مرحبا www.ex.com",
    ":red[r] :material/home: $x$ [a](https://ex.com) a@ex.com",
]
# Tokens of an uploaded TSV: printable, no tab or space (a token is what lies between spaces).
TOKENS = ["<i>it</i>", "<b>B</b>", "<br>", "&amp;", "`[c](https://ex.com)`", "![i](https://ex.com/t.png)",
          "T" * 38 + "ex.com", "שלום"]
MARKUP = ("<i>it", "<b>B", "<br>&", "<img", "&amp;<")   # Plotly markup from a hostile value, drawn as markup


def tsv(n: int = 60) -> str:
    """Pairs source<TAB>target whose tokens are TOKENS (reversal of 2-4 of them), n distinct sources."""
    lines = []
    for i in range(n):
        k = 2 + i % 3
        src = [TOKENS[(i + j * (1 + i // len(TOKENS))) % len(TOKENS)] for j in range(k)] + [f"n{i}"]
        lines.append(" ".join(src) + "\t" + " ".join(reversed(src)))
    return "\n".join(lines) + "\n"


def outside_code(markdown: str) -> str:
    """The markdown with its code spans (CommonMark: a run of backticks up to the next run of the same length)
    blanked out: what markdown parses. A backslash-escaped character stays as it is, escape included."""
    out, i, n = [], 0, len(markdown)
    while i < n:
        c = markdown[i]
        if c == "\\" and i + 1 < n:
            out.append(markdown[i:i + 2])
            i += 2
        elif c == "`":
            j = i
            while j < n and markdown[j] == "`":
                j += 1
            close = next((m.start() for m in re.finditer("`+", markdown[j:]) if len(m.group()) == j - i), None)
            if close is None:
                out.append(markdown[i:j])   # no closing run: literal backticks
                i = j
            else:
                out.append(" ")
                i = j + close + (j - i)
        else:
            out.append(c)
            i += 1
    return "".join(out)


def live_markdown(markdown: str) -> list[str]:
    """What of a hostile value markdown would parse as a link, an image, an autolink or a tag: [] if none."""
    parsed = outside_code(markdown)
    unescaped = re.sub(r"\\.", "", parsed)
    found = [m for m in ("](https://ex.com", "![i](", "<i>it", "<b>B", "<img") if m in unescaped]
    return found + re.findall(r"(?:https?:/|www\.|@)ex\.com", parsed.replace("\\", ""))


def strings(spec, key: str = "") -> list[tuple[str, str]]:
    """Every (key, string) of a Plotly figure's JSON, but the templates the figure builders write."""
    if isinstance(spec, dict):
        return [s for k, v in spec.items() if k not in ("hovertemplate", "texttemplate") for s in strings(v, k)]
    if isinstance(spec, list):
        return [s for v in spec for s in strings(v, key)]
    return [(key, spec)] if isinstance(spec, str) else []


def live_plotly(spec: dict | str) -> list[tuple[str, str]]:
    """The strings of a figure that Plotly would draw with a hostile value's markup: [] if none."""
    spec = json.loads(spec) if isinstance(spec, str) else spec
    return [(k, s[:80]) for k, s in strings(spec) if any(m in s for m in MARKUP)]
