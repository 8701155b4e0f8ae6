"""Toy tasks: seeded generators with a train/validation split, axis labels and expected attention.

One frozen `TaskConfig` gives one `Task` whose `train` and `val` splits are whole tensors; the same
config always gives identical tensors (numpy and torch generators seeded from `cfg.seed`).
Nothing is downloaded: sequences are drawn at random, the char-lm text lives in `corpus.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from explorer.config import ModelConfig, nearest_valid_heads
from explorer.corpus import CORPUS

PAD, BOS, EOS = 0, 1, 2
SPECIALS = ("<pad>", "<bos>", "<eos>")
TASK_NAMES = ("reversal", "copy", "sort", "order", "order-vectors", "char-lm")
FIXED_LENGTH_TASKS = ("order", "order-vectors", "char-lm")
ARCH_FOR_KIND = {"seq2seq": "encoder-decoder", "classify": "encoder", "lm": "decoder"}
_LIMITS = dict(n_symbols=(1, 10_000), min_len=(1, 256), max_len=(1, 256), n_train=(1, 1_000_000),
               n_val=(1, 100_000), seed=(0, 2**63 - 1), dim=(2, 1024))


@dataclass(frozen=True)
class TaskConfig:
    """Which toy task, how long its sequences are and how many of them; everything else is seeded."""

    name: str = "reversal"
    n_symbols: int = 10   # reversal/copy/sort read integers 1..n_symbols; order: number of distractors
    min_len: int = 4      # sequence lengths; order/order-vectors: T; char-lm: context window
    max_len: int = 8
    n_train: int = 10_000
    n_val: int = 500
    seed: int = 0
    dim: int = 16         # order-vectors: vector width D
    noise: float = 0.1    # order-vectors: std of the distractor vectors

    def __post_init__(self) -> None:
        if self.name not in TASK_NAMES:
            raise ValueError(f"name={self.name!r} is not a task; choose one of {', '.join(TASK_NAMES)}")
        for field, (low, high) in _LIMITS.items():
            value = getattr(self, field)
            if field == "n_symbols" and self.name in ("reversal", "copy", "sort"):
                low = 2  # one symbol gives one sequence per length: nothing to learn
            if field == "min_len" and self.name in FIXED_LENGTH_TASKS:
                low = 2  # A and B need two slots; a language model needs a context
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise ValueError(f"{field}={value!r} must be a whole number in {low}..{high}")
        if self.min_len > self.max_len:
            raise ValueError(f"min_len={self.min_len} is greater than max_len={self.max_len}; "
                             "use min_len <= max_len")
        if self.name in FIXED_LENGTH_TASKS and self.min_len != self.max_len:
            raise ValueError(f"task {self.name!r} uses one fixed length: set min_len == max_len "
                             f"(got min_len={self.min_len}, max_len={self.max_len})")
        if not isinstance(self.noise, (int, float)) or isinstance(self.noise, bool) or not 0 <= self.noise <= 10:
            raise ValueError(f"noise={self.noise!r} must be a number in 0..10 (the notebook uses 0.1)")

    def replace(self, **changes) -> TaskConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TaskConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown TaskConfig fields {unknown}; valid: {sorted(known)}")
        return cls(**data)


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
}


@dataclass(frozen=True)
class Batch:
    """Rows of one task; fields the task's kind does not use are None."""

    src: torch.Tensor | None = None      # (B, S) long, PAD on the right; (B, T, dim) float for vectors
    tgt_in: torch.Tensor | None = None   # (B, T) long: BOS + target, or window[:-1]
    tgt_out: torch.Tensor | None = None  # (B, T) long: target + EOS, or window[1:]
    label: torch.Tensor | None = None    # (B,) long class id

    def __len__(self) -> int:
        first = next((t for t in (self.src, self.tgt_in, self.label) if t is not None), None)
        return 0 if first is None else len(first)


def _take(batch: Batch, idx) -> Batch:
    return Batch(*(None if t is None else t[idx] for t in (batch.src, batch.tgt_in, batch.tgt_out, batch.label)))


def _width(*tensors: torch.Tensor) -> int:
    return max(int((t != PAD).sum(1).max()) for t in tensors)  # rows are right-padded


def _trim(batch: Batch) -> Batch:
    """Drop all-PAD columns so a batch of short rows costs less."""
    src, tin, tout = batch.src, batch.tgt_in, batch.tgt_out
    if src is not None and src.dim() == 2 and len(src):
        src = src[:, :_width(src)]
    if tin is not None and len(tin):
        w = _width(tin, tout)
        tin, tout = tin[:, :w], tout[:, :w]
    return Batch(src, tin, tout, batch.label)


def _ids(x) -> list:
    if isinstance(x, (torch.Tensor, np.ndarray)):
        return x.tolist()
    return [int(i) for i in x]


_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd, so powers never collapse to zero


def _distinct_rows(rng: np.random.Generator, count: int, cap: int,
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


def _digits(idx: np.ndarray, base: int, width: int) -> np.ndarray:
    return (idx[:, None] // base ** np.arange(width, dtype=np.int64)) % base + 1  # (N, width) in 1..base


def _fill(total: int, caps: list[int]) -> list[int]:
    """Share `total` rows over strata as evenly as their capacities allow (smallest first)."""
    counts, left = [0] * len(caps), total
    for k, i in enumerate(sorted(range(len(caps)), key=caps.__getitem__)):
        counts[i] = min(caps[i], -(-left // (len(caps) - k)))
        left -= counts[i]
    return counts


class Task:
    """Base class: one subclass per task name, registered in TASKS."""

    kind = ""
    class_names: tuple[str, ...] = ()

    def __init__(self, cfg: TaskConfig) -> None:
        self.cfg = cfg
        self.vocab = self._vocab()
        self._id = {tok: i for i, tok in enumerate(self.vocab)}
        self.train, self.val = (_trim(b) for b in self._build(np.random.default_rng(cfg.seed)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.cfg})"

    @property
    def name(self) -> str:
        return self.cfg.name

    @property
    def max_src_len(self) -> int:
        return self.cfg.max_len

    @property
    def max_tgt_len(self) -> int:
        return 0

    @property
    def longest(self) -> int:
        return max(self.max_src_len, self.max_tgt_len)

    # -- batches ---------------------------------------------------------------------------
    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        if batch_size < 1:
            raise ValueError(f"batch_size={batch_size} must be >= 1")
        idx = torch.randint(len(self.train), (batch_size,), generator=generator)
        return _trim(_take(self.train, idx))

    def iter_val(self, batch_size: int) -> Iterator[Batch]:
        if batch_size < 1:
            raise ValueError(f"batch_size={batch_size} must be >= 1")
        for start in range(0, len(self.val), batch_size):
            yield _trim(_take(self.val, slice(start, start + batch_size)))

    def example(self, split: str = "val", index: int = 0) -> tuple[list, list]:
        batch = {"train": self.train, "val": self.val}.get(split)
        if batch is None:
            raise ValueError(f"split={split!r} is not known; choose 'train' or 'val'")
        if not 0 <= index < len(batch):
            raise ValueError(f"index={index} is out of range; split {split!r} has {len(batch)} examples")
        return self._example(batch, index)

    def _example(self, batch: Batch, i: int) -> tuple[list, list]:
        src = [t for t in batch.src[i].tolist() if t != PAD]
        return src, self.solve(src)

    # -- text ------------------------------------------------------------------------------
    def tokens(self, ids) -> list[str]:
        return [self.vocab[i] if 0 <= i < len(self.vocab) else f"<{i}>" for i in _ids(ids)]

    def position_labels(self, src_row) -> list[str]:
        return self.tokens(src_row)

    def encode(self, text: str) -> list[int]:
        words = text.replace(",", " ").split()
        if not words:
            hint = " ".join(self.tokens(self.example()[0]))  # a real example is always valid
            raise ValueError(f"the input is empty; type tokens separated by spaces, e.g. '{hint}'")
        ids = [self._encode_word(w) for w in words]
        self._check_length(len(ids))
        return ids

    def _check_length(self, n: int) -> None:
        limit = self.max_src_len or self.max_tgt_len
        if n > limit:
            raise ValueError(f"the input has {n} tokens, too long; the maximum is {limit}")

    def _encode_word(self, word: str) -> int:
        raise NotImplementedError

    # -- answers ---------------------------------------------------------------------------
    def solve(self, src_ids) -> list[int]:
        raise NotImplementedError

    def expected_cross_attention(self, src_ids) -> np.ndarray | None:
        return None

    # -- models ----------------------------------------------------------------------------
    def _model_fields(self, base: ModelConfig) -> dict:
        v = len(self.vocab)
        return {"seq2seq": dict(src_vocab_size=v, tgt_vocab_size=v),
                "classify": dict(src_vocab_size=v, n_classes=len(self.class_names)),
                "lm": dict(tgt_vocab_size=v)}[self.kind]

    def model_config(self, base: ModelConfig | None = None, **overrides) -> ModelConfig:
        base = base or ModelConfig()
        fields = dict(arch=ARCH_FOR_KIND[self.kind], pad_idx=PAD, max_len=max(base.max_len, self.longest))
        fields.update(self._model_fields(base))
        fields.update(overrides)
        return base.replace(**fields)

    def check(self, cfg: ModelConfig) -> None:
        arch = ARCH_FOR_KIND[self.kind]
        if cfg.arch != arch:
            raise ValueError(f"arch={cfg.arch!r} cannot do task {self.name!r}; use {arch!r}")
        v = len(self.vocab)
        if cfg.uses_encoder:
            self._check_src(cfg)
        if cfg.uses_decoder and cfg.tgt_vocab_size < v:
            raise ValueError(f"tgt_vocab_size={cfg.tgt_vocab_size} is smaller than task {self.name!r}'s "
                             f"vocabulary ({v} tokens); use tgt_vocab_size >= {v}")
        if self.kind == "classify" and cfg.n_classes != len(self.class_names):
            k = len(self.class_names)
            raise ValueError(f"n_classes={cfg.n_classes} but task {self.name!r} has {k} classes "
                             f"({', '.join(self.class_names)}); use n_classes={k}")
        if cfg.pad_idx != PAD:
            raise ValueError(f"pad_idx={cfg.pad_idx} must be {PAD}, the id of <pad> in every task")
        if cfg.max_len < self.longest:
            raise ValueError(f"max_len={cfg.max_len} is shorter than this task's longest sequence "
                             f"({self.longest} tokens); use max_len >= {self.longest}")

    def _check_src(self, cfg: ModelConfig) -> None:
        v = len(self.vocab)
        if cfg.src_vocab_size < v:
            raise ValueError(f"src_vocab_size={cfg.src_vocab_size} is smaller than task {self.name!r}'s "
                             f"vocabulary ({v} tokens); use src_vocab_size >= {v}")

    def _vocab(self) -> tuple[str, ...]:
        raise NotImplementedError

    def _build(self, rng: np.random.Generator) -> tuple[Batch, Batch]:
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# Sequence to sequence: the output copies source positions (reverse, copy, sort).
# ---------------------------------------------------------------------------------------------

class _Seq2Seq(Task):
    kind = "seq2seq"

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
        for L, cap, count in zip(lengths, caps, _fill(total, caps)):
            rows = 2 + _distinct_rows(rng, count, cap, lambda m, L=L: rng.integers(1, n + 1, size=(m, L)),
                                      lambda idx, L=L: _digits(idx, n, L))  # (count, L)
            tgt = np.take_along_axis(rows, self._positions(rows), axis=1)
            src[r:r + count, :L] = rows
            tin[r:r + count, 0], tin[r:r + count, 1:L + 1] = BOS, tgt
            tout[r:r + count, :L], tout[r:r + count, L] = tgt, EOS
            r += count
        order = torch.from_numpy(rng.permutation(total))
        data = Batch(*(torch.from_numpy(a)[order] for a in (src, tin, tout)))
        return _take(data, slice(0, c.n_train)), _take(data, slice(c.n_train, total))

    def _encode_word(self, word):
        n = self.cfg.n_symbols
        if not (word.isascii() and word.isdigit() and 1 <= int(word) <= n):
            raise ValueError(f"unknown token {word!r}; this task reads integers 1..{n} separated by spaces")
        return int(word) + 2

    def solve(self, src_ids):
        src = np.asarray(_ids(src_ids), dtype=np.int64)
        return src[self._positions(src[None])[0]].tolist()

    def expected_cross_attention(self, src_ids):
        src = np.asarray(_ids(src_ids), dtype=np.int64)
        L = len(src)
        pattern = np.zeros((L + 1, L))  # row t: decoder query t (BOS, y0, ...); the last emits EOS
        pattern[np.arange(L), self._positions(src[None])[0]] = 1.0
        return pattern


class Reversal(_Seq2Seq):
    def _positions(self, rows):
        return np.broadcast_to(np.arange(rows.shape[1])[::-1], rows.shape)  # anti-diagonal


class Copy(_Seq2Seq):
    def _positions(self, rows):
        return np.broadcast_to(np.arange(rows.shape[1]), rows.shape)  # diagonal


class Sort(_Seq2Seq):
    def _positions(self, rows):
        return np.argsort(rows, axis=1, kind="stable")  # t-th smallest, ties in source order


# ---------------------------------------------------------------------------------------------
# Order detection: is A before B? Only position can tell, content cannot.
# ---------------------------------------------------------------------------------------------

_CLASSES = ("B first", "A first")  # label 1 = A comes first


class Order(Task):
    kind = "classify"
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

            rows = _distinct_rows(
                rng, n_tr + n_va, cap,
                lambda m, ab=ab: build(rng.integers(len(ab), size=m), rng.integers(1, n + 1, (m, T - 2))),
                lambda idx, ab=ab: build(idx % len(ab), _digits(idx // len(ab), n, T - 2)))
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
        if word.isascii() and word.isdigit() and 1 <= int(word) <= self.cfg.n_symbols:
            return self._id[word]
        raise ValueError(f"unknown token {word!r}; this task reads A, B and distractors "
                         f"1..{self.cfg.n_symbols} separated by spaces")

    def encode(self, text):
        ids = super().encode(text)
        n_a, n_b = ids.count(self._id["A"]), ids.count(self._id["B"])
        if (n_a, n_b) != (1, 1):
            raise ValueError(f"the input must contain A and B exactly once each (found {n_a} A, {n_b} B)")
        return ids

    def solve(self, src_ids):
        ids, a, b = _ids(src_ids), self._id["A"], self._id["B"]
        if a not in ids or b not in ids:
            raise ValueError("the sequence must contain A and B")
        return [int(ids.index(a) < ids.index(b))]


class OrderVectors(Task):
    """The notebook's version: fixed random vectors A and B written into noise at two positions."""

    kind = "classify"
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


# ---------------------------------------------------------------------------------------------
# Character language model on a short original text (explorer/corpus.py).
# ---------------------------------------------------------------------------------------------

_VISIBLE = {" ": "␣", "\n": "⏎"}


class CharLM(Task):
    kind = "lm"
    train_fraction = 0.9

    def _vocab(self):
        return SPECIALS + tuple(sorted(set(CORPUS)))

    @property
    def max_src_len(self):
        return 0

    @property
    def max_tgt_len(self):
        return self.cfg.max_len

    def _build(self, rng):
        c, W = self.cfg, self.cfg.max_len + 1  # a window of W characters gives W - 1 predictions
        text = np.array([self._id[ch] for ch in CORPUS], dtype=np.int64)
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
            raise ValueError(f"unknown characters {unknown}; this task knows only the characters of its "
                             f"text: {known!r}")
        self._check_length(len(text))
        return [self._id[ch] for ch in text]

    def solve(self, src_ids):
        """The characters that follow each position where the input first occurs in the text."""
        ids = _ids(src_ids)
        if not ids or min(ids) < len(SPECIALS):
            return []
        start = CORPUS.find("".join(self.tokens(ids)))
        if start < 0 or start + len(ids) >= len(CORPUS):
            return []
        return [self._id[ch] for ch in CORPUS[start + 1:start + 1 + len(ids)]]


TASKS: dict[str, type[Task]] = {"reversal": Reversal, "copy": Copy, "sort": Sort, "order": Order,
                                "order-vectors": OrderVectors, "char-lm": CharLM}


def make_task(cfg: TaskConfig | str) -> Task:
    """Build a task from a config or a preset name (see TASK_PRESETS)."""
    if isinstance(cfg, str):
        if cfg not in TASK_PRESETS:
            raise ValueError(f"task preset {cfg!r} is not known; choose one of {', '.join(TASK_PRESETS)}")
        cfg = TASK_PRESETS[cfg]
    return TASKS[cfg.name](cfg)


__all__ = ["PAD", "BOS", "EOS", "SPECIALS", "TASK_NAMES", "TASK_PRESETS", "TaskConfig", "Batch", "Task",
           "TASKS", "make_task", "Reversal", "Copy", "Sort", "Order", "OrderVectors", "CharLM"]
