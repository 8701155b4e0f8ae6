"""Character language model on a short original text (explorer/tasks/corpus.py) or a teacher's own text."""

from __future__ import annotations

import numpy as np
import torch

from explorer.tasks.base import SPECIALS, Batch, Task, as_ids
from explorer.tasks.corpus import CORPUS
from explorer.tasks.own_data import check_text, name_chars

_VISIBLE = {" ": "␣", "\n": "⏎"}


class CharLM(Task, name="char-lm"):
    kind, fixed_length, own_text = "lm", True, True
    train_fraction = 0.9

    def __init__(self, cfg) -> None:
        self.text = check_text(cfg.text) if cfg.text else CORPUS
        super().__init__(cfg)

    def _vocab(self):
        return SPECIALS + tuple(sorted(set(self.text)))

    @property
    def max_src_len(self):
        return 0

    @property
    def max_tgt_len(self):
        return self.cfg.max_len

    def _build(self, rng):
        c, W = self.cfg, self.cfg.max_len + 1  # a window of W characters gives W - 1 predictions
        text = np.array([self._id[ch] for ch in self.text], dtype=np.int64)
        cut = int(len(text) * self.train_fraction)
        n_train_pos, n_val_pos = cut - W + 1, len(text) - cut - W + 1
        if n_val_pos < c.n_val:
            raise ValueError(f"n_val={c.n_val} is more than the {max(n_val_pos, 0)} distinct windows of "
                             f"max_len={c.max_len} in the validation text ({len(text) - cut} characters); "
                             "lower n_val or max_len")
        starts = [rng.integers(0, n_train_pos, c.n_train),  # overlapping windows, as LMs are trained
                  cut + np.linspace(0, n_val_pos - 1, c.n_val).round().astype(np.int64)]  # in text order
        out = []
        for s in starts:
            w = torch.from_numpy(text[s[:, None] + np.arange(W)])  # (N, W)
            out.append(Batch(tgt_in=w[:, :-1], tgt_out=w[:, 1:]))
        return out

    def _example(self, batch, i):
        return batch.tgt_in[i].tolist(), batch.tgt_out[i].tolist()

    def position_labels(self, src_row):
        return [_VISIBLE.get(t, t) for t in self.tokens(src_row)]

    def encode(self, text):
        if not text:
            raise ValueError("the input is empty; type some text, e.g. 'the model reads'")
        unknown = sorted(set(text) - set(self.vocab[len(SPECIALS):]))
        if unknown:
            known = "".join(self.vocab[len(SPECIALS):]).replace("\n", "")
            known = known if len(known) <= 80 else known[:80] + "…"
            raise ValueError(f"unknown characters {unknown} ({name_chars(unknown)}); this task knows only "
                             f"the characters of its text: {known!r}")
        self._check_length(len(text), "characters")
        return [self._id[ch] for ch in text]

    def solve(self, src_ids):
        """The characters that follow each position where the input first occurs in the text."""
        ids = as_ids(src_ids)
        if not ids or min(ids) < len(SPECIALS):
            return []
        start = self.text.find("".join(self.tokens(ids)))
        if start < 0 or start + len(ids) >= len(self.text):
            return []
        return [self._id[ch] for ch in self.text[start + 1:start + 1 + len(ids)]]
