"""SCAN (Lake & Baroni 2018): navigation commands ("jump twice after walk opposite left") to actions,
generated from the paper's phrase-structure grammar and interpretation functions; nothing is downloaded.

The grammar gives 20,910 distinct commands (34 verb phrases V, 102 phrases S = V [twice | thrice],
commands S, S and S, S after S) with action sequences of 1 to 48 tokens. Three of the paper's splits:
`simple` (random 80/20), `addjump` (train: every command without "jump" plus "jump" alone, repeated as
in the released files), `length` (train: at most 22 actions; test: 24 or more). The test split is `val`.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from explorer.tasks.base import SPECIALS, Task, pair_batch, shown

PRIMITIVES = {"walk": "WALK", "look": "LOOK", "run": "RUN", "jump": "JUMP"}
TURNS = {"left": "LTURN", "right": "RTURN"}
WORDS = (*PRIMITIVES, "turn", *TURNS, "opposite", "around", "twice", "thrice", "and", "after")
ACTIONS = (*PRIMITIVES.values(), *TURNS.values())
REPEATS = {"twice": 2, "thrice": 3}
MAX_COMMAND, MAX_ACTIONS = 9, 48     # "walk around left thrice and run opposite right thrice": 9 words
# The released add-jump training file: 13,203 commands without "jump" + "jump" alone 1,467 times (10%).
JUMP_REPEATS = 1_467
SHORT_MAX, LONG_MIN = 22, 24         # the length split: no command has exactly 23 actions
SPLIT_SIZES = {"simple": (16_728, 4_182), "addjump": (14_670, 7_706), "length": (16_990, 3_920)}


def _verb_phrases() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The 34 phrases V with their actions: u, u dir, turn dir, x opposite dir, x around dir."""
    out = [((u,), (a,)) for u, a in PRIMITIVES.items()]
    for d, turn in TURNS.items():
        out.append((("turn", d), (turn,)))
        out += [((u, d), (turn, a)) for u, a in PRIMITIVES.items()]
        out.append((("turn", "opposite", d), (turn, turn)))
        out += [((u, "opposite", d), (turn, turn, a)) for u, a in PRIMITIVES.items()]
        out.append((("turn", "around", d), (turn,) * 4))
        out += [((u, "around", d), (turn, a) * 4) for u, a in PRIMITIVES.items()]
    return out


@cache
def commands() -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """All 20,910 (command words, actions) pairs, in a fixed order: S, then S and S, then S after S."""
    s = [(w + rep, a * REPEATS.get(rep[0], 1) if rep else a)
         for w, a in _verb_phrases() for rep in ((), ("twice",), ("thrice",))]
    both = [(w1 + ("and",) + w2, a1 + a2) for w1, a1 in s for w2, a2 in s]
    later = [(w1 + ("after",) + w2, a2 + a1) for w1, a1 in s for w2, a2 in s]  # after: the second runs first
    return tuple(s + both + later)


def split_commands(split: str, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """(train, test) indices into commands() for one of the paper's splits (the simple one drawn by rng)."""
    pairs = commands()
    if split == "addjump":
        alone = pairs.index((("jump",), ("JUMP",)))
        return ([i for i, (w, _) in enumerate(pairs) if "jump" not in w] + [alone] * JUMP_REPEATS,
                [i for i, (w, _) in enumerate(pairs) if "jump" in w and i != alone])
    if split == "length":
        return ([i for i, (_, a) in enumerate(pairs) if len(a) <= SHORT_MAX],
                [i for i, (_, a) in enumerate(pairs) if len(a) >= LONG_MIN])
    order = rng.permutation(len(pairs)).tolist()
    return order[:SPLIT_SIZES["simple"][0]], order[SPLIT_SIZES["simple"][0]:]


class Scan(Task, name="scan"):
    kind = "seq2seq"

    def _vocab(self):
        return SPECIALS + WORDS + ACTIONS

    @property
    def max_src_len(self) -> int:
        return MAX_COMMAND

    @property
    def max_tgt_len(self) -> int:
        return MAX_ACTIONS + 1  # BOS + actions, actions + EOS

    def _build(self, rng):
        c, pairs = self.cfg, commands()
        train, test = split_commands(c.split, rng)
        for what, have, want in (("n_train", len(train), c.n_train), ("n_val", len(test), c.n_val)):
            if want > have:
                raise ValueError(f"{what}={want} is more than the {have:,} commands of SCAN's {c.split} "
                                 f"split; use {what} <= {have}")
        picked = [np.asarray(rows)[rng.permutation(len(rows))[:n]] for rows, n in ((train, c.n_train),
                                                                                   (test, c.n_val))]
        return [pair_batch([([self._id[w] for w in pairs[i][0]], [self._id[a] for a in pairs[i][1]])
                             for i in idx], MAX_COMMAND, MAX_ACTIONS) for idx in picked]

    def _encode_word(self, word):
        if word.lower() not in WORDS:
            raise ValueError(f"unknown word {shown(word)}; SCAN commands use {', '.join(WORDS)}")
        return self._id[word.lower()]

    def encode(self, text):
        ids = super().encode(text)
        if not _meaning(tuple(self.tokens(ids))):
            raise ValueError(f"{' '.join(self.tokens(ids))!r} is not a SCAN command; try e.g. "
                             "'jump twice after walk opposite left'")
        return ids

    def solve(self, src_ids):
        actions = _meaning(tuple(self.tokens(src_ids)))
        return [self._id[a] for a in actions] if actions else []


@cache
def _lookup() -> dict[tuple[str, ...], tuple[str, ...]]:
    return dict(commands())


def _meaning(words: tuple[str, ...]) -> tuple[str, ...] | None:
    """The actions of a command, or None when the words are not one of the grammar's commands."""
    return _lookup().get(tuple(words))

