"""Seeded draws of distinct rows, shared by the tasks that must keep train and validation disjoint."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd, so powers never collapse to zero


def distinct_rows(rng: np.random.Generator, count: int, cap: int,
                   draw: Callable[[int], np.ndarray], decode: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """`count` distinct rows, in random order, from a stratum of `cap` possible rows."""
    if count * 4 >= cap:  # dense: rejection would stall, so pick row indices without replacement
        return decode(rng.choice(cap, size=count, replace=False))
    rows = draw(count + count // 8 + 8)
    while True:
        # Hash each row (polynomial mod 2**64); a rare collision only drops a row, drawn again later.
        keys = (rows.astype(np.uint64) * _HASH_BASE ** np.arange(rows.shape[1], dtype=np.uint64)).sum(1)
        _, first = np.unique(keys, return_index=True)
        rows = rows[np.sort(first)]  # keep first occurrences in drawn order
        if len(rows) >= count:
            return rows[:count]
        rows = np.concatenate([rows, draw(2 * (count - len(rows)) + 8)])


def digits_of(idx: np.ndarray, base: int, width: int) -> np.ndarray:
    return (idx[:, None] // base ** np.arange(width, dtype=np.int64)) % base + 1  # (N, width) in 1..base


def fill_strata(total: int, caps: list[int]) -> list[int]:
    """Share `total` rows over strata as evenly as their capacities allow (smallest first)."""
    counts, left = [0] * len(caps), total
    for k, i in enumerate(sorted(range(len(caps)), key=caps.__getitem__)):
        counts[i] = min(caps[i], -(-left // (len(caps) - k)))
        left -= counts[i]
    return counts
