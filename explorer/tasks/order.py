"""Order detection: is A before B? Only position can tell, content cannot."""

from __future__ import annotations

import numpy as np
import torch

from explorer.config import nearest_valid_heads
from explorer.tasks.base import SPECIALS, Batch, Task, as_ids, shown
from explorer.tasks.sampling import digits_of, distinct_rows

_CLASSES = ("B first", "A first")  # label 1 = A comes first


class Order(Task, name="order"):
    kind, fixed_length = "classify", True
    class_names = _CLASSES

    def _vocab(self):
        return SPECIALS + ("A", "B") + tuple(str(k) for k in range(1, self.cfg.n_symbols + 1))

    def _build(self, rng):
        c, n, T = self.cfg, self.cfg.n_symbols, self.cfg.max_len
        a, b = self._id["A"], self._id["B"]
        pairs = np.array([(i, j) for i in range(T) for j in range(T) if i != j])  # (A pos, B pos)
        splits = [[], []]
        for label in (1, 0):  # balanced: each split gets half of each label
            ab = pairs[(pairs[:, 0] < pairs[:, 1]) == bool(label)]
            cap = len(ab) * n ** (T - 2)
            n_tr, n_va = (c.n_train + 1 - label) // 2, (c.n_val + 1 - label) // 2
            if n_tr + n_va > cap:
                raise ValueError(f"only {2 * cap} distinct sequences exist for T={T} with n_symbols={n} "
                                 f"distractors; lower n_train + n_val to at most {2 * cap}")

            def build(pair, digits, ab=ab):
                m, rows = len(pair), np.empty((len(pair), T), dtype=np.int64)
                free = np.ones((m, T), dtype=bool)
                free[np.arange(m), ab[pair, 0]] = free[np.arange(m), ab[pair, 1]] = False
                rows[free] = (digits + 4).ravel()  # distractor k has id k + 4
                rows[np.arange(m), ab[pair, 0]], rows[np.arange(m), ab[pair, 1]] = a, b
                return rows

            rows = distinct_rows(
                rng, n_tr + n_va, cap,
                lambda m, ab=ab: build(rng.integers(len(ab), size=m), rng.integers(1, n + 1, (m, T - 2))),
                lambda idx, ab=ab: build(idx % len(ab), digits_of(idx // len(ab), n, T - 2)))
            splits[0].append((rows[:n_tr], label))
            splits[1].append((rows[n_tr:], label))
        out = []
        for parts in splits:
            src = np.concatenate([r for r, _ in parts])
            label = np.concatenate([np.full(len(r), lab) for r, lab in parts])
            order = rng.permutation(len(src))
            out.append(Batch(src=torch.from_numpy(src[order]), label=torch.from_numpy(label[order])))
        return out

    def _example(self, batch, i):
        return batch.src[i].tolist(), [int(batch.label[i])]

    def _encode_word(self, word):
        if word.upper() in ("A", "B"):
            return self._id[word.upper()]
        value = self._symbol(word, self.cfg.n_symbols)
        if value is not None:
            return self._id[str(value)]
        raise ValueError(f"unknown token {shown(word)}; this task reads A, B and distractors "
                         f"1..{self.cfg.n_symbols} separated by spaces")

    def encode(self, text):
        ids = super().encode(text)
        n_a, n_b = ids.count(self._id["A"]), ids.count(self._id["B"])
        if (n_a, n_b) != (1, 1):
            raise ValueError(f"the input must contain A and B exactly once each (found {n_a} A, {n_b} B)")
        return ids

    def solve(self, src_ids):
        ids, a, b = as_ids(src_ids), self._id["A"], self._id["B"]
        if a not in ids or b not in ids:
            raise ValueError("the sequence must contain A and B")
        return [int(ids.index(a) < ids.index(b))]


class OrderVectors(Task, name="order-vectors"):
    """The notebook's version: fixed random vectors A and B written into noise at two positions."""

    kind, fixed_length = "classify", True
    class_names = _CLASSES

    def _vocab(self):
        return SPECIALS

    def _build(self, rng):
        c, T = self.cfg, self.cfg.max_len
        g = torch.Generator().manual_seed(c.seed)
        self.vec_a, self.vec_b = torch.randn(2, c.dim, generator=g)  # (dim,) each, fixed per seed

        def split(m):
            pos = torch.from_numpy(np.argsort(rng.random((m, T)), axis=1)[:, :2])  # two distinct slots
            x = torch.randn(m, T, c.dim, generator=g) * c.noise  # (m, T, dim)
            rows = torch.arange(m)
            x[rows, pos[:, 0]], x[rows, pos[:, 1]] = self.vec_a, self.vec_b
            return Batch(src=x, label=(pos[:, 0] < pos[:, 1]).long())

        return split(c.n_train), split(c.n_val)

    def _example(self, batch, i):
        return batch.src[i].tolist(), [int(batch.label[i])]

    def encode(self, text):
        raise ValueError("this task reads random vectors; pick an example instead")

    def tokens(self, ids):
        return [str(t) for t in range(len(ids))]  # no token ids here: label the positions

    def position_labels(self, src_row):
        x = torch.as_tensor(np.asarray(src_row), dtype=torch.float32)  # (T, dim)
        is_a = torch.isclose(x, self.vec_a, atol=1e-5).all(-1)
        is_b = torch.isclose(x, self.vec_b, atol=1e-5).all(-1)
        return ["A" if a else "B" if b else "·" for a, b in zip(is_a.tolist(), is_b.tolist())]

    def solve(self, src_ids):
        x = torch.as_tensor(np.asarray(src_ids), dtype=torch.float32)  # (T, dim)
        pa = int((x - self.vec_a).norm(dim=-1).argmin())
        pb = int((x - self.vec_b).norm(dim=-1).argmin())
        return [int(pa < pb)]

    def _model_fields(self, base):
        heads = base.n_heads if self.cfg.dim % base.n_heads == 0 else nearest_valid_heads(self.cfg.dim,
                                                                                          base.n_heads)
        return dict(src_vocab_size=0, d_model=self.cfg.dim, n_heads=heads, n_classes=2)

    def _check_src(self, cfg):
        if cfg.src_vocab_size != 0:
            raise ValueError(f"src_vocab_size={cfg.src_vocab_size} but task 'order-vectors' feeds vectors; "
                             "use src_vocab_size=0")
        if cfg.d_model != self.cfg.dim:
            raise ValueError(f"d_model={cfg.d_model} must equal the task's vector width dim={self.cfg.dim}")
