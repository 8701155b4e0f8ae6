"""The attention experiments' own measurements: attn-scale's initialisation study, d-head's conditions."""

import dataclasses

import pytest

from explorer.experiments import EXPERIMENTS
from explorer.experiments.attn_scale import AttnScaleParams, init_measures
from explorer.experiments.d_head import DHeadParams, label


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
