"""A teacher's own data: pairs from a TSV file (task `pairs`) and a pasted text for the character LM.

Everything is checked before anything is trained or written; a refusal names the line and the reason.
The limits are what one core of a laptop trains in minutes (bench/README.md, "More to explore: SCAN and
a teacher's own data"). The checked text is the task's `TaskConfig.text`, so a saved run carries its data.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from pathlib import Path

from explorer.tasks.base import EOS, PAD, SPECIALS, Task, TaskConfig, pair_batch, shown

MAX_BYTES = 4 * 2**20        # an upload or a file: 4 MiB (all of SCAN's 20,910 pairs as TSV take 2.4 MiB)
MAX_LINES = 25_000           # pairs in one file
MIN_LINES = 10               # 9 to train, 1 to test
MIN_SOURCES = 5              # different sources: the split by source keeps 4 or more to train
MAX_SIDE_TOKENS = 64         # tokens in one source or one target (SCAN's longest target: 48)
MAX_LINE_CHARS = 2_000       # characters in one line
MAX_TOKENS = 600_000         # tokens in the whole file, both sides
MAX_VOCAB = 5_000            # distinct tokens: the embedding tables grow with it
MIN_TEXT_CHARS, MAX_TEXT_CHARS = 500, 200_000   # a pasted text for the character LM
MAX_TEXT_VOCAB = 300         # distinct characters in it
VAL_FRACTION = 0.1           # the seeded 90/10 split of the pairs (by distinct source)
OWN = "pairs"                # the task name of a teacher's TSV
FORMAT = "each line is source<TAB>target, tokens separated by spaces"


class DataError(ValueError):
    """Own data refused: the message names the line (if any) and the reason."""


def check_size(size: int, what: str = "the file") -> None:
    if size > MAX_BYTES:
        raise DataError(f"{what} is {size / 2**20:.1f} MiB; the limit on this machine is {MAX_BYTES // 2**20} MiB")


def read_limited(stream, what: str = "the file") -> bytes:
    """At most MAX_BYTES of a binary stream: MAX_BYTES + 1 are read, so an endless one is refused at once."""
    data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise DataError(f"{what} is more than {MAX_BYTES // 2**20} MiB; the limit on this machine is "
                        f"{MAX_BYTES // 2**20} MiB")
    return data


def read_file(path) -> bytes:
    """A teacher's file (or a stream such as /dev/stdin), read at most MAX_BYTES + 1 bytes; OSError if unreadable."""
    with open(Path(path), "rb") as f:
        return read_limited(f)


def split_lines(text: str) -> list[str]:
    """Lines ended by LF, CRLF or a lone CR (old Mac files), so a CR-only file is read line by line."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _control(no: int, line: str, allowed: str = "\t") -> None:
    """Refuse control characters (NUL, ESC, ...): invisible in a table, they make tokens look alike."""
    bad = sorted({c for c in line if unicodedata.category(c) == "Cc" and c not in allowed})
    if bad:
        names = ", ".join(f"U+{ord(c):04X}" for c in bad[:4])
        raise DataError(f"line {no}: control character {names}; save the file as plain text (tabs and line "
                        "breaks only)")


def decode(data: bytes | str, what: str = "the file") -> str:
    """UTF-8 bytes (an upload, a file) as text, within MAX_BYTES; a str is checked for size only."""
    check_size(len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass")), what)
    if isinstance(data, str):
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise DataError(f"line {line}: not UTF-8 (byte 0x{data[err.start]:02x}); save {what} as UTF-8 text") from None
    return text.removeprefix("\ufeff")  # a byte-order mark some editors write first


def _side(no: int, name: str, words: list[str]) -> list[str]:
    if not words:
        raise DataError(f"line {no}: the {name} is empty; {FORMAT}")
    if len(words) > MAX_SIDE_TOKENS:
        raise DataError(f"line {no}: the {name} has {len(words)} tokens; the limit is {MAX_SIDE_TOKENS} per side")
    reserved = next((w for w in words if w in SPECIALS), None)
    if reserved is not None:
        raise DataError(f"line {no}: {reserved!r} is reserved for the model; use another token")
    return words


def parse_pairs(text: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The (source, target) token tuples of a TSV text; blank lines are skipped. DataError names the line."""
    text = decode(text)
    pairs, total, vocab = [], 0, set()
    for no, line in enumerate(split_lines(text), 1):
        if not line.strip():
            continue
        if len(pairs) == MAX_LINES:
            raise DataError(f"line {no}: more than {MAX_LINES:,} pairs; the limit on this machine is {MAX_LINES:,}")
        if len(line) > MAX_LINE_CHARS:
            raise DataError(f"line {no}: {len(line):,} characters; the limit is {MAX_LINE_CHARS:,} per line")
        tabs = line.count("\t")
        if tabs != 1:
            why = "no tab" if tabs == 0 else f"{tabs} tabs"
            raise DataError(f"line {no}: {why}; {FORMAT} (exactly one tab)")
        src, tgt = (tuple(_side(no, name, side.split())) for name, side in zip(("source", "target"), line.split("\t")))
        total += len(src) + len(tgt)
        if total > MAX_TOKENS:
            raise DataError(f"line {no}: more than {MAX_TOKENS:,} tokens in the file; the limit on this machine "
                            f"is {MAX_TOKENS:,}")
        vocab.update(src + tgt)
        if len(vocab) > MAX_VOCAB:
            raise DataError(f"line {no}: more than {MAX_VOCAB:,} distinct tokens; the limit is {MAX_VOCAB:,}")
        pairs.append((src, tgt))
    if len(pairs) < MIN_LINES:
        raise DataError(f"the file has {len(pairs)} pairs; at least {MIN_LINES} are needed ({FORMAT})")
    return pairs


def _check_split(pairs) -> None:
    """Enough different sources for the split by source (no test source is seen in training), whichever
    the seed holds out: MIN_SOURCES of them, and at least half the pairs left to train."""
    per_source = Counter(src for src, _ in pairs)
    n = len(per_source)
    if n == 1:
        raise DataError("every line has the same source; the 90/10 split is by source and needs at least "
                        f"{MIN_SOURCES} different sources")
    if n < MIN_SOURCES:
        raise DataError(f"the file has {len(pairs):,} pairs but only {n} different sources; the 90/10 split is by "
                        f"source (no test source is seen in training) and needs at least {MIN_SOURCES}, "
                        f"so {MIN_SOURCES - 1} or more train")
    held = per_source.most_common(max(1, round(n * VAL_FRACTION)))   # the most the split can hold out
    out = sum(count for _, count in held)
    if out > len(pairs) - out:
        shown = " ".join(held[0][0])
        raise DataError(f"{out:,} of the {len(pairs):,} pairs have the source{'s' if len(held) > 1 else ''} "
                        f"{shown!r}{' and others' if len(held) > 1 else ''}: held out for testing they would leave "
                        f"{len(pairs) - out:,} to train (the 90/10 split is by source); give more different "
                        "sources, or fewer lines of one")


def pairs_config(data: bytes | str, seed: int = 0) -> TaskConfig:
    """The TaskConfig of a teacher's TSV (checked: DataError names the line)."""
    lines = split_lines(decode(data))
    for no, line in enumerate(lines, 1):   # a new upload's checks: a saved run's data opens as it was saved
        _control(no, line)
    text = "\n".join(lines)
    _check_split(parse_pairs(text))
    return TaskConfig(OWN, seed=seed, text=text)


def check_text(text: str) -> str:
    """A text for the character LM, refused when too short, too long or of too many characters."""
    for no, line in enumerate(split_lines(text), 1):
        _control(no, line)
    n, chars = len(text), set(text)
    if not MIN_TEXT_CHARS <= n <= MAX_TEXT_CHARS:
        raise DataError(f"the text has {n:,} characters; the character LM needs {MIN_TEXT_CHARS:,} to "
                        f"{MAX_TEXT_CHARS:,}")
    if len(chars) > MAX_TEXT_VOCAB:
        raise DataError(f"the text uses {len(chars):,} distinct characters; the limit is {MAX_TEXT_VOCAB}")
    return text


def name_chars(chars) -> str:
    """Characters for a message by their Unicode names: NUMBER SIGN, LATIN SMALL LETTER E WITH ACUTE."""
    names = [unicodedata.name(c, f"U+{ord(c):04X}") for c in sorted(chars)]
    return ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")


class Pairs(Task, name="pairs"):
    """A seq2seq task from a teacher's TSV: one vocabulary for both sides, a seeded 90/10 split."""

    kind, own_text = "seq2seq", True

    def __init__(self, cfg: TaskConfig) -> None:
        self.pairs = parse_pairs(cfg.text)
        self._answer = {}
        for src, tgt in self.pairs:
            self._answer.setdefault(src, tgt)  # a source given twice: its first target is "the" answer
        super().__init__(cfg)

    def _vocab(self):
        return SPECIALS + tuple(dict.fromkeys(t for side in (0, 1) for p in self.pairs for t in p[side]))

    @property
    def max_src_len(self) -> int:
        return max(len(s) for s, _ in self.pairs)

    @property
    def max_tgt_len(self) -> int:
        return max(len(t) for _, t in self.pairs) + 1  # BOS + target, target + EOS

    def _build(self, rng):
        sources = list(self._answer)   # split by distinct source, so no test source is seen in training
        n_val = max(1, round(len(sources) * VAL_FRACTION))
        test = {sources[i] for i in rng.permutation(len(sources))[:n_val]}
        ids = [([self._id[w] for w in s], [self._id[w] for w in t]) for s, t in self.pairs]
        out = []
        for held in (False, True):
            rows = [r for r, (s, _) in zip(ids, self.pairs) if (s in test) == held]
            out.append(pair_batch([rows[i] for i in rng.permutation(len(rows))], self.max_src_len,
                                   self.max_tgt_len - 1))
        return out

    def _example(self, batch, i):
        src = [t for t in batch.src[i].tolist() if t != PAD]
        return src, [t for t in batch.tgt_out[i].tolist() if t not in (PAD, EOS)]  # the row's own target

    def _encode_word(self, word):
        if word not in self._id or word in SPECIALS:
            some = ", ".join(self.vocab[len(SPECIALS):len(SPECIALS) + 12])
            raise ValueError(f"unknown token {shown(word)}; this data's tokens include {some}")
        return self._id[word]

    def solve(self, src_ids):
        return [self._id[w] for w in self._answer.get(tuple(self.tokens(src_ids)), ())]


__all__ = ["DataError", "Pairs", "check_size", "read_limited", "read_file", "decode", "parse_pairs", "pairs_config",
           "check_text", "split_lines", "name_chars", "MAX_BYTES", "MAX_LINES", "MIN_SOURCES", "MAX_SIDE_TOKENS",
           "MAX_TOKENS", "MAX_VOCAB"]
