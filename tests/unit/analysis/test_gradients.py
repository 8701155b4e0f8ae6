"""Gradient norms across depth at initialisation (the chapter's Pre-LN vs Post-LN exercise) and a
run's per-layer gradient table."""

import numpy as np
import pandas as pd
import pytest
import torch

from explorer.analysis.gradients import DepthProfile, depth_profile, grad_norm_table
from explorer.config import ModelConfig
from explorer.inspect import blocks
from explorer.model import build_model
from explorer.tasks import make_task
from explorer.train_config import TrainConfig
from explorer.training import train_steps

SMALL = dict(n_layers=4, d_model=16, n_heads=2, batch_size=4, seq_len=6)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_profile_has_one_finite_positive_norm_per_layer(norm):
    p = depth_profile(norm, **SMALL)
    assert p.layer_labels == ("enc 0", "enc 1", "enc 2", "enc 3")
    for values in (p.weight_grad, p.input_grad):
        assert values.shape == (4,) and np.isfinite(values).all() and (values > 0).all()


def test_same_seed_same_numbers_and_other_seed_other_numbers():
    a, b, c = (depth_profile("post", seed=s, **SMALL) for s in (3, 3, 4))
    assert np.array_equal(a.weight_grad, b.weight_grad) and np.array_equal(a.input_grad, b.input_grad)
    assert not np.allclose(a.weight_grad, c.weight_grad)


def test_a_profile_runs_on_one_thread_and_leaves_the_callers_setting(monkeypatch):
    from explorer.analysis import gradients
    seen = []
    monkeypatch.setattr(gradients, "build_model", lambda *a, **k: seen.append(torch.get_num_threads()) or
                        build_model(*a, **k))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        depth_profile("post", **SMALL)
        assert seen == [1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_only_the_norm_placement_differs():
    """Same seed: both stacks start from identical block and classifier weights (a LayerNorm draws
    nothing from the generator), so the profiles differ only through where LayerNorm sits."""
    models = [build_model(ModelConfig(arch="encoder", src_vocab_size=32, d_model=16, n_heads=2, n_encoder_layers=4,
                                      d_ff=64, norm=norm, max_len=8), seed=0) for norm in ("pre", "post")]
    weights = [{k: v for k, v in m.state_dict().items() if "final_norm" not in k} for m in models]
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    pre, post = depth_profile("pre", **SMALL), depth_profile("post", **SMALL)
    assert not np.allclose(pre.weight_grad, post.weight_grad)


def test_weight_norm_matches_autograd_on_the_block_parameters():
    """The profile's first entry is the gradient norm of block 0's parameters, recomputed by hand."""
    p = depth_profile("pre", **SMALL)
    cfg = ModelConfig(arch="encoder", src_vocab_size=32, d_model=16, n_heads=2, n_encoder_layers=4, d_ff=64,
                      norm="pre", max_len=8)
    model = build_model(cfg, seed=0)
    gen = torch.Generator().manual_seed(0)
    tokens = torch.randint(1, 32, (4, 6), generator=gen)
    labels = torch.randint(0, 2, (4,), generator=gen)
    torch.nn.functional.cross_entropy(model(tokens), labels).backward()
    block0 = blocks(model)[0][1]
    expected = torch.sqrt(sum(q.grad.pow(2).sum() for q in block0.parameters())).item()
    assert p.weight_grad[0] == pytest.approx(expected, rel=1e-5)


def test_spread_is_largest_over_smallest():
    assert DepthProfile.spread(np.array([2.0, 1.0, 4.0])) == 4.0
    assert DepthProfile.spread(np.ones(5)) == 1.0


@pytest.mark.parametrize("kw, field", [({"norm": "middle"}, "norm"), ({"n_layers": 0}, "n_layers"),
                                       ({"n_layers": 1000}, "n_layers"), ({"d_model": 15, "n_heads": 4}, "d_model")])
def test_bad_input_names_the_field(kw, field):
    args = {"norm": "pre", **SMALL, **kw}
    with pytest.raises(ValueError, match=field):
        depth_profile(args.pop("norm"), **args)


def test_grad_norm_table_from_a_real_history():
    task = make_task("copy")
    cfg = task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=2, d_ff=32))
    model = build_model(cfg, seed=0)
    history = [rec.to_row(("enc 0", "dec 0", "dec 1"))
               for rec in train_steps(model, task, TrainConfig(steps=6, batch_size=4, eval_every=0, eval_examples=4))]
    norms, labels, steps = grad_norm_table(pd.DataFrame(history))
    assert labels == ["enc 0", "dec 0", "dec 1"]  # the total "grad_norm" column is not a layer
    assert steps == [1, 2, 3, 4, 5, 6] and norms.shape == (3, 6)
    first = history[0]
    assert np.allclose(norms[:, 0], [first["grad_enc_0"], first["grad_dec_0"], first["grad_dec_1"]])


def test_grad_norm_table_thins_long_runs_and_drops_a_diverged_last_row():
    n = 1000
    df = pd.DataFrame({"step": np.arange(1, n + 1), "grad_norm": 1.0, "grad_enc_0": np.arange(n, dtype=float),
                       "grad_dec_0": 2.0})
    df.loc[n - 1, ["grad_enc_0", "grad_dec_0"]] = np.nan  # a diverged step records no per-layer norms
    norms, labels, steps = grad_norm_table(df, max_steps=50)
    assert len(steps) == 50 and steps[0] == 1 and steps[-1] == n - 1
    assert np.all(np.diff(steps) > 0) and norms.shape == (2, 50)
    norms, labels, steps = grad_norm_table(pd.DataFrame({"step": [1], "loss": [0.5]}))
    assert norms.size == 0 and labels == [] and steps == []
