"""The tasks of issue 38: induction (a random half repeated) and modular-add (a + b = c mod p)."""

from __future__ import annotations

import pytest
import torch

from explorer.config import ModelConfig
from explorer.evaluation import evaluate
from explorer.model import build_model
from explorer.tasks import PAD, SPECIALS, TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import train_steps
from tests.unit.tasks.samples import task


def test_induction_windows_repeat_a_half_of_distinct_tokens_of_varying_length():
    t = task("induction")
    for batch in (t.train, t.val):
        assert torch.equal(batch.tgt_in[:, 1:], batch.tgt_out[:, :-1])
        halves = t.halves(batch)[:, 0].tolist()
        assert set(halves) == set(range(t.cfg.min_len, t.cfg.max_len + 1))   # no fixed offset to copy from
        windows = torch.cat([batch.tgt_in, batch.tgt_out[:, -1:]], 1).tolist()   # (N, 2 max_len)
        for window, half in zip(windows[:200], halves, strict=False):
            assert window[:half] == window[half:2 * half] and len(set(window[:half])) == half
            assert min(window[:2 * half]) >= len(SPECIALS) and set(window[2 * half:]) <= {PAD}
    src, nxt = t.example("val", 0)
    half = int(t.halves(t.val)[0])
    assert t.solve(src)[half:2 * half - 1] == nxt[half:2 * half - 1]   # the induction rule predicts the repeat
    assert t.solve(src)[:half] == [PAD] * half                       # and nothing of the first half
    assert t.tokens(t.encode("t1 t2 t1")) == ["t1", "t2", "t1"]
    with pytest.raises(ValueError, match="t1..t40"):
        t.encode("t41")


def test_induction_masks_split_the_targets_at_the_repeat():
    t = task("induction")
    masks = t.metric_masks(t.val)
    assert set(masks) == set(t.metric_parts) == {"repeat", "first"}
    real = t.val.tgt_out != PAD
    assert torch.equal(masks["repeat"] | masks["first"], real) and not bool((masks["repeat"] & masks["first"]).any())
    assert torch.equal(masks["repeat"].sum(1, keepdim=True), t.halves(t.val) - 1)
    with pytest.raises(ValueError, match="n_symbols >= 12"):
        make_task(TaskConfig("induction", n_symbols=8, min_len=4, max_len=12))


def test_modular_add_rows_and_answers():
    t = task("modular-add")
    p = t.cfg.n_symbols
    assert t.vocab == SPECIALS + tuple(str(i) for i in range(p)) + ("+", "=")
    rows = t.train.tgt_in.tolist() + t.val.tgt_in.tolist()
    assert len({tuple(r) for r in rows}) == len(rows) == t.cfg.n_train + t.cfg.n_val
    for tin, tout in zip(t.val.tgt_in[:50].tolist(), t.val.tgt_out[:50].tolist(), strict=True):
        a, plus, b, eq = t.tokens(tin)
        assert (plus, eq) == ("+", "=") and tout[:3] == [PAD] * 3
        assert t.tokens(tout[-1:]) == [str((int(a) + int(b)) % p)]
        assert t.solve(tin) == tout
    assert t.encode("3 + 5 =") == t.pairs_batch(torch.tensor([3]), torch.tensor([5])).tgt_in[0].tolist()
    with pytest.raises(ValueError, match=f"integers 0..{p - 1}"):
        t.encode(f"{p} + 1 =")
    with pytest.raises(ValueError, match="more than the p²"):
        make_task(TaskConfig("modular-add", n_symbols=5, n_train=20, n_val=10))


def test_modular_add_trains_full_batch_on_the_answer_only():
    t = task("modular-add")
    assert t.sample(len(t.train) + 5, torch.Generator()) is t.train   # a batch as large as the split is it
    assert len(t.sample(16, torch.Generator().manual_seed(0))) == 16


def test_part_metrics_reach_the_evaluation_and_the_history():
    t = make_task(TaskConfig("induction", n_symbols=10, min_len=3, max_len=5, n_train=64, n_val=16))
    model = build_model(t.model_config(ModelConfig(d_model=16, n_heads=2, n_decoder_layers=1, d_ff=32)), seed=0)
    out = evaluate(model, t)
    assert {"repeat_loss", "repeat_acc", "first_loss", "first_acc"} <= set(out)
    recs = list(train_steps(model, t, TrainConfig(steps=3, batch_size=8, warmup=0, eval_every=2)))
    rows = [r.to_row() for r in recs]
    assert all(set(r) == set(rows[0]) for r in rows)                   # one table: every row the same columns
    assert rows[0]["repeat_acc"] is None and 0 <= rows[1]["repeat_acc"] <= 1
    assert "repeat_acc" not in make_task("copy").metric_parts
