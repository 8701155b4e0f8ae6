"""The model against PyTorch's own modules, and the properties the chapter claims."""

import itertools

import pytest
import torch
from torch import nn

from explorer.analysis.equivalence import from_torch
from explorer.config import POS_ENCODINGS, ModelConfig
from explorer.inspect import capture
from explorer.model import DecoderBlock, EncoderBlock, MultiHeadAttention, build_model, init_weights

TOL = 1e-5
PES = POS_ENCODINGS  # every registered encoding
NORMS = ("pre", "post")


def tiny(**kw) -> ModelConfig:
    base = dict(d_model=16, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=32,
                src_vocab_size=13, tgt_vocab_size=13, max_len=24)
    return ModelConfig(**{**base, **kw})


def test_attention_equals_nn_multihead_attention():
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    ours = MultiHeadAttention(tiny()).eval()
    ours.load_state_dict(ref.state_dict())
    x, mem = torch.randn(3, 7, 16), torch.randn(3, 5, 16)
    assert (ours(x) - ref(x, x, x, need_weights=False)[0]).abs().max() < TOL
    assert (ours(x, mem) - ref(x, mem, mem, need_weights=False)[0]).abs().max() < TOL
    pad = torch.zeros(3, 5, dtype=torch.bool)
    pad[0, 3:] = True
    ref_out = ref(x, mem, mem, key_padding_mask=pad, need_weights=False)[0]
    assert (ours(x, mem, mask=~pad[:, None, None, :]) - ref_out).abs().max() < TOL


@pytest.mark.parametrize("norm", NORMS)
def test_encoder_block_equals_transformer_encoder_layer(norm):
    torch.manual_seed(1)
    ref = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=norm == "pre").eval()
    ours = EncoderBlock(tiny(norm=norm)).eval()
    ours.load_state_dict(from_torch(ref.state_dict()))
    x = torch.randn(2, 6, 16)
    assert (ours(x) - ref(x)).abs().max() < TOL


@pytest.mark.parametrize("norm", NORMS)
def test_decoder_block_equals_transformer_decoder_layer(norm):
    torch.manual_seed(2)
    ref = nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=norm == "pre").eval()
    ours = DecoderBlock(tiny(norm=norm)).eval()
    ours.load_state_dict(from_torch(ref.state_dict()))
    x, mem = torch.randn(2, 6, 16), torch.randn(2, 4, 16)
    causal = nn.Transformer.generate_square_subsequent_mask(6)
    assert (ours(x, mem) - ref(x, mem, tgt_mask=causal, tgt_is_causal=True)).abs().max() < TOL


def src_tgt(seed=0, b=3, s=7, t=6):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(3, 13, (b, s), generator=g)
    tgt = torch.randint(3, 13, (b, t), generator=g)
    src[0, 5:] = 0   # padding at the end of one row
    tgt[1, 4:] = 0
    return src, tgt


@pytest.mark.parametrize("pe,norm", itertools.product(PES, NORMS))
def test_capture_leaves_the_outputs_as_they_are(pe, norm):
    for arch in ("encoder-decoder", "encoder", "decoder"):
        model = build_model(tiny(arch=arch, pos_encoding=pe, norm=norm), seed=0).eval()
        src, tgt = src_tgt()
        args = {"encoder-decoder": (src, tgt), "encoder": (src,), "decoder": (tgt,)}[arch]
        plain = model(*args)
        with capture(model) as cache:
            captured = model(*args)
        assert cache.attention, "capture recorded nothing"
        assert torch.equal(plain, captured)


@pytest.mark.parametrize("pe,norm", itertools.product(PES, NORMS))
def test_padding_leaves_every_real_position_as_it_is_alone(pe, norm):
    """The decoder uses the causal mask only (no padding mask on the target):
    each row of a padded batch gives, at its real positions, what it gives alone without padding."""
    model = build_model(tiny(pos_encoding=pe, norm=norm), seed=0).eval()
    src, tgt = src_tgt(b=3, s=7, t=6)
    lm = build_model(tiny(arch="decoder", pos_encoding=pe, norm=norm), seed=0).eval()
    with torch.no_grad():
        batched, lm_batched = model(src, tgt), lm(tgt)
        for i in range(3):
            s, t = src[i][src[i] != 0][None], tgt[i][tgt[i] != 0][None]
            n = t.size(1)
            assert (batched[i, :n] - model(s, t)[0]).abs().max() < TOL
            assert (lm_batched[i, :n] - lm(t)[0]).abs().max() < TOL
        with capture(model) as cache:   # captured, the same, padded queries included
            assert (model(src, tgt) - batched).abs().max() < TOL
    assert cache.attention["dec_self"]


@pytest.mark.parametrize("pe", PES)
def test_packed_training_pass_gives_the_padded_ones_values_and_gradients(pe):
    """Training runs the position-wise layers on the real tokens only and scatters the projections
    straight into heads (explorer/packing.py); forward and backward must match the padded layout."""
    src, tgt = src_tgt(b=3, s=7, t=6)
    real = tgt != 0
    grads = []
    for packed in (True, False):
        model = build_model(tiny(pos_encoding=pe), seed=0).train()
        memory, src_mask = model.encode(src, packed=packed)
        logits = model.decode(tgt, memory, src_mask, packed=packed)
        logits[real].square().mean().backward()
        grads.append((logits[real].detach(), [p.grad for p in model.parameters()]))
    (out_p, g_p), (out_u, g_u) = grads
    assert (out_p - out_u).abs().max() < TOL
    assert all((a - b).abs().max() < TOL for a, b in zip(g_p, g_u))


@pytest.mark.parametrize("pe", PES)
def test_permutation_equivariance_only_without_pe(pe):
    model = build_model(tiny(arch="encoder", pos_encoding=pe), seed=0).eval()
    src = torch.randint(3, 13, (2, 9), generator=torch.Generator().manual_seed(3))
    perm = torch.randperm(9, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        with capture(model, attention=False, residual=True) as a:
            model(src)
        with capture(model, attention=False, residual=True) as b:
            model(src[:, perm])
    out, out_perm = a.residual["encoder"][-1], b.residual["encoder"][-1]
    equivariant = torch.allclose(out[:, perm], out_perm, atol=1e-5)
    assert equivariant == (pe == "none")


@pytest.mark.parametrize("pe,norm", itertools.product(PES, NORMS))
def test_decoder_is_causal(pe, norm):
    model = build_model(tiny(pos_encoding=pe, norm=norm), seed=0).eval()
    src, tgt = src_tgt()
    tgt = tgt.clone()
    tgt[1] = torch.arange(3, 9)  # no padding in the row we perturb
    t = 3
    changed = tgt.clone()
    changed[1, t] = 12 if tgt[1, t] != 12 else 11
    with torch.no_grad():
        before, after = model(src, tgt), model(src, changed)
    assert torch.allclose(before[1, :t], after[1, :t], atol=1e-6)
    assert not torch.allclose(before[1, t:], after[1, t:], atol=1e-6)


def test_lm_is_causal():
    model = build_model(tiny(arch="decoder", pos_encoding="rope"), seed=0).eval()
    x = torch.randint(3, 13, (1, 8), generator=torch.Generator().manual_seed(5))
    y = x.clone()
    y[0, 5] = 12 if x[0, 5] != 12 else 11
    with torch.no_grad():
        assert torch.allclose(model(x)[0, :5], model(y)[0, :5], atol=1e-6)


@pytest.mark.parametrize("norm", NORMS)
def test_patterns_shapes_rows_and_masks(norm):
    model = build_model(tiny(norm=norm, n_encoder_layers=3, n_decoder_layers=2), seed=0).eval()
    src, tgt = src_tgt(b=3, s=7, t=6)
    with capture(model) as cache:
        model(src, tgt)
    assert [p.shape for p in cache.attention["enc_self"]] == [(3, 4, 7, 7)] * 3
    assert [p.shape for p in cache.attention["dec_self"]] == [(3, 4, 6, 6)] * 2
    assert [p.shape for p in cache.attention["cross"]] == [(3, 4, 6, 7)] * 2
    for kind in ("enc_self", "dec_self", "cross"):
        pattern = cache.stacked(kind)
        assert torch.allclose(pattern.sum(-1), torch.ones(pattern.shape[:-1]), atol=1e-5)
    # padded source keys (row 0, positions 5, 6) get exactly zero weight, from the encoder and the decoder
    assert cache.stacked("enc_self")[:, 0, :, :, 5:].abs().max() == 0
    assert cache.stacked("cross")[:, 0, :, :, 5:].abs().max() == 0
    # the decoder never looks ahead
    future = torch.ones(6, 6, dtype=torch.bool).triu(1)
    assert cache.stacked("dec_self")[..., future].abs().max() == 0


def test_capture_is_selective_and_removes_hooks():
    model = build_model(tiny(), seed=0).eval()
    src, tgt = src_tgt()
    with capture(model, kinds=("cross",), outputs=True) as cache:
        logits = model(src, tgt)
    assert set(cache.attention) == {"cross"}
    assert torch.equal(cache.logits, logits)
    assert all(not m._forward_hooks for m in model.modules())


def test_lm_and_classifier_capture_kinds():
    lm = build_model(tiny(arch="decoder"), seed=0)
    with capture(lm) as cache:
        lm(torch.randint(3, 13, (2, 5)))
    assert set(cache.attention) == {"dec_self"}
    clf = build_model(tiny(arch="encoder", n_classes=3), seed=0)
    with capture(clf) as cache:
        out = clf(torch.randint(3, 13, (2, 5)))
    assert set(cache.attention) == {"enc_self"} and out.shape == (2, 3)


def test_continuous_inputs_for_classifier():
    model = build_model(tiny(arch="encoder", src_vocab_size=0), seed=0)
    assert model(torch.randn(4, 8, 16)).shape == (4, 2)


def test_tied_weights_share_storage():
    model = build_model(tiny(tie_embeddings=True), seed=0)
    assert model.output_proj.weight is model.decoder.embed.weight
    assert model.encoder.embed is model.decoder.embed


def test_seeded_build_is_reproducible():
    a, b = build_model(tiny(), seed=7), build_model(tiny(), seed=7)
    c = build_model(tiny(), seed=8)
    pairs = list(zip(a.parameters(), b.parameters(), c.parameters()))
    assert all(torch.equal(p, q) for p, q, _ in pairs)
    assert not all(torch.equal(p, r) for p, _, r in pairs)


# Residual connections: "add" is x + f(x) around every sublayer, "none" leaves f(x) alone.
ARCH_ARGS = {"encoder-decoder": lambda s, t: (s, t), "encoder": lambda s, t: (s,), "decoder": lambda s, t: (t,)}
OUT_SHAPE = {"encoder-decoder": (3, 6, 13), "encoder": (3, 2), "decoder": (3, 6, 13)}


def _silence_sublayers(block: nn.Module) -> None:
    """Zero every sublayer's last projection, so each sublayer outputs 0 whatever it reads."""
    with torch.no_grad():
        for m in (block.self_attn.out_proj, getattr(block, "cross_attn", None), block.ffn.linear2):
            if m is not None:
                lin = m.out_proj if isinstance(m, MultiHeadAttention) else m
                lin.weight.zero_(), lin.bias.zero_()


@pytest.mark.parametrize("norm", NORMS)
def test_without_residuals_a_silenced_block_no_longer_passes_x_through(norm):
    x, mem = torch.randn(2, 6, 16), torch.randn(2, 4, 16)
    for make in (EncoderBlock, DecoderBlock):
        out = {}
        for residual in ("add", "none"):
            torch.manual_seed(0)
            block = make(tiny(norm=norm, residual=residual)).eval()
            init_weights(block, pad_idx=0)   # a bare block's packed projection starts uninitialised
            _silence_sublayers(block)
            with torch.no_grad():
                out[residual] = block(x) if make is EncoderBlock else block(x, mem)
        if norm == "pre":   # x + 0 = x; without the residual, 0
            assert torch.equal(out["add"], x) and torch.equal(out["none"], torch.zeros_like(x))
        else:               # norm(x + 0) keeps x's direction; norm(0) is LayerNorm's bias (0 at init)
            assert out["add"].abs().max() > 0.1 and torch.equal(out["none"], torch.zeros_like(x))


@pytest.mark.parametrize("arch,norm", itertools.product(OUT_SHAPE, NORMS))
def test_without_residuals_every_arch_runs_with_the_same_parameters(arch, norm):
    from explorer.config import param_count
    src, tgt = src_tgt()
    models = {r: build_model(tiny(arch=arch, norm=norm, residual=r), seed=0).eval() for r in ("add", "none")}
    with_res, without = (models[r](*ARCH_ARGS[arch](src, tgt)) for r in ("add", "none"))
    assert with_res.shape == without.shape == OUT_SHAPE[arch] and torch.isfinite(without).all()
    assert not torch.allclose(with_res, without)
    a, b = (m.state_dict() for m in models.values())   # same names, shapes and initial weights
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    counts = {r: param_count(m.cfg)["total"] for r, m in models.items()}
    assert counts["add"] == counts["none"] == sum(p.numel() for p in models["none"].parameters())


def test_residual_add_is_the_default_and_computes_x_plus_f_bit_for_bit():
    assert ModelConfig().residual == "add"
    torch.manual_seed(0)
    block = EncoderBlock(tiny()).eval()
    init_weights(block, pad_idx=0)
    x = torch.randn(2, 6, 16)
    with torch.no_grad():
        h = x + block.self_attn(block.norm1(x))
        assert torch.equal(block(x), h + block.ffn(block.norm2(h)))
    src, tgt = src_tgt()
    a, b = build_model(tiny(), seed=3).eval(), build_model(tiny(residual="add"), seed=3).eval()
    assert torch.equal(a(src, tgt), b(src, tgt))



def test_attn_scale_none_multiplies_the_scores_by_exactly_sqrt_d_head():
    """Softmax forgets a row's constant: log(pattern) is the scores up to one, so unscaled scores are
    sqrt(d_head) times the scaled ones exactly when softmax(sqrt(d_head) log p_scaled) = p_none."""
    x = torch.randn(2, 7, 16)
    patterns = {}
    for scale in ("sqrt_d_k", "none"):
        torch.manual_seed(0)
        attn = MultiHeadAttention(tiny(attn_scale=scale)).eval()
        init_weights(attn, pad_idx=0)
        seen = []
        attn.hook_pattern.register_forward_hook(lambda _m, _i, out, seen=seen: seen.append(out))
        with torch.no_grad():
            attn(x, causal=True)
        patterns[scale] = seen[0].double()                              # (B, H, T, T)
    d_head = tiny().d_head
    assert ModelConfig().attn_scale == "sqrt_d_k" and d_head == 4
    rebuilt = (patterns["sqrt_d_k"].log() * d_head ** 0.5).softmax(-1)  # log 0 = -inf stays masked
    assert torch.allclose(rebuilt, patterns["none"], atol=1e-5)
    assert not torch.allclose(patterns["sqrt_d_k"], patterns["none"], atol=1e-2)
