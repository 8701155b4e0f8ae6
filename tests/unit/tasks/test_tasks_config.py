"""TaskConfig validation with messages, round trips, and the model checks that name the field that does
not fit."""

from __future__ import annotations

import pytest

from explorer.config import ModelConfig
from explorer.tasks import TASK_PRESETS, TaskConfig, make_task
from tests.unit.tasks.samples import task


@pytest.mark.parametrize("changes, field", [
    (dict(name="parity"), "reversal, copy, sort"),
    (dict(min_len=9, max_len=8), "min_len=9"),
    (dict(n_symbols=1), "n_symbols=1"),
    (dict(min_len=0), "min_len=0"),
    (dict(n_train=0), "n_train=0"),
    (dict(n_val=2.5), "n_val=2.5"),
    (dict(seed=-1), "seed=-1"),
    (dict(noise=-0.1), "noise=-0.1"),
    (dict(name="order", min_len=4, max_len=8), "min_len == max_len"),
    (dict(name="char-lm", min_len=1, max_len=1), "min_len=1"),
])
def test_task_config_rejects_bad_fields(changes, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        TaskConfig().replace(**changes)


def test_task_config_round_trips_and_rejects_unknown_fields():
    for cfg in TASK_PRESETS.values():
        assert TaskConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown TaskConfig fields"):
        TaskConfig.from_dict({"name": "copy", "colour": "red"})
    with pytest.raises(ValueError, match="reversal-fast"):
        make_task("no-such-preset")


def test_check_names_the_field_that_does_not_fit():
    t = task("reversal-seed")
    cfg = t.model_config()
    assert (cfg.src_vocab_size, cfg.tgt_vocab_size, cfg.max_len) == (103, 103, 64)
    assert t.model_config(ModelConfig(max_len=8)).max_len == 21
    with pytest.raises(ValueError, match="arch='decoder' cannot do task 'reversal'; use 'encoder-decoder'"):
        t.check(ModelConfig(arch="decoder", tgt_vocab_size=103))
    with pytest.raises(ValueError, match="src_vocab_size=50"):
        t.check(cfg.replace(src_vocab_size=50))
    with pytest.raises(ValueError, match="tgt_vocab_size=50"):
        t.check(cfg.replace(tgt_vocab_size=50))
    with pytest.raises(ValueError, match=r"max_len=8 is shorter .*\(21 tokens\); use max_len >= 21"):
        t.check(cfg.replace(max_len=8))
    with pytest.raises(ValueError, match="n_classes=3"):
        task("order").check(task("order").model_config(n_classes=3))
    with pytest.raises(ValueError, match="arch='encoder-decoder' cannot do task 'char-lm'; use 'decoder'"):
        task("char-lm").check(ModelConfig())
