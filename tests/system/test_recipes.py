"""Recommended recipes: one per task preset, valid for its task, shared with the shipped builds, and the
classroom preset's recipe learns its task."""

import pytest
import torch

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store.shipped import shipped_model
from explorer.tasks import TASK_PRESETS, make_task
from explorer.tasks.recipes import RECOMMENDED, recommended
from explorer.train_config import TrainConfig
from explorer.training import train_steps


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("preset", sorted(TASK_PRESETS))
def test_every_preset_has_a_recipe_its_task_accepts(preset):
    overrides, train = recommended(preset)
    assert isinstance(train, TrainConfig) and train.threads == 1
    task = make_task(preset)
    cfg = task.model_config(ModelConfig(max_len=32).replace(**overrides))
    task.check(cfg)
    assert build_model(cfg, seed=0) is not None
    overrides["d_model"] = -1   # a copy: the recipe itself stays as it is
    assert recommended(preset)[0]["d_model"] > 0


def test_an_unknown_preset_is_named_with_the_valid_ones():
    assert set(RECOMMENDED) == set(TASK_PRESETS)
    with pytest.raises(ValueError, match="reversal-fast"):
        recommended("reversal-slow")


@pytest.mark.parametrize("name, preset", [("reversal-fast", "reversal-fast"), ("reversal-seed", "reversal-seed"),
                                          ("copy", "copy"), ("sort", "sort"), ("order-pe", "order"),
                                          ("char-lm", "char-lm")])
def test_shipped_models_are_built_with_the_recommended_recipe(name, preset):
    r, (overrides, train) = shipped_model(name), recommended(preset)
    assert r.task == TASK_PRESETS[preset] and r.train == train
    assert {k: getattr(r.model, k) for k in overrides} == overrides


@pytest.mark.slow
def test_the_classroom_recipe_learns_reversal():
    overrides, train = recommended("reversal-fast")
    task = make_task("reversal-fast")
    model = build_model(task.model_config(ModelConfig(max_len=32).replace(**overrides)), seed=train.seed)
    last = list(train_steps(model, task, train.replace(eval_examples=500)))[-1]
    assert last.stopped is None and last.val_exact >= 0.95, last
