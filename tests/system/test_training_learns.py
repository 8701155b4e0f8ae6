"""The trainer learns the classroom preset to its quality bar."""

import pytest

from explorer.model import build_model
from explorer.tasks import make_task
from explorer.training import train_steps
from tests.unit.helpers import FAST, FAST_TRAIN


@pytest.mark.slow
def test_reversal_fast_preset_is_learned():
    task = make_task("reversal-fast")
    model = build_model(task.model_config(FAST), seed=FAST_TRAIN.seed)
    recs = list(train_steps(model, task, FAST_TRAIN))
    assert recs[-1].stopped is None
    assert recs[-1].val_exact >= 0.95, recs[-1]
