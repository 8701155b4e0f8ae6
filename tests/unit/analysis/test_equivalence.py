"""explorer.analysis.equivalence: the live check against PyTorch's modules and the initialisation study."""

import itertools

import numpy as np
import pytest
import torch

from explorer.analysis.equivalence import (
    DEFAULTS,
    TOL,
    XAVIER,
    attention_check,
    block_check,
    from_torch,
    init_study,
    pytorch_defaults,
    torch_name,
)
from explorer.config import ModelConfig
from explorer.model import MultiHeadAttention, build_model


def tiny(**kw) -> ModelConfig:
    base = dict(d_model=16, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=32,
                src_vocab_size=13, tgt_vocab_size=13, max_len=24)
    return ModelConfig(**{**base, **kw})


CONFIGS = [tiny(norm=n, activation=a, arch=arch) for n, a, arch in
           itertools.product(("pre", "post"), ("relu", "gelu"), ("encoder-decoder", "decoder"))]
CONFIGS += [tiny(d_model=64, n_heads=8, d_ff=128, dropout=0.1), tiny(d_model=12, n_heads=3, pos_encoding="learned")]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c.arch}-{c.norm}-{c.activation}-{c.d_model}x{c.n_heads}")
def test_our_modules_equal_pytorchs_once_the_weights_are_copied(cfg):
    for check in (attention_check(cfg), block_check(cfg)):
        assert check.reason is None
        assert check.max_diff < TOL and check.equal
        assert check.before_copy > 1e-3            # PyTorch's own weights give another output: not vacuous
        assert check.ours.shape == check.theirs.shape == (2, 5, cfg.d_model)
        assert np.abs(check.ours - check.theirs).max() == pytest.approx(check.max_diff)
        assert "Equal to float rounding" in check.verdict()
        assert list(check.sample(3)["dim"]) == [0, 1, 2]


def test_what_was_copied_names_every_tensor_with_its_shape():
    cfg = tiny()
    attn, block = attention_check(cfg), block_check(cfg)
    assert [a for a, _, _ in attn.copied] == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert dict((a, s) for a, _, s in attn.copied)["in_proj_weight"] == (48, 16)
    pairs = {a: b for a, b, _ in block.copied}
    assert pairs["ffn.linear1.weight"] == "linear1.weight" and pairs["norm2.bias"] == "norm2.bias"
    assert sum(np.prod(s) for _, _, s in block.copied) == sum(
        p.numel() for p in torch.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True).parameters())


def test_torch_name_undoes_from_torch():
    ref = torch.nn.TransformerDecoderLayer(16, 4, 32, batch_first=True)
    ours = from_torch(ref.state_dict())
    assert "cross_attn.in_proj_weight" in ours and "ffn.linear2.bias" in ours
    assert {torch_name(k) for k in ours} == set(ref.state_dict())


def test_a_config_without_counterpart_says_why():
    rope = tiny(pos_encoding="rope")
    for check in (attention_check(rope), block_check(rope)):
        assert check.max_diff is None and not check.equal and "RoPE" in check.reason
        assert check.verdict().startswith("No PyTorch counterpart")
        assert check.sample().empty
    swiglu = tiny(activation="swiglu")
    assert "SwiGLU" in block_check(swiglu).reason
    assert block_check(swiglu).reference == "nn.TransformerEncoderLayer"  # no call PyTorch would accept
    assert attention_check(swiglu).equal          # the attention is the same module as PyTorch's


def test_init_study_is_deterministic_and_the_two_inits_differ():
    cfg = tiny()
    state = torch.random.get_rng_state()
    a, b = init_study(cfg), init_study(cfg)
    assert torch.equal(state, torch.random.get_rng_state())  # the caller's random stream is left alone
    assert a.layers == ("enc 0", "enc 1", "dec 0", "dec 1")
    for init in (XAVIER, DEFAULTS):
        np.testing.assert_array_equal(a.grad[init], b.grad[init])
        assert a.loss[init] == b.loss[init] and a.grad[init].shape == (4,) and (a.grad[init] > 0).all()
    assert not np.allclose(a.grad[XAVIER], a.grad[DEFAULTS])
    assert a.loss[XAVIER] != a.loss[DEFAULTS]
    assert a.uniform_loss == pytest.approx(np.log(13))
    assert a.embed_std[DEFAULTS] == pytest.approx(1.0, abs=0.15)   # nn.Embedding's N(0, 1)
    assert a.embed_std[XAVIER] < 0.5
    assert "ln 13" in a.summary() and set(a.table().columns) == {"measure", XAVIER, DEFAULTS}


@pytest.mark.parametrize("cfg", [tiny(arch="encoder"), tiny(arch="encoder", src_vocab_size=0), tiny(arch="decoder")],
                         ids=["classifier", "vectors", "lm"])
def test_init_study_runs_for_every_architecture(cfg):
    study = init_study(cfg)
    assert all(np.isfinite(v).all() for v in study.grad.values())
    assert study.embed_std == {} if cfg.src_vocab_size == 0 and cfg.arch == "encoder" else len(study.embed_std) == 2


def test_pytorch_defaults_are_each_modules_own():
    torch.manual_seed(0)   # reset_parameters() draws from the global generator: not from what ran before
    model = pytorch_defaults(build_model(tiny(tie_embeddings=True), seed=0))
    attn = next(m for m in model.modules() if isinstance(m, MultiHeadAttention))
    assert not attn.in_proj_bias.any() and not attn.out_proj.bias.any()
    bound = 1 / 16 ** 0.5                              # nn.Linear: U(±1/√fan_in)
    assert attn.out_proj.weight.abs().max() <= bound
    assert model.output_proj.weight is model.decoder.embed.weight
    tied = model.decoder.embed.weight.detach()
    assert float(tied[1:].std()) == pytest.approx(1.0, abs=0.15)  # the tie keeps the embedding's N(0, 1)
    assert not model.decoder.embed.weight[0].any()     # padding row at zero
