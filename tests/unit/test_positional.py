"""Positional encodings: the chapter's formula, its properties, and RoPE's relative-position claim."""

import math

import numpy as np
import pytest
import torch

from explorer.config import POS_ENCODINGS, ModelConfig
from explorer.positional import POSITIONAL, make_positional, rope_rotate, sinusoidal_table


@pytest.mark.parametrize("d_model", [64, 7, 1])
def test_sinusoidal_matches_formula(d_model):
    table = sinusoidal_table(100, d_model)
    assert table.shape == (100, d_model)
    for pos in (0, 1, 37, 99):
        for dim in range(d_model):
            i = dim // 2
            angle = pos / 10_000 ** (2 * i / d_model)
            want = math.sin(angle) if dim % 2 == 0 else math.cos(angle)
            assert table[pos, dim] == pytest.approx(want, abs=1e-12)


def test_sinusoidal_properties():
    table = sinusoidal_table(100, 64)
    # unique: no two positions share a vector
    dists = np.linalg.norm(table[:, None] - table[None], axis=-1)
    assert dists[~np.eye(100, dtype=bool)].min() > 1e-3
    # the dot product depends only on the offset k, not on the position
    for k in (1, 5, 20):
        dots = (table[:-k] * table[k:]).sum(-1)
        assert dots.std() < 1e-9
    # nearby positions are more similar than distant ones
    dot = table @ table[50]
    assert dot[51] > dot[60] > dot[90]
    # low dimensions vary fast, high dimensions slowly
    assert np.abs(np.diff(table[:, 0])).mean() > np.abs(np.diff(table[:, 62])).mean() * 10


def test_rope_dot_product_depends_only_on_offset():
    cfg = ModelConfig(d_model=32, n_heads=2, pos_encoding="rope", max_len=64)
    rope = make_positional(cfg)
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(16, generator=g), torch.randn(16, generator=g)
    rq = rope.rotate(q.expand(64, 16).clone())      # the same q at every position
    rk = rope.rotate(k.expand(64, 16).clone())
    for offset in (0, 3, 10):
        dots = torch.stack([rq[m] @ rk[m - offset] for m in range(offset, 64)])
        assert dots.std() < 1e-4
    # and it does depend on the offset
    assert abs(float(rq[20] @ rk[20] - rq[20] @ rk[10])) > 1e-3
    # a rotation keeps the length
    assert torch.allclose(rq.norm(dim=-1), q.norm().expand(64), atol=1e-5)


def test_rope_rotate_offset_continues_positions():
    cfg = ModelConfig(d_model=16, n_heads=2, pos_encoding="rope", max_len=32)
    rope = make_positional(cfg)
    x = torch.randn(1, 2, 10, 8)
    full = rope.rotate(x)
    assert torch.allclose(rope.rotate(x[:, :, 4:], offset=4), full[:, :, 4:])
    zero = torch.zeros(1, 4)
    assert torch.equal(rope_rotate(x[..., :1, :], zero.cos(), zero.sin()), x[..., :1, :])


def test_registry_interface():
    assert tuple(POSITIONAL) == POS_ENCODINGS == ("sinusoidal", "learned", "rope", "alibi", "none")
    x = torch.randn(2, 5, 16)
    for name in POSITIONAL:
        pe = make_positional(ModelConfig(d_model=16, n_heads=2, pos_encoding=name))
        added, rotated = pe(x), pe.rotate(x.view(2, 5, 2, 8).transpose(1, 2))
        assert added.shape == x.shape and rotated.shape == (2, 2, 5, 8)
        assert torch.equal(added, x) == (name in ("rope", "alibi", "none"))
        bias = pe.bias(5, 5)
        assert (bias is None) == (name != "alibi")
        if bias is not None:
            assert bias.shape == (2, 5, 5)
    learned = make_positional(ModelConfig(d_model=16, n_heads=2, pos_encoding="learned"))
    assert sum(p.numel() for p in learned.parameters()) == 64 * 16
