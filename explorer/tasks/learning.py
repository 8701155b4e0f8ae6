"""Two language-model tasks where *how* a model learns is the lesson (issue 38):

- `induction`: a random first half, then the same half again. Only a model that finds the earlier
  occurrence of the current token and copies the token after it (an induction head, Olsson et al. 2022)
  predicts the second half; the first half is unpredictable (loss near log n_symbols).
- `modular-add`: `a + b =` followed by (a + b) mod p, every integer one token named by its digits; trained
  full-batch on a fraction of the p² pairs, it memorises first and generalises (groks) much later
  (Power et al. 2022, Nanda et al. 2023).

Both report the loss and accuracy of parts of the target apart (`Task.metric_masks`): `repeat_*` and
`first_*` for induction; modular-add's only target is the answer, so its val_exact is that accuracy.
"""

from __future__ import annotations

import numpy as np
import torch

from explorer.tasks.base import PAD, SPECIALS, Batch, Task, as_ids, shown, take_rows


class Induction(Task, name="induction"):
    """n_symbols random tokens (named t1, t2, ...): a first half of min_len..max_len distinct tokens, then the
    same half again. The half's length varies by row, so no fixed offset (a one-layer model's positional
    shortcut) finds the earlier occurrence: only matching the token before it does."""

    kind = "lm"
    metric_parts = ("repeat", "first")

    def __init__(self, cfg) -> None:
        if cfg.min_len < 2:
            raise ValueError(f"min_len={cfg.min_len}: a half needs at least 2 tokens to repeat; use min_len >= 2")
        if cfg.n_symbols < cfg.max_len:
            raise ValueError(f"n_symbols={cfg.n_symbols} is smaller than max_len={cfg.max_len}: the first half "
                             f"holds distinct tokens; use n_symbols >= {cfg.max_len}")
        super().__init__(cfg)

    def _vocab(self):
        return SPECIALS + tuple(f"t{i}" for i in range(1, self.cfg.n_symbols + 1))

    @property
    def max_src_len(self):
        return 0

    @property
    def max_tgt_len(self):
        return 2 * self.cfg.max_len - 1

    def _build(self, rng):
        c, top = self.cfg, self.cfg.max_len
        total = c.n_train + c.n_val
        draw = total + total // 8 + 8   # duplicate rows are rare, and dropped
        first = np.argsort(rng.random((draw, c.n_symbols)), axis=1)[:, :top] + len(SPECIALS)   # (N, top) distinct
        half = rng.integers(c.min_len, top + 1, size=(draw, 1))                                # (N, 1)
        pos = np.arange(2 * top)
        source = np.where(pos < half, pos, np.minimum(pos - half, top - 1))                    # (N, 2 top)
        window = np.where(pos < 2 * half, np.take_along_axis(first, source, 1), PAD)
        _, keep = np.unique(window, axis=0, return_index=True)
        window = window[np.sort(keep)]
        if len(window) < total:
            raise ValueError(f"n_train + n_val = {total} is more distinct rows than these lengths hold; lower them")
        window = torch.from_numpy(window[:total])
        out = Batch(tgt_in=window[:, :-1], tgt_out=window[:, 1:])
        return take_rows(out, slice(0, c.n_train)), take_rows(out, slice(c.n_train, total))

    @staticmethod
    def halves(batch: Batch) -> torch.Tensor:
        """(B, 1) the length of each row's first half (its window holds twice as many tokens)."""
        return ((batch.tgt_in != PAD).sum(1, keepdim=True) + 1) // 2

    def metric_masks(self, batch: Batch) -> dict[str, torch.Tensor]:
        """The target positions of each part: the repeated half (from the second repeated token on, the first
        an induction head can predict) and the first half (unpredictable), both (B, T) bool."""
        t = torch.arange(batch.tgt_out.size(1))
        real, half = batch.tgt_out != PAD, self.halves(batch)
        return {"repeat": real & (t >= half), "first": real & (t < half)}

    def _example(self, batch, i):
        return batch.tgt_in[i].tolist(), batch.tgt_out[i].tolist()

    def _encode_word(self, word):
        if self._id.get(word, 0) >= len(SPECIALS):
            return self._id[word]
        raise ValueError(f"unknown token {shown(word)}; this task's tokens are t1..t{self.cfg.n_symbols}")

    def solve(self, src_ids):
        """Next token at each position the induction way: the token after the latest earlier occurrence of the
        current one (PAD where it has none)."""
        ids = as_ids(src_ids)
        last, out = {}, []
        for i, tok in enumerate(ids):
            out.append(ids[last[tok] + 1] if tok in last else PAD)
            last[tok] = i
        return out


class ModularAdd(Task, name="modular-add"):
    """`a + b =` -> (a + b) mod p with p = n_symbols; n_train of the p² pairs train, n_val others validate
    (the training fraction is n_train / p²). The loss is on the answer only (the other targets are PAD)."""

    kind = "lm"

    def __init__(self, cfg) -> None:
        p = cfg.n_symbols
        if p < 2:
            raise ValueError(f"n_symbols={p} is the modulus p; use p >= 2")
        if cfg.n_train + cfg.n_val > p * p:
            raise ValueError(f"n_train + n_val = {cfg.n_train + cfg.n_val} is more than the p² = {p * p} pairs "
                             f"of n_symbols={p}; lower them")
        super().__init__(cfg)

    def _vocab(self):
        return SPECIALS + tuple(str(i) for i in range(self.cfg.n_symbols)) + ("+", "=")

    @property
    def max_src_len(self):
        return 0

    @property
    def max_tgt_len(self):
        return 4

    def pairs_batch(self, a: torch.Tensor, b: torch.Tensor) -> Batch:
        """The rows `a + b =` with their answers for 1-D tensors of integers a and b."""
        p, n = self.cfg.n_symbols, len(SPECIALS)
        plus, eq = torch.full_like(a, n + p), torch.full_like(a, n + p + 1)
        tgt_in = torch.stack([a + n, plus, b + n, eq], 1)                        # (N, 4)
        tgt_out = torch.full_like(tgt_in, PAD)
        tgt_out[:, -1] = (a + b) % p + n
        return Batch(tgt_in=tgt_in, tgt_out=tgt_out)

    def _build(self, rng):
        c, p = self.cfg, self.cfg.n_symbols
        idx = torch.from_numpy(rng.permutation(p * p)[:c.n_train + c.n_val])
        rows = self.pairs_batch(idx // p, idx % p)
        return take_rows(rows, slice(0, c.n_train)), take_rows(rows, slice(c.n_train, None))

    def sample(self, batch_size, generator, by_length=False):
        """Full-batch training as the papers do: a batch as large as the training split is the split itself."""
        if batch_size >= len(self.train):
            return self.train
        return super().sample(batch_size, generator, by_length)

    def _example(self, batch, i):
        return batch.tgt_in[i].tolist(), batch.tgt_out[i].tolist()

    def _encode_word(self, word):
        p = self.cfg.n_symbols
        if self._id.get(word, 0) >= len(SPECIALS):   # "0".."p-1", "+", "="
            return self._id[word]
        raise ValueError(f"unknown token {shown(word)}; type integers 0..{p - 1}, '+' and '=', e.g. '3 + 5 ='")

    def solve(self, src_ids):
        """The targets of `a + b =`: PAD, PAD, PAD, then (a + b) mod p."""
        ids, n, p = as_ids(src_ids), len(SPECIALS), self.cfg.n_symbols
        if len(ids) < 3 or not all(n <= ids[k] < n + p for k in (0, 2)):
            return []
        return [PAD] * (len(ids) - 1) + [(ids[0] + ids[2] - 2 * n) % p + n]
