"""Every task preset: determinism, seeds, split sizes and vocabulary, disjoint and distinct rows,
sampling, validation order, model configs, examples."""

from __future__ import annotations

import pytest
import torch

from explorer.config import CLASSROOM_PRESETS, ModelConfig
from explorer.tasks import PAD, SPECIALS, TASK_PRESETS, TASKS, TaskConfig, make_task
from tests.unit.tasks.samples import PRESETS, rows_of, task, tensors


def test_required_presets_exist():
    assert {"reversal-fast", "reversal-seed", "copy", "sort", "order", "order-vectors", "char-lm"} <= set(PRESETS)
    assert {"induction", "modular-add"} <= set(PRESETS)
    assert set(TASKS) == {"reversal", "copy", "sort", "order", "order-vectors", "char-lm", "scan", "pairs",
                          "induction", "modular-add"}
    assert all(TASKS[cfg.name] is type(make_task(cfg)) for cfg in TASK_PRESETS.values())


def test_a_task_class_registers_its_name_and_traits():
    from explorer.tasks.base import Task

    class Echo(Task, name="echo-test"):   # a new task is one class: its config is valid at once
        fixed_length = True
    try:
        with pytest.raises(ValueError, match="one fixed length"):
            TaskConfig("echo-test", min_len=3, max_len=4)
        assert TaskConfig("echo-test", min_len=4, max_len=4).name == "echo-test"
    finally:
        del TASKS["echo-test"]
    with pytest.raises(ValueError, match="is not a task; choose one of .*reversal"):
        TaskConfig("echo-test")


@pytest.mark.parametrize("name", PRESETS)
def test_same_config_gives_identical_tensors(name):
    a, b = task(name), make_task(TASK_PRESETS[name])
    for split in ("train", "val"):
        for x, y in zip(tensors(getattr(a, split)), tensors(getattr(b, split)), strict=True):
            assert torch.equal(x, y)


@pytest.mark.parametrize("name", PRESETS)
def test_different_seeds_differ(name):
    cfg = TASK_PRESETS[name]
    if cfg.n_train > 10_000:
        cfg = cfg.replace(n_train=2_000)
    a, b = make_task(cfg), make_task(cfg.replace(seed=cfg.seed + 1))
    x, y = tensors(a.train)[0], tensors(b.train)[0]
    assert x.shape != y.shape or not torch.equal(x, y)


@pytest.mark.parametrize("name", PRESETS)
def test_split_sizes_and_vocab(name):
    t = task(name)
    assert (len(t.train), len(t.val)) == (t.cfg.n_train, t.cfg.n_val)
    assert t.vocab[:3] == SPECIALS and len(set(t.vocab)) == len(t.vocab)
    assert t.kind in ("seq2seq", "classify", "lm")
    assert (t.class_names != ()) == (t.kind == "classify")
    for x in tensors(t.train):
        if x.dtype == torch.long and x is not t.train.label:
            assert 0 <= int(x.min()) and int(x.max()) < len(t.vocab)


@pytest.mark.parametrize("name", PRESETS)
def test_train_and_val_are_disjoint(name):
    t = task(name)
    assert not rows_of(t.train) & rows_of(t.val)


@pytest.mark.parametrize("name", PRESETS)
def test_sample_is_deterministic_and_drops_all_pad_columns(name):
    t = task(name)
    a = t.sample(16, torch.Generator().manual_seed(5))
    b = t.sample(16, torch.Generator().manual_seed(5))
    assert len(a) == 16
    for x, y in zip(tensors(a), tensors(b), strict=True):
        assert torch.equal(x, y)
    for x in (a.src, a.tgt_in, a.tgt_out):
        if x is not None and x.dim() == 2:
            assert bool((x[:, -1] != PAD).any()), "the last column must hold a token in some row"


@pytest.mark.parametrize("name", PRESETS)
def test_rows_within_a_split_are_distinct(name):
    t = task(name)
    repeated = 1_466 if name == "scan-addjump" else 0  # the paper's add-jump file repeats "jump" alone
    if t.kind != "lm":  # language-model windows may overlap by design
        assert len(rows_of(t.train)) == len(t.train) - repeated


@pytest.mark.parametrize("name", PRESETS)
def test_iter_val_walks_the_validation_split_in_order(name):
    t = task(name)
    batches = list(t.iter_val(100))
    assert sum(len(b) for b in batches) == len(t.val)
    first = tensors(batches[0])[0]
    full = tensors(t.val)[0][:100]
    assert torch.equal(first, full[:, :first.shape[1]] if first.dim() > 1 else full)
    if first.dim() > 1:
        assert bool((full[:, first.shape[1]:] == PAD).all())


@pytest.mark.parametrize("name", PRESETS)
def test_model_config_passes_check_and_short_max_len_fails(name):
    t = task(name)
    for base in (None, CLASSROOM_PRESETS["tiny"], ModelConfig(max_len=4)):
        cfg = t.model_config(base)
        t.check(cfg)
        assert cfg.pad_idx == PAD and cfg.max_len >= max(t.max_src_len, t.max_tgt_len)
    need = max(t.max_src_len, t.max_tgt_len)
    with pytest.raises(ValueError, match=rf"max_len={need - 1} .*max_len >= {need}"):
        t.check(t.model_config().replace(max_len=need - 1))


@pytest.mark.parametrize("name", PRESETS)
def test_example_matches_solve_and_labels(name):
    t = task(name)
    src, answer = t.example("val", 3)
    if t.kind == "lm":
        assert answer == t.val.tgt_out[3].tolist()
    elif t.kind == "classify":
        assert answer == [int(t.val.label[3])] == t.solve(src)
    else:
        assert answer == t.solve(src)
    labels = t.position_labels(t.val.src[3] if t.val.src is not None else t.val.tgt_in[3])
    assert len(labels) == (t.max_src_len or t.max_tgt_len) and all(isinstance(s, str) for s in labels)
    with pytest.raises(ValueError, match="index"):
        t.example("val", len(t.val))
    with pytest.raises(ValueError, match="split"):
        t.example("test")
