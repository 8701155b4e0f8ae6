"""Sequence to sequence tasks (reversal, copy, sort): targets, expected cross-attention, small spaces,
encoding errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.tasks import BOS, EOS, PAD, SPECIALS, TASK_PRESETS, Batch, TaskConfig, make_task
from tests.unit.tasks.samples import SEQ2SEQ, rows_of, task, unpad


@pytest.mark.parametrize("name", SEQ2SEQ)
def test_seq2seq_tensors_hold_bos_target_eos_and_padding(name):
    t = task(name)
    rule = {"reversal": lambda s: s[::-1], "copy": list, "sort": sorted}[t.cfg.name]
    for batch in (t.val, _take_rows(t.train, 300)):
        for src_row, tin, tout in zip(batch.src, batch.tgt_in, batch.tgt_out, strict=True):
            src = unpad(src_row)
            target = t.solve(src)
            assert target == rule(src)
            assert unpad(tout) == target + [EOS]
            assert unpad(tin) == [BOS] + target
            assert BOS not in src and EOS not in src


def _take_rows(batch, n):
    return Batch(*(None if x is None else x[:n] for x in (batch.src, batch.tgt_in, batch.tgt_out, batch.label)))


def test_reversal_seed_is_the_chapters_exercise():
    t = task("reversal-seed")
    for batch in (t.train, t.val):
        lengths = (batch.src != PAD).sum(1)
        assert int(lengths.min()) == 10 and int(lengths.max()) == 20
        values = {int(t.tokens([i])[0]) for i in batch.src[batch.src != PAD].unique().tolist()}
        assert values == set(range(1, 101))
    assert t.max_tgt_len == 21 and t.encode("1 100") == [3, 102]


@pytest.mark.parametrize("name", SEQ2SEQ)
def test_expected_cross_attention_points_at_the_copied_token(name):
    t = task(name)
    for i in range(20):
        src, target = t.example("val", i)
        pattern = t.expected_cross_attention(src)
        assert pattern.shape == (len(target) + 1, len(src))
        assert np.all(pattern[-1] == 0) and np.all(pattern[:-1].sum(1) == 1)
        for row, out in zip(pattern[:-1], target, strict=True):
            assert src[int(row.argmax())] == out


def test_expected_cross_attention_shapes_per_task():
    src = [5, 3, 5, 4]
    rev = make_task(TASK_PRESETS["reversal-fast"].replace(n_train=10, n_val=5))
    copy = make_task(TASK_PRESETS["copy"].replace(n_train=10, n_val=5))
    sort = make_task(TASK_PRESETS["sort"].replace(n_train=10, n_val=5))
    assert np.array_equal(rev.expected_cross_attention(src)[:-1], np.eye(4)[::-1])
    assert np.array_equal(copy.expected_cross_attention(src)[:-1], np.eye(4))
    assert sort.expected_cross_attention(src)[:-1].argmax(1).tolist() == [1, 3, 0, 2]  # stable ties
    assert task("order").expected_cross_attention([3, 4]) is None


def test_small_space_uses_every_sequence_once_and_refuses_more():
    cfg = TaskConfig("copy", n_symbols=2, min_len=1, max_len=3, n_train=10, n_val=4)  # 2+4+8 = 14 exist
    t = make_task(cfg)
    everything = rows_of(t.train) | rows_of(t.val)
    assert len(everything) == 14
    with pytest.raises(ValueError, match="only 14 distinct sequences"):
        make_task(cfg.replace(n_train=11))


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["reversal", "copy", "sort"]), n=st.integers(2, 6), lo=st.integers(1, 4),
       extra=st.integers(0, 3), n_train=st.integers(1, 300), n_val=st.integers(1, 60), seed=st.integers(0, 99))
def test_any_small_seq2seq_config_is_disjoint_and_correct(name, n, lo, extra, n_train, n_val, seed):
    cfg = TaskConfig(name, n_symbols=n, min_len=lo, max_len=lo + extra, n_train=n_train, n_val=n_val, seed=seed)
    space = sum(n ** L for L in range(lo, lo + extra + 1))
    if n_train + n_val > space:
        with pytest.raises(ValueError, match=f"only {space} distinct"):
            make_task(cfg)
        return
    t = make_task(cfg)
    assert len(rows_of(t.train)) == n_train and not rows_of(t.train) & rows_of(t.val)
    for src_row, tout in zip(t.val.src, t.val.tgt_out, strict=True):
        assert unpad(tout) == t.solve(unpad(src_row)) + [EOS]


def test_seq2seq_encode_errors():
    t = task("reversal-seed")
    assert t.tokens(t.encode("3 1, 4")) == ["3", "1", "4"]
    with pytest.raises(ValueError, match="empty"):
        t.encode("   ")
    with pytest.raises(ValueError, match=r"unknown token 'x'.*integers 1\.\.100"):
        t.encode("3 x 4")
    for bad in ("0", "101", "-3", "2.5"):
        with pytest.raises(ValueError, match="unknown token"):
            t.encode(bad)
    with pytest.raises(ValueError, match="maximum is 20"):
        t.encode(" ".join(["7"] * 21))
    assert t.tokens([PAD, BOS, EOS]) == list(SPECIALS)
