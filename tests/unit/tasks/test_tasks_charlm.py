"""The character language model: windows from disjoint parts of the text, encoding and labels."""

from __future__ import annotations

import pytest
import torch

from explorer.tasks import SPECIALS, TASK_PRESETS, make_task
from explorer.tasks.corpus import CORPUS
from tests.unit.tasks.samples import task


def test_char_lm_windows_come_from_disjoint_parts_of_the_text():
    t = task("char-lm")
    assert 4_000 <= len(CORPUS.encode()) <= 6_000
    assert t.vocab == SPECIALS + tuple(sorted(set(CORPUS)))
    cut = int(len(CORPUS) * 0.9)
    head, tail = CORPUS[:cut], CORPUS[cut:]
    for batch, part in ((t.train, head), (t.val, tail)):
        assert torch.equal(batch.tgt_in[:, 1:], batch.tgt_out[:, :-1])
        assert batch.tgt_in.shape[1] == 32
        for tin, tout in zip(batch.tgt_in[:50], batch.tgt_out[:50], strict=True):
            window = "".join(t.tokens(tin.tolist() + tout[-1:].tolist()))
            assert window in part
    val_windows = {"".join(t.tokens(r)) for r in t.val.tgt_in.tolist()}
    assert not any(w in head for w in val_windows)
    src, nxt = t.example("val", 0)
    assert t.solve(src) == nxt and t.solve([]) == []


def test_char_lm_encode_and_labels():
    t = task("char-lm")
    assert t.tokens(t.encode("the model")) == list("the model")
    assert t.position_labels(t.encode("a b")) == ["a", "␣", "b"]
    with pytest.raises(ValueError, match="empty"):
        t.encode("")
    with pytest.raises(ValueError, match=r"unknown characters \['#', '@'\]"):
        t.encode("a@b#")
    with pytest.raises(ValueError, match="maximum is 32"):
        t.encode("a" * 33)
    with pytest.raises(ValueError, match="n_val"):
        make_task(TASK_PRESETS["char-lm"].replace(n_val=5_000))
