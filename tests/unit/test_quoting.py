"""Visitor text is inert (explorer/quoting.py): a code span nothing breaks out of, escaped prose with no
autolink, Plotly text with its tags and entities escaped, long tokens shortened in labels only, control and
bidirectional characters neutralised."""

import html

import pytest

from explorer import quoting
from explorer.figures.attention import attention_heatmap, attention_mosaic
from explorer.figures.outputs import output_heatmap
from tests.hostile import TOKENS, VALUES, live_markdown, live_plotly, outside_code


@pytest.mark.parametrize("value", VALUES + TOKENS)
def test_a_quoted_value_is_one_code_span_holding_the_value(value):
    quoted = quoting.md(value, None)
    assert outside_code(quoted).strip() == ""          # nothing of it is left for markdown to parse
    assert live_markdown(f"Part of this link was not used: {quoted}.") == []
    fence = quoted[:len(quoted) - len(quoted.lstrip("`"))]
    body = quoted[len(fence):-len(fence)]
    body = body[1:-1] if body.startswith(" ") and body.endswith(" ") and body.strip() else body
    assert body == quoting.clean(value)


def test_an_unquoted_value_is_caught_by_the_check():   # the check itself can fail
    assert live_markdown(f"`x={VALUES[0]}`") and live_markdown(VALUES[1]) and live_markdown(VALUES[5])
    assert live_plotly({"layout": {"xaxis": {"ticktext": TOKENS}}})


@pytest.mark.parametrize("value", VALUES)
def test_prose_is_escaped_and_never_autolinked(value):
    text = quoting.md_text(value)
    assert live_markdown(text) == []
    assert text.replace("\\", "").replace("\u200b", "") == quoting.clean(value).replace("\\", "")


def test_control_and_bidirectional_characters_are_neutralised():
    text = quoting.clean("a\x00b\nc\x1b\x7f\x85\u202eevil\u2066x\u200fy")
    assert text == "a\u2400b\u240ac\u241b\u2421\ufffd\ufffdevil\ufffdx\ufffdy"
    assert "\n" not in quoting.md("a\n\nb") and "\u202e" not in quoting.label("\u202eab")
    assert quoting.clean("שלום مرحبا") == "שלום مرحبا"    # right-to-left letters stay


def test_plotly_text_is_escaped_and_long_tokens_shortened_in_labels_only():
    assert quoting.hover("<i>it</i> &amp;") == "&lt;i&gt;it&lt;/i&gt; &amp;amp;"
    long = "x" * 40
    assert quoting.label(long) == "x" * (quoting.LABEL_CHARS - 1) + "…" and quoting.hover(long) == long
    assert html.unescape(quoting.label("<b>B</b>")) == "<b>B</b>"   # Plotly draws the text itself


def test_token_figures_draw_hostile_tokens_as_text():
    toks = TOKENS
    n = len(toks)
    heat = attention_heatmap([[1 / n] * n] * n, toks, toks)
    mosaic = attention_mosaic([[[[1 / n] * n] * n]], toks, toks)
    outputs = output_heatmap([[1 / n] * n] * 2, ["p0", toks[0]], toks)
    for fig in (heat, mosaic, outputs):
        assert live_plotly(fig.to_plotly_json()) == []
    ticks = list(heat.layout.xaxis.ticktext)
    assert ticks[0] == "&lt;i&gt;it&lt;/i&gt;" and max(len(html.unescape(t)) for t in ticks) <= quoting.LABEL_CHARS
    assert html.unescape(heat.data[0].customdata[0][6][1]) == toks[6]   # the hover keeps the whole token
