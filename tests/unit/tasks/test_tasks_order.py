"""Order detection, with tokens and with vectors: balanced labels that only position can tell."""

from __future__ import annotations

import pytest
import torch

from explorer.config import CLASSROOM_PRESETS, ModelConfig
from explorer.tasks import SPECIALS, TASK_PRESETS, TaskConfig, make_task
from tests.unit.tasks.samples import rows_of, task


@pytest.mark.parametrize("cfg", [TASK_PRESETS["order"], TaskConfig("order", 3, 5, 5, n_train=301, n_val=51)])
def test_order_labels_are_balanced_correct_and_a_b_appear_once(cfg):
    t = make_task(cfg)
    a, b = t.vocab.index("A"), t.vocab.index("B")
    assert (len(t.train), len(t.val)) == (cfg.n_train, cfg.n_val)
    for batch in (t.train, t.val):
        assert int(batch.label.sum()) == len(batch) // 2
        assert bool(((batch.src == a).sum(1) == 1).all()) and bool(((batch.src == b).sum(1) == 1).all())
        pos_a, pos_b = (batch.src == a).int().argmax(1), (batch.src == b).int().argmax(1)
        assert torch.equal(batch.label, (pos_a < pos_b).long())
    assert t.class_names[1] == "A first"


def test_order_content_alone_cannot_tell_the_label():
    t = task("order")
    a, b = t.vocab.index("A"), t.vocab.index("B")
    src = t.val.src
    swapped = src.clone()
    swapped[src == a], swapped[src == b] = b, a
    # same tokens, opposite answer: only position separates the classes
    assert torch.equal(swapped.sort(1).values, src.sort(1).values)
    assert [t.solve(r)[0] for r in swapped] == (1 - t.val.label).tolist()


def test_order_small_space_and_encode():
    cfg = TaskConfig("order", n_symbols=1, min_len=4, max_len=4, n_train=8, n_val=4)  # 12 exist
    t = make_task(cfg)
    assert len(rows_of(t.train) | rows_of(t.val)) == 12
    with pytest.raises(ValueError, match="only 12 distinct"):
        make_task(cfg.replace(n_train=10))
    t = task("order")
    assert t.solve(t.encode("3 A 1 b 2 6 4 5")) == [1]
    assert t.solve(t.encode("B A")) == [0]
    for text, msg in [("", "empty"), ("1 A 2", "exactly once"), ("A A B", "exactly once"),
                      ("A B 9", "unknown token '9'"), ("A B " + "1 " * 7, "maximum is 8")]:
        with pytest.raises(ValueError, match=msg):
            t.encode(text)


def test_order_vectors_is_the_notebooks_construction():
    t = task("order-vectors")
    assert t.train.src.shape == (400, 8, 16) and t.val.src.shape == (150, 8, 16)
    assert t.train.src.dtype == torch.float32 and t.vocab == SPECIALS
    x = torch.cat([t.train.src, t.val.src])
    labels = torch.cat([t.train.label, t.val.label])
    is_a = (x == t.vec_a).all(-1)
    is_b = (x == t.vec_b).all(-1)
    assert bool((is_a.sum(1) == 1).all()) and bool((is_b.sum(1) == 1).all())
    assert torch.equal(labels, (is_a.int().argmax(1) < is_b.int().argmax(1)).long())
    assert 0.4 < labels.float().mean() < 0.6
    noise = x[~(is_a | is_b)]
    assert abs(float(noise.std()) - 0.1) < 0.005 and abs(float(noise.mean())) < 0.005
    src, label = t.example("train", 0)
    labels0 = t.position_labels(src)
    assert sorted(labels0) == ["A", "B"] + ["·"] * 6 and label == t.solve(src)
    assert t.tokens(src) == [str(i) for i in range(8)]
    with pytest.raises(ValueError, match="pick an example"):
        t.encode("A B")
    cfg = t.model_config(CLASSROOM_PRESETS["small"])
    assert (cfg.src_vocab_size, cfg.d_model, cfg.arch, cfg.n_classes) == (0, 16, "encoder", 2)
    with pytest.raises(ValueError, match="src_vocab_size"):
        t.check(cfg.replace(src_vocab_size=16))
    with pytest.raises(ValueError, match="d_model"):
        t.check(cfg.replace(d_model=32))


def test_order_vectors_without_noise_and_other_width():
    t = make_task(TASK_PRESETS["order-vectors"].replace(noise=0.0, dim=12))
    x = t.val.src
    assert x.shape[-1] == 12 and int(((x != 0).any(-1)).sum()) == 2 * len(x)
    cfg = t.model_config(ModelConfig(n_heads=8))
    assert cfg.d_model == 12 and 12 % cfg.n_heads == 0
    t.check(cfg)
