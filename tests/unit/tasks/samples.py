"""Shared by the task tests (tests/unit/test_tasks_*.py): the presets, each built once per test session,
and the rows of a batch."""

from __future__ import annotations

from explorer.tasks import PAD, TASK_PRESETS, Batch, make_task

PRESETS = sorted(TASK_PRESETS)
SEQ2SEQ = ["reversal-fast", "reversal-seed", "copy", "sort"]
_CACHE: dict = {}


def task(name):
    """Each preset is built once per test session (reversal-seed has 51k rows)."""
    if name not in _CACHE:
        _CACHE[name] = make_task(name)
    return _CACHE[name]


def tensors(batch: Batch):
    return [t for t in (batch.src, batch.tgt_in, batch.tgt_out, batch.label) if t is not None]


def unpad(row) -> list[int]:
    ids = row.tolist()
    assert PAD not in ids[:len([i for i in ids if i != PAD])], "padding must be on the right"
    return [i for i in ids if i != PAD]


def rows_of(batch: Batch) -> set[bytes]:
    x = batch.src if batch.src is not None else batch.tgt_in
    return {r.tobytes() for r in x.reshape(len(batch), -1).numpy()}
