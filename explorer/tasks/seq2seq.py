"""Sequence to sequence: the output copies source positions (reverse, copy, sort)."""

from __future__ import annotations

import numpy as np
import torch

from explorer.tasks.base import BOS, EOS, PAD, SPECIALS, Batch, Task, as_ids, shown, take_rows
from explorer.tasks.sampling import digits_of, distinct_rows, fill_strata


class _Seq2Seq(Task):
    kind, symbol_sequences = "seq2seq", True

    def _vocab(self):
        return SPECIALS + tuple(str(k) for k in range(1, self.cfg.n_symbols + 1))  # integer k has id k + 2

    @property
    def max_tgt_len(self) -> int:
        return self.cfg.max_len + 1  # BOS + target, target + EOS

    def _positions(self, rows: np.ndarray) -> np.ndarray:
        """(N, L) source position that each output position copies."""
        raise NotImplementedError

    def _build(self, rng):
        c, n = self.cfg, self.cfg.n_symbols
        lengths = range(c.min_len, c.max_len + 1)
        caps = [n ** L for L in lengths]
        total = c.n_train + c.n_val
        if sum(caps) < total:
            raise ValueError(f"only {sum(caps)} distinct sequences exist for n_symbols={n} and lengths "
                             f"{c.min_len}..{c.max_len}; lower n_train + n_val (now {total}) to at most that")
        S = c.max_len
        src = np.full((total, S), PAD, dtype=np.int64)
        tin, tout = np.full((2, total, S + 1), PAD, dtype=np.int64)
        r = 0
        for L, cap, count in zip(lengths, caps, fill_strata(total, caps)):
            rows = 2 + distinct_rows(rng, count, cap, lambda m, L=L: rng.integers(1, n + 1, size=(m, L)),
                                      lambda idx, L=L: digits_of(idx, n, L))  # (count, L)
            tgt = np.take_along_axis(rows, self._positions(rows), axis=1)
            src[r:r + count, :L] = rows
            tin[r:r + count, 0], tin[r:r + count, 1:L + 1] = BOS, tgt
            tout[r:r + count, :L], tout[r:r + count, L] = tgt, EOS
            r += count
        order = torch.from_numpy(rng.permutation(total))
        data = Batch(*(torch.from_numpy(a)[order] for a in (src, tin, tout)))
        return take_rows(data, slice(0, c.n_train)), take_rows(data, slice(c.n_train, total))

    def _encode_word(self, word):
        n = self.cfg.n_symbols
        value = self._symbol(word, n)
        if value is None:
            raise ValueError(f"unknown token {shown(word)}; this task reads integers 1..{n} separated by spaces")
        return value + 2

    def solve(self, src_ids):
        src = np.asarray(as_ids(src_ids), dtype=np.int64)
        return src[self._positions(src[None])[0]].tolist()

    def expected_cross_attention(self, src_ids):
        src = np.asarray(as_ids(src_ids), dtype=np.int64)
        L = len(src)
        pattern = np.zeros((L + 1, L))  # row t: decoder query t (BOS, y0, ...); the last emits EOS
        pattern[np.arange(L), self._positions(src[None])[0]] = 1.0
        return pattern


class Reversal(_Seq2Seq, name="reversal"):
    def _positions(self, rows):
        return np.broadcast_to(np.arange(rows.shape[1])[::-1], rows.shape)  # anti-diagonal


class Copy(_Seq2Seq, name="copy"):
    def _positions(self, rows):
        return np.broadcast_to(np.arange(rows.shape[1]), rows.shape)  # diagonal


class Sort(_Seq2Seq, name="sort"):
    def _positions(self, rows):
        return np.argsort(rows, axis=1, kind="stable")  # t-th smallest, ties in source order
