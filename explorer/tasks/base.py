"""Shared pieces of every toy task: token ids, TaskConfig, Batch and the Task base class with the TASKS it registers.

One frozen `TaskConfig` gives one `Task` whose `train` and `val` splits are whole tensors; the same
config always gives identical tensors (numpy and torch generators seeded from `cfg.seed`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from explorer.config import FromDict, ModelConfig

PAD, BOS, EOS = 0, 1, 2
SPECIALS = ("<pad>", "<bos>", "<eos>")
SCAN_SPLITS = ("simple", "addjump", "length")
TASKS: dict[str, type[Task]] = {}  # task name -> its class: each registers itself (`Task`, below)
ARCH_FOR_KIND = {"seq2seq": "encoder-decoder", "classify": "encoder", "lm": "decoder"}
_LIMITS = dict(n_symbols=(1, 10_000), min_len=(1, 256), max_len=(1, 256), n_train=(1, 1_000_000),
               n_val=(1, 100_000), seed=(0, 2**63 - 1), dim=(2, 1024))


@dataclass(frozen=True)
class TaskConfig(FromDict):
    """Which toy task, how long its sequences are and how many of them; everything else is seeded."""

    name: str = "reversal"
    n_symbols: int = 10   # reversal/copy/sort read integers 1..n_symbols; order: number of distractors;
                          # induction: its random tokens; modular-add: the modulus p
    min_len: int = 4      # sequence lengths; order/order-vectors: T; char-lm: context window; induction: a half's
    max_len: int = 8
    n_train: int = 10_000  # modular-add: n_train / p² is the training fraction
    n_val: int = 500
    seed: int = 0
    dim: int = 16         # order-vectors: vector width D
    noise: float = 0.1    # order-vectors: std of the distractor vectors
    split: str = ""       # scan: one of SCAN_SPLITS
    text: str = dataclasses.field(default="", repr=False)  # pairs: the TSV file; char-lm: a pasted text (own_data.py)

    def __post_init__(self) -> None:
        task = TASKS.get(self.name)
        if task is None:
            raise ValueError(f"name={self.name!r} is not a task; choose one of {', '.join(TASKS)}")
        for field, (low, high) in _LIMITS.items():
            value = getattr(self, field)
            if field == "n_symbols" and task.symbol_sequences:
                low = 2  # one symbol gives one sequence per length: nothing to learn
            if field == "min_len" and task.fixed_length:
                low = 2  # A and B need two slots; a language model needs a context
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise ValueError(f"{field}={value!r} must be a whole number in {low}..{high}")
        if self.min_len > self.max_len:
            raise ValueError(f"min_len={self.min_len} is greater than max_len={self.max_len}; "
                             "use min_len <= max_len")
        if task.fixed_length and self.min_len != self.max_len:
            raise ValueError(f"task {self.name!r} uses one fixed length: set min_len == max_len "
                             f"(got min_len={self.min_len}, max_len={self.max_len})")
        if not isinstance(self.noise, (int, float)) or isinstance(self.noise, bool) or not 0 <= self.noise <= 10:
            raise ValueError(f"noise={self.noise!r} must be a number in 0..10 (the notebook uses 0.1)")
        if (self.name == "scan") != (self.split != "") or self.split not in ("", *SCAN_SPLITS):
            raise ValueError(f"split={self.split!r}: task 'scan' needs one of {', '.join(SCAN_SPLITS)}, "
                             "other tasks none")
        if not isinstance(self.text, str) or (self.text and not task.own_text):
            own = sorted(name for name, cls in TASKS.items() if cls.own_text)
            raise ValueError(f"text= is only for tasks {' and '.join(own)}; task {self.name!r} "
                             "makes its own data")
        if self.name == "pairs" and not self.text:
            raise ValueError("task 'pairs' needs text=: the lines of a TSV file, source<TAB>target")

    def replace(self, **changes) -> TaskConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """The fields, without split and text when empty: the dicts (and digests) of older runs stay as they were."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v != "" or k not in ("split", "text")}


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


def take_rows(batch: Batch, idx) -> Batch:
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


def pair_batch(pairs: list[tuple[list[int], list[int]]], src_len: int, tgt_len: int) -> Batch:
    """Source and target ids as a seq2seq Batch: src, BOS + target, target + EOS (PAD on the right)."""
    src = np.full((len(pairs), src_len), PAD, dtype=np.int64)
    tin, tout = np.full((2, len(pairs), tgt_len + 1), PAD, dtype=np.int64)
    for r, (s, t) in enumerate(pairs):
        src[r, :len(s)], tin[r, :len(t) + 1], tout[r, :len(t) + 1] = s, [BOS, *t], [*t, EOS]
    return Batch(*(torch.from_numpy(a) for a in (src, tin, tout)))


def shown(word: str, limit: int = 12) -> str:
    """A typed word for a message: quoted, and cut short when it is long."""
    return repr(word) if len(word) <= limit else f"{word[:limit]!r}… ({len(word):,} characters)"


def as_ids(x) -> list:
    if isinstance(x, (torch.Tensor, np.ndarray)):
        return x.tolist()
    return [int(i) for i in x]



class Task:
    """Base class: one subclass per task name, which registers it in TASKS (`class Copy(Task, name="copy")`).
    `fixed_length`: every sequence is min_len == max_len long; `symbol_sequences`: it reads 1..n_symbols;
    `own_text`: TaskConfig.text holds a teacher's own text (explorer/tasks/own_data.py)."""

    kind = ""
    class_names: tuple[str, ...] = ()
    fixed_length = False
    own_text = False
    symbol_sequences = False  # sequences of the integers 1..n_symbols
    metric_parts: tuple[str, ...] = ()  # parts of the target measured apart: <part>_loss, <part>_acc (evaluate)

    def __init_subclass__(cls, name: str = "", **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if name:
            TASKS[name] = cls

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
    length_buckets = 4   # by-length batching: lengths grouped into at most this many ranges

    def sample(self, batch_size: int, generator: torch.Generator, by_length: bool = False) -> Batch:
        """batch_size training rows drawn uniformly with replacement. by_length: the rows come from one
        range of lengths (`length_buckets` ranges of about equal row counts), so little is padded (a
        quarter of the work at lengths 10-20 otherwise). The range is that of a uniformly drawn row, so
        over many batches each row is exactly as likely as with uniform draws; only which rows share a
        batch changes. Several lengths per batch keep a length-dependent task (reversal) from being
        pulled towards one length at a time."""
        if batch_size < 1:
            raise ValueError(f"batch_size={batch_size} must be >= 1")
        buckets = self._length_buckets() if by_length else None
        if buckets is not None and len(buckets[0]) > 1:
            rows, bucket_of = buckets
            first = int(torch.randint(len(self.train), (1,), generator=generator))
            same = rows[int(bucket_of[first])]
            idx = same[torch.randint(len(same), (batch_size,), generator=generator)]
        else:  # one length only (or uniform draws asked): the plain draw, same random numbers
            idx = torch.randint(len(self.train), (batch_size,), generator=generator)
        return _trim(take_rows(self.train, idx))

    def _length_buckets(self) -> tuple[list[torch.Tensor], torch.Tensor]:
        """(row indices per bucket, bucket of every row) of the training split, cached per bucket count."""
        cached = getattr(self, "_buckets", None)
        if cached is not None and cached[0] == self.length_buckets:
            return cached[1]
        x = self.train.src if self.train.src is not None else self.train.tgt_in
        lengths = torch.zeros(len(x), dtype=torch.long) if x.is_floating_point() else (x != PAD).sum(1)
        _, length_id, counts = torch.unique(lengths, return_inverse=True, return_counts=True)
        before = counts.cumsum(0) - counts          # rows shorter than each length
        group = (before * self.length_buckets) // len(x)   # contiguous ranges of about equal row counts
        bucket_of = torch.unique(group, return_inverse=True)[1][length_id]
        rows = [torch.nonzero(bucket_of == b).flatten() for b in range(int(bucket_of.max()) + 1)]
        self._buckets = (self.length_buckets, (rows, bucket_of))
        return rows, bucket_of

    def iter_val(self, batch_size: int) -> Iterator[Batch]:
        if batch_size < 1:
            raise ValueError(f"batch_size={batch_size} must be >= 1")
        for start in range(0, len(self.val), batch_size):
            yield _trim(take_rows(self.val, slice(start, start + batch_size)))

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
        return [self.vocab[i] if 0 <= i < len(self.vocab) else f"<{i}>" for i in as_ids(ids)]

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

    def _check_length(self, n: int, what: str = "tokens") -> None:
        limit = self.max_src_len or self.max_tgt_len
        if n > limit:
            raise ValueError(f"the input has {n} {what}, too long; the maximum is {limit}")

    def _encode_word(self, word: str) -> int:
        raise NotImplementedError

    @staticmethod
    def _symbol(word: str, n: int) -> int | None:
        """The integer a typed word names if it is one of 1..n, else None. The digits are counted before
        int() reads them: Python refuses to read a number of thousands of digits, in its own words."""
        if not (word.isascii() and word.isdigit()) or len(word.lstrip("0")) > len(str(n)):
            return None
        value = int(word)
        return value if 1 <= value <= n else None

    # -- answers ---------------------------------------------------------------------------
    def solve(self, src_ids) -> list[int]:
        raise NotImplementedError

    def expected_cross_attention(self, src_ids) -> np.ndarray | None:
        return None

    def metric_masks(self, batch: Batch) -> dict[str, torch.Tensor]:
        """For each of `metric_parts`, the (B, T) bool mask of its target positions in `batch`."""
        return {}

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
