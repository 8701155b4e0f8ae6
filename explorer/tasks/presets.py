"""The task presets: a name for each TaskConfig the app, the CLI and the lessons offer; and the config that
a preset's name, or a teacher's own data in its place (explorer/tasks/own_data.py), gives."""

from __future__ import annotations

import functools

# the classes these configs name register themselves when defined (explorer/tasks/base.py, TASKS)
from explorer.tasks import charlm, learning, order, scan, seq2seq  # noqa: F401
from explorer.tasks.base import TaskConfig
from explorer.tasks.own_data import OWN, check_text, decode, pairs_config, split_lines

TASK_PRESETS: dict[str, TaskConfig] = {
    "reversal-fast": TaskConfig("reversal", n_symbols=10, min_len=4, max_len=8, n_train=10_000, n_val=500),
    # Exercise 2.3 of the chapter: reverse random integers in [1, 100], lengths 10-20.
    "reversal-seed": TaskConfig("reversal", n_symbols=100, min_len=10, max_len=20, n_train=50_000,
                                n_val=1_000),
    "copy": TaskConfig("copy", n_symbols=10, min_len=4, max_len=8, n_train=10_000, n_val=500),
    "sort": TaskConfig("sort", n_symbols=10, min_len=4, max_len=8, n_train=10_000, n_val=500),
    "order": TaskConfig("order", n_symbols=6, min_len=8, max_len=8, n_train=4_000, n_val=500),
    # The notebook's order-detection task: fixed A and B vectors among noise, T=8, D=16.
    "order-vectors": TaskConfig("order-vectors", min_len=8, max_len=8, n_train=400, n_val=150,
                                dim=16, noise=0.1),
    "char-lm": TaskConfig("char-lm", min_len=32, max_len=32, n_train=4_000, n_val=256),
    # SCAN (Lake & Baroni 2018) with the paper's split sizes (explorer/tasks/scan.py); val is its test split.
    "scan-simple": TaskConfig("scan", n_train=16_728, n_val=4_182, split="simple"),
    "scan-addjump": TaskConfig("scan", n_train=14_670, n_val=7_706, split="addjump"),
    "scan-length": TaskConfig("scan", n_train=16_990, n_val=3_920, split="length"),
    # Induction heads (Olsson et al. 2022): 6-12 distinct tokens of 40, then the same tokens again.
    "induction": TaskConfig("induction", n_symbols=40, min_len=6, max_len=12, n_train=20_000, n_val=500),
    # Grokking (Power et al. 2022, Nanda et al. 2023): p = 59, half of the p² = 3481 pairs train, the rest validate.
    "modular-add": TaskConfig("modular-add", n_symbols=59, n_train=1_740, n_val=1_741),
}



@functools.lru_cache(maxsize=4)  # a page builds its params on every rerun: a 4 MiB file is parsed once
def _pairs_once(text: str) -> TaskConfig:
    return pairs_config(text)


def preset_or_pairs(task: str, data: str = "", seed: int | None = None) -> TaskConfig:
    """Where a task preset is named (experiments, searches), OWN names a teacher's TSV, whose text is `data`:
    the checked TaskConfig (DataError names the line), split by `seed`; a preset's config takes no data."""
    if task != OWN:
        if data:
            raise ValueError(f"data= is only for task={OWN!r} (a TSV of your own pairs); task={task!r} makes its own")
        if task not in TASK_PRESETS:
            raise ValueError(f"task {task!r} is not known; choose one of {', '.join([*TASK_PRESETS, OWN])}")
        cfg = TASK_PRESETS[task]
        return cfg if seed is None else cfg.replace(seed=seed)
    if not data:
        raise ValueError(f"task={OWN!r} needs data=: the lines of a TSV file, source<TAB>target")
    return _pairs_once(data).replace(seed=seed or 0)


def text_config(data: bytes | str, seed: int = 0) -> TaskConfig:
    """The char-lm TaskConfig of a pasted text: the preset's context, as many validation windows as fit."""
    text = check_text("\n".join(split_lines(decode(data, "the text"))))
    base = TASK_PRESETS["char-lm"]
    windows = len(text) - int(len(text) * 0.9) - base.max_len   # of the held-out tenth (CharLM.train_fraction)
    return base.replace(seed=seed, text=text, n_val=max(1, min(base.n_val, windows)))


__all__ = ["TASK_PRESETS", "preset_or_pairs", "text_config"]
