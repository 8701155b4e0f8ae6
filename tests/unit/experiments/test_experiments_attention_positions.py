"""The experiments' own measurements: attn-scale's initialisation study, d-head's conditions, lm-length's
loss per position."""

import dataclasses
import math

import pytest

from explorer.config import ModelConfig
from explorer.experiments import EXPERIMENTS
from explorer.experiments.attn_scale import AttnScaleParams, init_measures
from explorer.experiments.d_head import DHeadParams, label
from explorer.experiments.lm_length import LMLengthParams, _task, position_losses
from explorer.model import build_model


def test_unscaled_scores_saturate_the_softmax_more_as_heads_widen():
    p = dataclasses.replace(AttnScaleParams(), n_layers=1, batch_size=8)
    entropy = {(d, s): init_measures(p, 0, d, s)[0] for d in (4, 64) for s in ("sqrt_d_k", "none")}
    gap = {d: entropy[d, "sqrt_d_k"] - entropy[d, "none"] for d in (4, 64)}
    assert 0 < gap[4] < gap[64]            # the same weights: only the missing 1/sqrt(d_head) differs
    assert abs(entropy[4, "sqrt_d_k"] - entropy[64, "sqrt_d_k"]) < gap[64]   # scaled: about the same


def test_d_head_compares_widths_at_one_d_model_and_checks_its_heads():
    p = DHeadParams()
    assert [label(p, h) for h in p.heads] == ["d_head 64", "d_head 32", "d_head 16", "d_head 8", "d_head 4"]
    with pytest.raises(ValueError, match="heads=.*divide d_model=64"):
        DHeadParams(heads=(1, 3))
    assert EXPERIMENTS["d-head"].work_units(p) == 5 * p.seeds * p.steps
    assert EXPERIMENTS["attn-scale"].work_units(AttnScaleParams()) == 2 * 3 * 400


def test_lm_length_reads_windows_twice_the_trained_length_position_by_position():
    p = LMLengthParams(eval_examples=16)
    longer = _task(p, 0, 2 * p.context)
    assert longer.val.tgt_in.shape == (16, 32)
    cfg = longer.model_config(ModelConfig(arch="decoder", d_model=16, n_heads=4, n_decoder_layers=1, d_ff=16,
                                          pos_encoding="alibi", max_len=32))
    losses = position_losses(build_model(cfg, seed=0), longer)          # untrained: about a uniform guess
    assert losses.shape == (32,) and (abs(losses - math.log(len(longer.vocab))) < 1.0).all()
    with pytest.raises(ValueError, match="encodings=.*must list some of"):
        LMLengthParams(encodings=("xpos",))
