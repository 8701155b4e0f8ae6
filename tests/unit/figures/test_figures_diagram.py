"""The architecture diagram and the one-block diagram: blocks, sublayers and norms where the config puts
them, the positional encoding, concrete shapes, readable boxes that do not overlap."""

from __future__ import annotations

import pytest

from explorer.config import ModelConfig
from explorer.figures.architecture import architecture_diagram


def _names(fig, prefix):
    return [s.name for s in fig.layout.shapes if (s.name or "").startswith(prefix)]


def _texts(fig, needle):
    return [a.text for a in fig.layout.annotations if needle in (a.text or "")]


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_diagram_encoder_decoder_blocks_sublayers_and_norm_placement(norm):
    cfg = ModelConfig(arch="encoder-decoder", n_encoder_layers=3, n_decoder_layers=5, norm=norm)
    fig = architecture_diagram(cfg)
    assert sorted(_names(fig, "block:")) == ["block:decoder", "block:encoder"]
    subs = _names(fig, "sublayer:")
    assert sorted(subs) == ["sublayer:cross-attention", "sublayer:ffn", "sublayer:ffn",
                            "sublayer:masked-self-attention", "sublayer:self-attention"]
    assert _texts(fig, "N = 3 ×") and _texts(fig, "N = 5 ×")
    if norm == "pre":  # one LayerNorm before each of the 5 sublayers + a final one per stack
        assert len(_texts(fig, "LayerNorm")) == 7 and len(_texts(fig, "Final LayerNorm")) == 2
        assert not _texts(fig, "Add & Norm") and len(_names(fig, "add")) == 5
    else:  # "Add & Norm" after each sublayer, nothing at the top of the stacks
        assert len(_texts(fig, "Add & Norm")) == 5 and not _texts(fig, "LayerNorm")
        assert not _names(fig, "add")
    assert len(_names(fig, "residual")) == 5 and len(_names(fig, "cross")) == 1
    assert _texts(fig, "encoder output (B, S, 64)") and _texts(fig, "(B, T, 64)")


def test_diagram_cross_wire_ends_at_the_cross_attention_box():
    fig = architecture_diagram(ModelConfig())
    (box,) = [s for s in fig.layout.shapes if s.name == "sublayer:cross-attention"]
    y_mid = (box.y0 + box.y1) / 2
    tips = [(a.x, a.y) for a in fig.layout.annotations if a.showarrow]
    assert any(abs(x - box.x0) < 1e-9 and abs(y - y_mid) < 1e-9 for x, y in tips)


def test_diagram_encoder_classifier_and_decoder_lm_heads():
    enc = architecture_diagram(ModelConfig(arch="encoder", norm="post", activation="gelu"))
    assert _names(enc, "block:") == ["block:encoder"]
    assert sorted(_names(enc, "sublayer:")) == ["sublayer:ffn", "sublayer:self-attention"]
    assert _names(enc, "head:") == ["head:pool", "head:classifier"]
    assert len(_texts(enc, "Add & Norm")) == 2 and _texts(enc, "Feed-forward (GELU)")
    assert not _names(enc, "cross") and not _texts(enc, "Cross-attention")
    dec = architecture_diagram(ModelConfig(arch="decoder", norm="pre", activation="swiglu"))
    assert _names(dec, "block:") == ["block:decoder"]
    assert sorted(_names(dec, "sublayer:")) == ["sublayer:ffn", "sublayer:masked-self-attention"]
    assert _names(dec, "head:") == ["head:linear", "head:softmax"]
    assert len(_texts(dec, "LayerNorm")) == 3 and _texts(dec, "Feed-forward (SwiGLU)")


@pytest.mark.parametrize("pe,box,note", [("sinusoidal", 1, None), ("learned", 1, None),
                                          ("rope", 0, "RoPE"), ("none", 0, "No positional encoding")])
def test_diagram_positional_encoding_box_or_note(pe, box, note):
    fig = architecture_diagram(ModelConfig(arch="decoder", pos_encoding=pe))
    assert len(_names(fig, "input:pe")) == box
    assert len(_names(fig, "input:embedding")) == 1
    if note:
        assert _texts(fig, note) and _names(fig, f"note:{pe}")
    if pe == "rope":
        assert _texts(fig, "rotates q, k inside attention")


def test_diagram_concrete_shapes_and_continuous_inputs():
    fig = architecture_diagram(ModelConfig(arch="encoder", src_vocab_size=0, d_model=32, n_heads=2),
                               batch=8, seq_len=10)
    assert _texts(fig, "(8, 10, 32)") and _texts(fig, "class logits (8, 2)")
    assert not _names(fig, "input:embedding") and _names(fig, "input:vectors")


@pytest.mark.parametrize("cfg", [ModelConfig(), ModelConfig(norm="post", pos_encoding="rope"),
                                 ModelConfig(arch="encoder"), ModelConfig(arch="decoder", n_decoder_layers=96)])
def test_diagram_readable_boxes_do_not_overlap(cfg):
    fig = architecture_diagram(cfg)
    assert all(a.font.size >= 12 for a in fig.layout.annotations if a.text)
    assert fig.layout.xaxis.visible is False and fig.layout.yaxis.scaleanchor == "x"
    boxes = [s for s in fig.layout.shapes if s.type == "rect"]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart = a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0
            assert apart, (a.name, b.name)
    x_lo, x_hi = fig.layout.xaxis.range
    y_lo, y_hi = fig.layout.yaxis.range
    for s in boxes:
        assert x_lo <= s.x0 and s.x1 <= x_hi and y_lo <= s.y0 and s.y1 <= y_hi


def test_a_block_diagram_draws_one_block_with_its_norms_where_the_config_puts_them():
    from explorer.figures.architecture import block_diagram

    names = lambda fig: [s.name for s in fig.layout.shapes]  # noqa: E731
    pre = block_diagram(ModelConfig(norm="pre"), "cross")
    assert names(pre).count("norm:layernorm") == 3 and "sublayer:cross-attention" in names(pre)
    post = block_diagram(ModelConfig(arch="encoder", norm="post"), "encoder")
    assert names(post).count("norm:addnorm") == 2 and "sublayer:cross-attention" not in names(post)
    head = block_diagram(ModelConfig(arch="decoder"), "lm-head")
    assert "head:linear" in names(head) and "block:decoder" not in names(head)
    assert max(f.layout.height for f in (pre, post, head)) < architecture_diagram(ModelConfig()).layout.height


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_diagram_without_residuals_draws_no_residual_lane_and_no_add(norm):
    cfg = ModelConfig(arch="encoder-decoder", n_encoder_layers=2, n_decoder_layers=2, norm=norm, residual="none")
    fig = architecture_diagram(cfg)
    assert not _names(fig, "residual") and not _names(fig, "add") and not _texts(fig, "Add & Norm")
    assert len(_texts(fig, "LayerNorm")) == (7 if norm == "pre" else 5)   # every sublayer keeps its norm
    test_diagram_readable_boxes_do_not_overlap(cfg)
