"""ModelConfig validation, parameter counts and estimates."""

import itertools

import pytest

from explorer.config import (
    CLASSROOM_PRESETS,
    REFERENCE_PRESETS,
    ModelConfig,
    flops_per_token,
    param_count,
    train_memory_bytes,
)
from explorer.model import build_model

BAD = [
    (dict(d_model=100, n_heads=8), "n_heads"),
    (dict(pos_encoding="rope", d_model=12, n_heads=4), "rope"),     # d_head = 3 is odd
    (dict(d_model=0), "d_model"),
    (dict(n_heads=0), "n_heads"),
    (dict(d_ff=-1), "d_ff"),
    (dict(n_encoder_layers=0), "n_encoder_layers"),
    (dict(arch="decoder", n_decoder_layers=0), "n_decoder_layers"),
    (dict(dropout=1.0), "dropout"),
    (dict(dropout=-0.1), "dropout"),
    (dict(pos_encoding="xpos"), "pos_encoding"),
    (dict(attn_scale="sqrt_d"), "attn_scale"),
    (dict(attn_scale=None), "attn_scale"),
    (dict(norm="sandwich"), "norm"),
    (dict(residual="skip"), "residual"),
    (dict(residual=False), "residual"),
    (dict(activation="tanh"), "activation"),
    (dict(arch="rnn"), "arch"),
    (dict(max_len=0), "max_len"),
    (dict(src_vocab_size=1), "src_vocab_size"),
    (dict(arch="encoder-decoder", src_vocab_size=0), "src_vocab_size"),
    (dict(arch="encoder", n_classes=1), "n_classes"),
    (dict(pad_idx=99), "pad_idx"),
    (dict(pe_base=1.0), "pe_base"),
    (dict(d_model=64.5), "d_model"),
    (dict(n_encoder_layers=1.5), "n_encoder_layers"),
    (dict(n_classes=2.0, arch="encoder"), "n_classes"),
]


@pytest.mark.parametrize("changes,field", BAD)
def test_bad_configs_name_the_field(changes, field):
    with pytest.raises(ValueError, match=field):
        ModelConfig(**changes)


def test_divisibility_message_suggests_heads():
    with pytest.raises(ValueError) as err:
        ModelConfig(d_model=100, n_heads=8)
    assert "d_model=100" in str(err.value) and "try n_heads in" in str(err.value)
    assert "5" in str(err.value).split("try")[1]


def test_unused_fields_are_ignored_by_architecture():
    ModelConfig(arch="encoder", n_decoder_layers=0, tgt_vocab_size=0)
    ModelConfig(arch="decoder", n_encoder_layers=0, src_vocab_size=0)


@pytest.mark.parametrize("arch,pe,norm,act,tie", itertools.product(
    ("encoder-decoder", "encoder", "decoder"), ("sinusoidal", "learned", "rope", "none"),
    ("pre", "post"), ("relu", "gelu", "swiglu"), (False, True)))
def test_param_count_equals_built_model(arch, pe, norm, act, tie):
    cfg = ModelConfig(arch=arch, pos_encoding=pe, norm=norm, activation=act, tie_embeddings=tie,
                      d_model=16, n_heads=2, d_ff=24, n_encoder_layers=2, n_decoder_layers=3,
                      src_vocab_size=11, tgt_vocab_size=11 if tie else 9, max_len=20, n_classes=3)
    model = build_model(cfg)
    counted = param_count(cfg)
    assert counted["total"] == sum(p.numel() for p in model.parameters())
    assert counted["total"] == sum(v for k, v in counted.items() if k != "total")


@pytest.mark.parametrize("name", [n for n, p in REFERENCE_PRESETS.items() if p.published_params])
def test_param_count_matches_published(name):
    preset = REFERENCE_PRESETS[name]
    total = param_count(preset.config)["total"]
    assert abs(total - preset.published_params) / preset.published_params < 0.03, total


def test_ffn_dominates_as_the_chapter_says():
    # 2 d d_ff = 8 d^2 per layer for the FFN against 4 d^2 for attention
    parts = param_count(REFERENCE_PRESETS["Base"].config)
    assert 1.3 < parts["ffn"] / parts["attention"] < 2.1


def test_estimates_scale_sensibly():
    cfg = CLASSROOM_PRESETS["small"]
    f1, f2 = flops_per_token(cfg, 16), flops_per_token(cfg, 32)
    assert f2["forward"] > f1["forward"] and f1["train"] == pytest.approx(3 * f1["forward"])
    n = param_count(cfg)["total"]
    mem = train_memory_bytes(cfg, batch_size=64, seq_len=20)
    assert mem["weights"] == 4 * n and mem["optimizer"] == 8 * n
    assert train_memory_bytes(cfg, batch_size=128, seq_len=20)["activations"] > mem["activations"]
    # GPT-3 is computed instantly and is in the right range: ~2 * 175e9 flops per token
    gpt3 = REFERENCE_PRESETS["GPT-3 175B"].config
    assert 3e11 < flops_per_token(gpt3)["forward"] < 4.5e11


def test_a_config_saved_before_residual_existed_loads_with_residuals():
    old = {k: v for k, v in ModelConfig(norm="post").to_dict().items() if k != "residual"}
    assert ModelConfig.from_dict(old) == ModelConfig(norm="post", residual="add")
    with pytest.raises(ValueError, match="residual='skip' is not known; choose one of add, none"):
        ModelConfig(residual="skip")


def test_a_config_saved_before_attn_scale_existed_loads_scaled_by_sqrt_d_k():
    old = {k: v for k, v in ModelConfig(pos_encoding="rope").to_dict().items() if k != "attn_scale"}
    assert ModelConfig.from_dict(old) == ModelConfig(pos_encoding="rope", attn_scale="sqrt_d_k")
    with pytest.raises(ValueError, match="attn_scale='sqrt_d' is not known; choose one of sqrt_d_k, none"):
        ModelConfig(attn_scale="sqrt_d")


def test_round_trip_dict():
    cfg = ModelConfig(pos_encoding="alibi", norm="post", residual="none", attn_scale="none")
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown"):
        ModelConfig.from_dict({**cfg.to_dict(), "flux": 1})


def test_the_large_presets_count_splits_into_the_chapters_rule_and_what_it_leaves_out():
    from explorer.config import REFERENCE_PRESETS, approx, param_story
    for preset in REFERENCE_PRESETS.values():
        assert sum(param_story(preset.config).values()) == param_count(preset.config)["total"]
    large = REFERENCE_PRESETS["Large"]
    story = param_story(large.config)
    # 24 blocks of self-attention and a 4 x d_model FFN: the chapter's ~300M; cross-attention and the
    # shared 37k vocabulary bring the count to 390.6M
    assert abs(story["self-attention and FFN blocks"] - approx(large.seed_params)) < 0.01 * 300e6
    assert story["cross-attention"] == 12 * (4 * 1024**2 + 4 * 1024)
    assert round(param_count(large.config)["total"] / 1e5) == 3906
    assert approx("~175B") == 175e9 and approx("") is None and approx("~10M") == 10e6
