"""What the store's tests share: one tiny trained copy model (module-scoped: trained once per test module)."""

import pytest

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.tasks import TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import train_steps

TINY = ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=2, d_ff=32)


@pytest.fixture(scope="module")
def trained():
    """(task, model, its TrainConfig of 6 steps, the history)."""
    task = make_task(TaskConfig("copy", n_symbols=4, min_len=2, max_len=4, n_train=100, n_val=20))
    model = build_model(task.model_config(TINY), seed=0)
    cfg = TrainConfig(steps=6, batch_size=8, eval_every=4, eval_examples=10)
    return task, model, cfg, list(train_steps(model, task, cfg))
