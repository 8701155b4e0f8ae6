"""Issue 8's divergence case: Post-LN, 12 layers, learning rate 0.1 halts with a message and keeps
finite weights, through the same trainer the app drives."""

import torch

from explorer.model import build_model
from explorer.tasks import make_task
from explorer.train_config import TrainConfig
from explorer.training import train_steps


def test_post_ln_12_layers_at_lr_0_1_halts_with_finite_weights():
    task = make_task("reversal-fast")
    cfg = task.model_config(task.model_config().replace(
        norm="post", n_encoder_layers=12, n_decoder_layers=12, d_model=64, n_heads=4, d_ff=256))
    model = build_model(cfg, seed=0)
    records = list(train_steps(model, task, TrainConfig(steps=40, lr=0.1, warmup=0, schedule="constant",
                                                        eval_every=0)))
    last = records[-1]
    assert last.stopped and last.stopped.startswith("diverged"), [r.loss for r in records]
    assert last.step < 40
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_the_same_stack_trains_calmly_at_a_sane_learning_rate():
    task = make_task("reversal-fast")
    cfg = task.model_config(task.model_config().replace(
        norm="post", n_encoder_layers=12, n_decoder_layers=12, d_model=64, n_heads=4, d_ff=256))
    model = build_model(cfg, seed=0)
    records = list(train_steps(model, task, TrainConfig(steps=15, lr=3e-4, warmup=5, eval_every=0)))
    assert all(r.stopped is None for r in records) and len(records) == 15
