"""Visitor text made inert: what a visitor gave (link values, nicknames, file names, uploaded tokens, run
names) quoted once for markdown (Streamlit's st.markdown, st.caption, st.warning, ...) and for Plotly
(tick labels, hovers, titles), so it is shown as text, never as a link, an image or markup.

- `md(text)`: a code span, the one markdown construct inside which nothing is parsed (no link, image,
  autolink, directive, emoji or math); its fence is longer than any run of backticks in the text.
- `md_text(text)`: prose that may hold visitor text (a library's error message), on one line: backslash-
  escaped where markdown would start markup (emphasis, code, math, a tag or an entity, a link's `](`, a
  block marker first), and what escapes alone do not stop broken by a zero-width space: GFM's autolinks in
  plain text (https://, www., a@b) and Streamlit's `:name` directives, icons and emoji (checked in
  Chromium with Streamlit 1.67). The rest of the message stays as written.
- `md_prose(text)`: markdown a teacher wrote (a lesson file), kept as markdown (emphasis, lists, math)
  but with nothing fetched or followed: an image becomes its alt text, a link its text with the address
  beside it, autolinks and link definitions plain text. Raw HTML stays escaped by st.markdown's default.
- `label(text)`: for Plotly, `<`, `>` and `&` escaped (Plotly reads tags and entities in every string it
  draws), and a long token shortened with an ellipsis; `hover(text)` the same, kept whole.

All of them neutralise control characters (shown as control pictures, so a newline cannot end a markdown
paragraph) and bidirectional overrides (a right-to-left override would reverse the text around it).
"""

from __future__ import annotations

import re

LABEL_CHARS = 16   # a token's tick label at most (longer ones end in "…"; the hover keeps it whole)
MD_CHARS = 60      # a value quoted in a message at most, by default
ELLIPSIS = "…"
# Bidirectional embeddings, overrides, isolates and marks: they reorder the text around them.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_C0 = re.compile("[\x00-\x1f\x7f]")
_C1 = re.compile("[\x80-\x9f]")
# What starts markup on one line: \ ` * ~ $ < > &, "_" not inside a word, "(" after "]", "[" after a word
# (a directive's ":red["), and a block
# marker at the start (# > - + = or "1." / "1)").
_MARKUP = re.compile(r"([\\`*~$<>&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|(?<=\])\(|(?<=[A-Za-z0-9])\[|^[#>+=-])")
_ORDERED = re.compile(r"^(\d{1,9})([.)])")   # "1." or "1)" first: an ordered list
# Broken by a zero-width space (an escape does not stop them): autolinks, and a colon opening a directive, an
# icon or an emoji (":red[", ":material/", ":smile:").
_AUTOLINK = re.compile(r"(?<=:)(?=//|[A-Za-z])|(?<=www)(?=\.)|(?<=@)", re.IGNORECASE)
_ZWSP = "\u200b"
_PLOTLY = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def clean(text) -> str:
    """`text` as a string with control characters shown as their pictures (U+2400...) and bidirectional
    controls and C1 controls as U+FFFD."""
    text = _C0.sub(lambda m: chr(0x2421) if m.group() == "\x7f" else chr(0x2400 + ord(m.group())), str(text))
    return _BIDI.sub("\ufffd", _C1.sub("\ufffd", text))


def shorten(text, limit: int | None) -> str:
    """`clean(text)` cut to `limit` characters, the last one an ellipsis when it was longer."""
    text = clean(text)
    return text if limit is None or len(text) <= limit else text[:max(0, limit - 1)] + ELLIPSIS


def md(text, limit: int | None = MD_CHARS) -> str:
    """`text` as a markdown code span (at most `limit` characters shown; None: whole)."""
    body = shorten(text, limit) or " "
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    pad = " " if body[0] in "` " or body[-1] in "` " else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def md_text(text, limit: int | None = None) -> str:
    """`text` as plain markdown prose: no markup, no link, no autolink (see the module's docstring)."""
    return _ORDERED.sub(r"\1\\\2", _MARKUP.sub(r"\\\1", _AUTOLINK.sub(_ZWSP, shorten(text, limit))))


_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(([^)\n]*)\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)\n]*)?\)")
_DEFINITION = re.compile(r"^( {0,3})\[([^\]\n]+)\]:", re.MULTILINE)              # [ref]: https://...
_ANGLE = re.compile(r"<(?=[A-Za-z][A-Za-z0-9+.-]{1,31}:|[^\s@<>]+@)")         # <https://...>, <a@b.c>
_BARE = re.compile(r"(?<=[A-Za-z]:)(?=//)|(?<=www)(?=\.)|(?<=@)(?=[A-Za-z0-9])", re.IGNORECASE)


def md_prose(text) -> str:
    """A teacher's markdown with nothing to fetch or follow (see the module's docstring)."""
    text = _IMAGE.sub(lambda m: f"(image: {m.group(1) or 'no description'})", str(text))
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})" if m.group(2) else m.group(1), text)
    text = _DEFINITION.sub(r"\1\\[\2]:", text)
    return _BARE.sub(_ZWSP, _ANGLE.sub(r"\\<", text))


def hover(text) -> str:
    """`text` for a Plotly hover, title or legend: shown literally, whole."""
    return clean(text).translate(_PLOTLY)


def label(text, limit: int | None = LABEL_CHARS) -> str:
    """`text` for a Plotly tick label or cell text: shown literally, shortened to `limit` characters."""
    return shorten(text, limit).translate(_PLOTLY)


__all__ = ["LABEL_CHARS", "MD_CHARS", "ELLIPSIS", "clean", "shorten", "md", "md_text", "md_prose", "hover", "label"]
