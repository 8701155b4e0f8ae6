"""Sampling by length: each batch from one range of lengths, less padding, the data's proportions kept."""

from __future__ import annotations

import pytest
import torch

from explorer.tasks import PAD
from tests.unit.tasks.samples import SEQ2SEQ, task, tensors


@pytest.mark.parametrize("name", SEQ2SEQ)
def test_by_length_batches_come_from_one_range_of_lengths(name):
    t = task(name)
    g = torch.Generator().manual_seed(0)
    lengths = (t.train.src != PAD).sum(1)
    ranges = [(int(lengths[r].min()), int(lengths[r].max())) for r in t._length_buckets()[0]]
    assert 1 < len(ranges) <= t.length_buckets and all(a[1] < b[0] for a, b in zip(ranges, ranges[1:]))
    padded = uniform = 0
    for _ in range(20):
        b = t.sample(32, g, by_length=True)
        n = (b.src != PAD).sum(1)
        assert len(b) == 32 and any(lo <= int(n.min()) and int(n.max()) <= hi for lo, hi in ranges)
        assert all(t.solve(row[:k]) == out[:k] for row, out, k in zip(b.src.tolist(), b.tgt_out.tolist(), n.tolist()))
        padded += int((b.src == PAD).sum()) / b.src.numel()
        u = t.sample(32, g).src
        uniform += int((u == PAD).sum()) / u.numel()
    assert padded < 0.6 * uniform


def test_by_length_with_a_bucket_per_length_pads_nothing():
    t = task("reversal-fast")
    t.length_buckets = 100
    try:
        g = torch.Generator().manual_seed(0)
        for _ in range(20):
            b = t.sample(32, g, by_length=True)
            assert all(bool((x != PAD).all()) for x in (b.src, b.tgt_in, b.tgt_out))
            assert b.tgt_in.size(1) == b.src.size(1) + 1
    finally:
        del t.length_buckets   # back to the class default


def test_by_length_batches_keep_the_data_distribution():
    """Over many batches, row lengths come in the proportions of the training data (uniform draws'),
    and rows are drawn uniformly within a length."""
    t = task("reversal-fast")
    data = (t.train.src != PAD).sum(1).bincount(minlength=9).float()
    g = torch.Generator().manual_seed(1)
    drawn = torch.zeros(9)
    for _ in range(3000):
        drawn += (t.sample(4, g, by_length=True).src != PAD).sum(1).bincount(minlength=9)
    assert (drawn / drawn.sum() - data / data.sum()).abs().max() < 0.02  # 12000 rows, 3000 batches: sd < 0.01
    rows = [r for _ in range(200) for r in t.sample(64, g, by_length=True).src.tolist()]
    four = [r for r in rows if len(r) - r.count(PAD) == 4]
    assert len(four) > 500 and len(set(map(tuple, four))) > 0.5 * len(four)  # not a few rows repeated


@pytest.mark.parametrize("name", ["order", "char-lm", "order-vectors"])
def test_by_length_is_the_plain_draw_when_every_row_has_one_length(name):
    t = task(name)
    a = t.sample(16, torch.Generator().manual_seed(3), by_length=True)
    b = t.sample(16, torch.Generator().manual_seed(3))
    assert all(torch.equal(x, y) for x, y in zip(tensors(a), tensors(b), strict=True))
