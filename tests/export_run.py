"""A tiny run saved with attention snapshots, for the export tests of every tier (a second of training)."""

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store.runs import save_run
from explorer.tasks import TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import new_state, train_steps

SNAPSHOT_STEPS = (4, 8, 12)


def save_tiny_run(name: str = "tiny-lapse", snapshot_every: int = 4):
    """Train 12 steps of a copy task with a snapshot every 4 (0: none) and save it (EXPLORER_RUNS_DIR decides
    where)."""
    task = make_task(TaskConfig("copy", n_symbols=4, min_len=2, max_len=4, n_train=100, n_val=20))
    model = build_model(task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1,
                                                      n_decoder_layers=1, d_ff=32)), seed=0)
    cfg = TrainConfig(steps=12, batch_size=8, eval_every=4, eval_examples=10, snapshot_every=snapshot_every)
    state = new_state(model, task, cfg)
    history = list(train_steps(model, task, cfg, state))
    return save_run(name, model, task.cfg, cfg, history, state=state), history
