"""Toy tasks: seeded generators with a train/validation split, axis labels and expected attention.

One frozen `TaskConfig` gives one `Task` whose `train` and `val` splits are whole tensors; the same
config always gives identical tensors (numpy and torch generators seeded from `cfg.seed`).
Nothing is downloaded: sequences are drawn at random, the char-lm text lives in `corpus.py`.

Layout: `base` (ids, TaskConfig, Batch, Task and the TASKS it registers), `presets` (TASK_PRESETS),
`sampling` (distinct rows), `seq2seq`
(Reversal, Copy, Sort), `order` (Order, OrderVectors), `charlm` (CharLM) and `corpus` (its text),
`scan` (Scan, generated from its grammar), `learning` (Induction, ModularAdd: how models learn)
and `own_data` (Pairs from a teacher's TSV, checks of own text).
"""

from __future__ import annotations

from explorer.tasks.base import (
    ARCH_FOR_KIND,
    BOS,
    EOS,
    PAD,
    SPECIALS,
    TASKS,
    Batch,
    Task,
    TaskConfig,
)
from explorer.tasks.corpus import CORPUS

# Each task class registers its name as it is defined, so this order is (nearly) the order messages list
# them in: charlm imports own_data, so pairs comes before char-lm.
# isort: off
from explorer.tasks.seq2seq import Copy, Reversal, Sort
from explorer.tasks.order import Order, OrderVectors
from explorer.tasks.charlm import CharLM
from explorer.tasks.scan import Scan
from explorer.tasks.own_data import Pairs
from explorer.tasks.learning import Induction, ModularAdd
from explorer.tasks.presets import TASK_PRESETS
# isort: on


def make_task(cfg: TaskConfig | str) -> Task:
    """Build a task from a config or a preset name (see TASK_PRESETS)."""
    if isinstance(cfg, str):
        if cfg not in TASK_PRESETS:
            raise ValueError(f"task preset {cfg!r} is not known; choose one of {', '.join(TASK_PRESETS)}")
        cfg = TASK_PRESETS[cfg]
    return TASKS[cfg.name](cfg)


__all__ = ["PAD", "BOS", "EOS", "SPECIALS", "ARCH_FOR_KIND", "TASK_PRESETS",
           "TaskConfig", "Batch", "Task", "TASKS", "make_task", "Reversal", "Copy", "Sort", "Order",
           "OrderVectors", "CharLM", "CORPUS", "Scan", "Pairs",
           "Induction", "ModularAdd"]
