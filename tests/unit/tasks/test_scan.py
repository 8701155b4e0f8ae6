"""SCAN: every generated pair is what the paper's interpretation functions say, and the three splits
have the paper's sizes and properties. The interpreter below is written from the paper, not from
explorer/tasks/scan.py."""

from __future__ import annotations

import re

import pytest

from explorer.tasks import EOS, PAD, TASK_PRESETS, TaskConfig, make_task
from explorer.tasks.scan import commands

ACT = {"walk": ["WALK"], "look": ["LOOK"], "run": ["RUN"], "jump": ["JUMP"], "turn": []}
TURN = {"left": ["LTURN"], "right": ["RTURN"]}
_TASKS: dict = {}


def scan(name):
    if name not in _TASKS:
        _TASKS[name] = make_task(name)
    return _TASKS[name]


def interpret(command: str) -> list[str]:
    """The paper's interpretation functions ([[x after y]] = [[y]] [[x]], [[u around d]] = (d u) x 4, ...)."""
    for conj in (" and ", " after "):
        if conj in command:
            a, b = command.split(conj)
            return interpret(a) + interpret(b) if conj == " and " else interpret(b) + interpret(a)
    m = re.fullmatch(r"(.+?)(?: (twice|thrice))?", command)
    words, times = m.group(1).split(), {"twice": 2, "thrice": 3, None: 1}[m.group(2)]
    u = ACT[words[0]]
    if len(words) == 1:
        once = u
    elif len(words) == 2:
        once = TURN[words[1]] + u
    elif words[1] == "opposite":
        once = TURN[words[2]] * 2 + u
    else:
        assert words[1] == "around"
        once = (TURN[words[2]] + u) * 4
    return once * times


def pairs_of(task, split):
    b = getattr(task, split)
    return [(" ".join(task.tokens([i for i in s if i != PAD])),
             task.tokens([i for i in t if i not in (PAD, EOS)])) for s, t in zip(b.src.tolist(), b.tgt_out.tolist())]


def test_every_command_means_what_the_paper_says():
    all_pairs = commands()
    assert len(all_pairs) == len({w for w, _ in all_pairs}) == 20_910
    for words, actions in all_pairs:
        assert list(actions) == interpret(" ".join(words)), words
    assert max(len(a) for _, a in all_pairs) == 48 and max(len(w) for w, _ in all_pairs) == 9
    assert interpret("jump twice after walk opposite left") == ["LTURN", "LTURN", "WALK", "JUMP", "JUMP"]


@pytest.mark.parametrize("name, sizes", [("scan-simple", (16_728, 4_182)), ("scan-addjump", (14_670, 7_706)),
                                         ("scan-length", (16_990, 3_920))])
def test_splits_have_the_papers_sizes_and_rows_mean_their_commands(name, sizes):
    t = scan(name)
    assert (len(t.train), len(t.val)) == sizes
    train, test = pairs_of(t, "train"), pairs_of(t, "val")
    for command, actions in train[:2000] + test[:2000]:
        assert actions == interpret(command)
    assert not {c for c, _ in train} & {c for c, _ in test}
    assert len({c for c, _ in train} | {c for c, _ in test}) == (20_910 if name != "scan-addjump" else 13_204 + 7_706)


def test_addjump_trains_on_jump_alone_and_tests_it_in_composition():
    train, test = pairs_of(scan("scan-addjump"), "train"), pairs_of(scan("scan-addjump"), "val")
    with_jump = [c for c, _ in train if "jump" in c.split()]
    assert set(with_jump) == {"jump"} and len(with_jump) == 1_467 and len(train) - len(with_jump) == 13_203
    assert all("jump" in c.split() and c != "jump" for c, _ in test)


def test_length_split_trains_short_and_tests_long():
    t = scan("scan-length")
    assert max(len(a) for _, a in pairs_of(t, "train")) == 22
    assert min(len(a) for _, a in pairs_of(t, "val")) == 24
    assert t.model_config().max_len >= 49


def test_simple_split_is_drawn_by_the_seed_and_can_be_subsampled():
    a, b = make_task(TASK_PRESETS["scan-simple"]), make_task(TASK_PRESETS["scan-simple"].replace(seed=1))
    assert {c for c, _ in pairs_of(a, "val")} != {c for c, _ in pairs_of(b, "val")}
    small = make_task(TASK_PRESETS["scan-length"].replace(n_train=300, n_val=50))
    assert (len(small.train), len(small.val)) == (300, 50)
    assert min(len(a) for _, a in pairs_of(small, "val")) >= 24
    with pytest.raises(ValueError, match="n_val=5000 is more than the 3,920 commands"):
        make_task(TASK_PRESETS["scan-length"].replace(n_val=5_000))


def test_typed_commands_are_read_and_answered_or_named_wrong():
    t = scan("scan-simple")
    ids = t.encode("Jump twice after walk opposite left")
    assert t.tokens(t.solve(ids)) == interpret("jump twice after walk opposite left")
    with pytest.raises(ValueError, match="unknown word 'hop'"):
        t.encode("hop twice")
    with pytest.raises(ValueError, match="'twice jump' is not a SCAN command"):
        t.encode("twice jump")
    assert t.solve([t.vocab.index("twice"), t.vocab.index("jump")]) == []  # no meaning: nothing to compare


def test_split_is_required_for_scan_only():
    with pytest.raises(ValueError, match="split='sideways'"):
        TaskConfig("scan", split="sideways")
    with pytest.raises(ValueError, match="needs one of simple, addjump, length"):
        TaskConfig("scan")
    with pytest.raises(ValueError, match="split='simple'"):
        TaskConfig("copy", split="simple")
