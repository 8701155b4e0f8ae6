"""ALiBi (Press, Smith & Lewis, 2022): with queries and keys silenced, attention is the softmax of the bias."""

import pytest
import torch

from explorer.config import ModelConfig
from explorer.inspect import capture
from explorer.model import MultiHeadAttention, build_model


def slopes(h: int) -> torch.Tensor:
    return torch.tensor([2.0 ** (-8 * i / h) for i in range(1, h + 1)])  # the paper's m_1..m_H


def silence_queries_and_keys(model) -> None:
    """q = k = 0 everywhere, so every score is the bias alone."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, MultiHeadAttention):
                d = m.in_proj_weight.size(1)
                m.in_proj_weight[: 2 * d].zero_()
                m.in_proj_bias[: 2 * d].zero_()


def expected(h: int, t: int, causal: bool) -> torch.Tensor:
    i, j = torch.arange(t)[:, None], torch.arange(t)[None, :]
    scores = -slopes(h)[:, None, None] * (i - j).abs().float()          # (H, T, T)
    if causal:
        scores = scores.masked_fill(j > i, float("-inf"))
    return scores.softmax(-1)


@pytest.mark.parametrize("heads", [4, 8])
def test_silenced_attention_is_the_softmax_of_the_bias(heads):
    cfg = ModelConfig(d_model=32, n_heads=heads, n_encoder_layers=2, n_decoder_layers=2, d_ff=32,
                      src_vocab_size=13, tgt_vocab_size=13, pos_encoding="alibi")
    model = build_model(cfg, seed=0).eval()
    silence_queries_and_keys(model)
    src, tgt = torch.randint(3, 13, (2, 9)), torch.randint(3, 13, (2, 6))
    with torch.no_grad(), capture(model) as cache:
        model(src, tgt)
    for layer in range(2):
        enc, dec = cache.attention["enc_self"][layer], cache.attention["dec_self"][layer]
        assert torch.allclose(enc, expected(heads, 9, causal=False).expand_as(enc), atol=1e-6)
        assert torch.allclose(dec, expected(heads, 6, causal=True).expand_as(dec), atol=1e-6)
        cross = cache.attention["cross"][layer]                          # unbiased: uniform over the source
        assert torch.allclose(cross, torch.full_like(cross, 1 / 9), atol=1e-6)


def test_lm_and_classifier_get_the_causal_and_the_symmetric_bias():
    for arch, causal in (("decoder", True), ("encoder", False)):
        cfg = ModelConfig(arch=arch, d_model=16, n_heads=4, n_encoder_layers=1, n_decoder_layers=1, d_ff=16,
                          src_vocab_size=13, tgt_vocab_size=13, pos_encoding="alibi")
        model = build_model(cfg, seed=1).eval()
        silence_queries_and_keys(model)
        with torch.no_grad(), capture(model) as cache:
            model(torch.randint(3, 13, (1, 7)))
        (kind,) = cache.attention
        assert torch.allclose(cache.attention[kind][0][0], expected(4, 7, causal), atol=1e-6)


def test_alibi_adds_nothing_to_the_embeddings_and_has_no_parameters():
    cfg = ModelConfig(d_model=16, n_heads=4, src_vocab_size=13, tgt_vocab_size=13, pos_encoding="alibi")
    model = build_model(cfg, seed=0)
    x = torch.randn(2, 5, 16)
    assert torch.equal(model.encoder.pos(x), x)
    assert not list(model.encoder.pos.parameters())
    assert not any("slopes" in k for k in model.state_dict())   # checkpoints stay the same tensors


@pytest.mark.parametrize("pe", ["alibi", "sinusoidal"])
def test_an_alibi_encoder_decoder_cannot_tell_a_source_from_its_reverse(pe):
    """The encoder's bias -m|i - j| is mirror-symmetric and cross-attention is unbiased, so reversing the
    source reverses the memory, which cross-attention reads as a set: the decoder's output is unchanged.
    That is why ALiBi cannot learn reversal in pe-types; sinusoids break the symmetry."""
    cfg = ModelConfig(d_model=16, n_heads=4, d_ff=32, src_vocab_size=13, tgt_vocab_size=13, pos_encoding=pe)
    model = build_model(cfg, seed=0).eval()
    src, tgt = torch.randint(3, 13, (3, 8)), torch.randint(3, 13, (3, 6))
    with torch.no_grad():
        same = torch.allclose(model(src, tgt), model(src.flip(1), tgt), atol=1e-5)
    assert same == (pe == "alibi")


@pytest.mark.parametrize("causal", [False, True])
def test_alibi_attention_equals_nn_multihead_attention_given_the_bias_as_its_mask(causal):
    from torch import nn

    from explorer.positional import make_positional
    cfg = ModelConfig(d_model=16, n_heads=4, pos_encoding="alibi")
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    ours = MultiHeadAttention(cfg).eval()
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(2, 7, 16)
    bias = expected(4, 7, causal).log()                                  # log softmax: the bias up to a row constant
    with torch.no_grad():
        theirs = ref(x, x, x, attn_mask=bias.repeat(2, 1, 1), need_weights=False)[0]   # (B*H, T, T), batch-major
        assert (ours(x, causal=causal, pos=make_positional(cfg)) - theirs).abs().max() < 1e-5
        assert (ours(x, causal=causal) - theirs).abs().max() > 1e-3      # without the bias: not the same
