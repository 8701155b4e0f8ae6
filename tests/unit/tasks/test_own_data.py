"""A teacher's own data: a TSV of pairs becomes a seq2seq task (vocabulary from the file, seeded 90/10 split
by source) that learns; every bad file is refused with its line and reason; a pasted text becomes a
character LM whose unknown characters are named."""

from __future__ import annotations

import pytest
import torch

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.tasks import TaskConfig, make_task, own_data
from explorer.tasks.own_data import DataError, pairs_config, parse_pairs
from explorer.tasks.presets import text_config
from explorer.train_config import TrainConfig
from explorer.training import train_steps
from tests.unit.helpers import WORDS, number_words

GOOD = "a b\tB A\n" * 3 + "h\tH\n" + "".join(f"{x} {y}\t{y.upper()} {x.upper()}\n" for x in "cde" for y in "fg")


def test_pairs_become_a_task_with_the_files_vocabulary_and_a_seeded_split():
    t = make_task(pairs_config(number_words(), seed=3))
    first = tuple(dict.fromkeys(number_words().split("\t")[0].split()))
    assert t.kind == "seq2seq" and t.vocab[3:3 + len(first)] == first   # in order of appearance
    assert set(t.vocab[3:]) == set(WORDS) | set("0123456789")
    assert (len(t.train), len(t.val)) == (270, 30)
    rows = lambda b: {tuple(r) for r in b.src.tolist()}   # noqa: E731
    assert not rows(t.train) & rows(t.val)
    src, tgt = t.example("val", 0)
    assert [int(w) for w in t.tokens(tgt)] == [WORDS.index(w) for w in t.tokens(src)]
    src, tgt = t.example("train", 5)
    absent = next(f"{a} {b} {c} {d}" for a in WORDS for b in WORDS for c in WORDS for d in WORDS
                  if f"\n{a} {b} {c} {d}\t" not in "\n" + number_words())
    assert t.solve(src) == tgt and t.solve(t.encode(absent)) == []   # not in the file: no answer
    again, other = make_task(pairs_config(number_words(), seed=3)), make_task(pairs_config(number_words(), seed=4))
    assert torch.equal(again.val.src, t.val.src) and rows(other.val) != rows(t.val)
    with pytest.raises(ValueError, match="unknown token 'ten'"):
        t.encode("ten")


def test_a_source_given_twice_stays_on_one_side_of_the_split():
    t = make_task(pairs_config(GOOD))
    assert len(t.train) + len(t.val) == 10
    repeated = t.encode("a b")
    sides = [sum(r[:2] == repeated for r in b.src.tolist()) for b in (t.train, t.val)]
    assert sorted(sides) == [0, 3]


BAD = [
    (GOOD + "c d e\n", "line 11: no tab"),
    (GOOD + "c\td\te\n", "line 11: 2 tabs"),
    (GOOD + "  \tX\n", "line 11: the source is empty"),
    (GOOD + "c\t \n", "line 11: the target is empty"),
    (GOOD + "c\t" + "x " * 65 + "\n", "line 11: the target has 65 tokens; the limit is 64 per side"),
    ("x\ty\n" * 3 + "c\t" + "x" * 2001 + "\n" + GOOD, "line 4: 2,003 characters; the limit is 2,000 per line"),
    (GOOD + "a <eos>\tb\n", "line 11: '<eos>' is reserved"),
    ("\n".join(["a\tb"] * 25_001), "line 25001: more than 25,000 pairs; the limit on this machine is 25,000"),
    ("a\tb\n" * 5, "the file has 5 pairs; at least 10 are needed"),
    ("a\tb\n" * 12, "every line has the same source"),
    (GOOD.encode() + "caf\xe9\tx\n".encode("latin-1"), "line 11: not UTF-8 \\(byte 0xe9\\)"),
    (b"a\tb\n" * (own_data.MAX_BYTES // 4 + 1), "the file is 4.0 MiB; the limit on this machine is 4 MiB"),
    ("".join(f"w{i}\tv{i}\n" for i in range(2_600)), "line 2501: more than 5,000 distinct tokens"),
    (("a " * 60 + "\t" + "b " * 60 + "\n") * 5_001, "line 5001: more than 600,000 tokens in the file"),
]


@pytest.mark.parametrize("data, message", BAD, ids=[m.split(";")[0][:40] for _, m in BAD])
def test_bad_files_are_refused_with_the_line_and_the_reason(data, message):
    with pytest.raises(DataError, match=message):
        pairs_config(data)


def test_blank_lines_windows_endings_and_a_byte_order_mark_are_read():
    data = ("\ufeff" + GOOD.replace("\n", "\r\n") + "\r\n\n").encode()
    assert parse_pairs(own_data.decode(data)) == parse_pairs(GOOD)
    with pytest.raises(ValueError, match="text= is only for tasks char-lm and pairs"):
        TaskConfig("copy", text=GOOD)
    with pytest.raises(ValueError, match="task 'pairs' needs text="):
        TaskConfig("pairs")


def test_a_small_tsv_is_learned_in_a_few_seconds():
    torch.set_num_threads(1)
    task = make_task(pairs_config(number_words(400)))
    cfg = task.model_config(ModelConfig(d_model=32, n_heads=4, n_encoder_layers=1, n_decoder_layers=1, d_ff=64))
    model = build_model(cfg, seed=0)
    train = TrainConfig(steps=300, batch_size=32, lr=3e-3, warmup=20, eval_every=0, eval_examples=20)
    last = list(train_steps(model, task, train))[-1]
    assert last.val_exact >= 0.9, last   # unseen sources: the words were learned, not the lines


def test_pasted_text_gets_its_own_vocabulary_and_names_unknown_characters():
    text = "Über den Wolken muss die Freiheit wohl grenzenlos sein. " * 12
    t = make_task(text_config(text.encode()))
    assert t.kind == "lm" and set(t.vocab[3:]) == set(text) and len(t.val) >= 1
    assert "".join(t.tokens(t.train.tgt_in[0])) in text * 2
    with pytest.raises(ValueError, match=r"unknown characters \['q', 'é'\] \(LATIN SMALL LETTER Q, LATIN SMALL "
                                         r"LETTER E WITH ACUTE\)"):
        t.encode("qé")
    with pytest.raises(DataError, match="the text has 12 characters; the character LM needs 500 to 200,000"):
        text_config("twelve chars")
    with pytest.raises(DataError, match="the text uses 400 distinct characters; the limit is 300"):
        text_config("".join(chr(0x4E00 + i) for i in range(400)) * 2)


SPLIT = [
    ("a\tA\n" * 20 + "b\tB\n", "the file has 21 pairs but only 2 different sources; the 90/10 split is by source"),
    ("a\tA\n" * 8 + "".join(f"{w}\t{w.upper()}\n" for w in "bcdef"),
     "8 of the 13 pairs have the source 'a': held out for testing they would leave 5 to train"),
]


@pytest.mark.parametrize("data, message", SPLIT, ids=["2 sources", "one source holds most lines"])
def test_a_file_without_enough_different_sources_to_train_is_refused_and_told_why(data, message):
    with pytest.raises(DataError, match=message):
        pairs_config(data)


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f", "\x85"], ids=["NUL", "ESC", "DEL", "NEL"])
def test_control_characters_are_refused_by_line(char):
    with pytest.raises(DataError, match=f"line 11: control character U\\+{ord(char):04X}"):
        pairs_config(GOOD + f"c{char}d\tx\n")
    with pytest.raises(DataError, match=f"line 2: control character U\\+{ord(char):04X}"):
        text_config("x" * 600 + f"\ny{char}z")


def test_a_cr_only_file_is_read_line_by_line():
    assert parse_pairs(pairs_config(GOOD.replace("\n", "\r").encode()).text) == parse_pairs(GOOD)
    with pytest.raises(DataError, match="line 11: no tab"):    # its lines are numbered as a reader counts them
        pairs_config((GOOD + "c d e\n").replace("\n", "\r"))


def test_a_stream_is_read_at_most_the_limit_and_one_byte(tmp_path):
    class Endless:
        asked = []

        def read(self, n=-1):
            self.asked.append(n)
            return b"a" * n

    with pytest.raises(DataError, match="the file is more than 4 MiB; the limit on this machine is 4 MiB"):
        own_data.read_limited(Endless())
    assert Endless.asked == [own_data.MAX_BYTES + 1]
    with pytest.raises(DataError, match="more than 4 MiB"):
        own_data.read_file("/dev/zero")
    (tmp_path / "ok.tsv").write_text(GOOD)
    assert own_data.read_file(tmp_path / "ok.tsv") == GOOD.encode()
