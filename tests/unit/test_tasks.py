"""Toy tasks: determinism, correct targets, disjoint splits, labels, errors, model configs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.config import CLASSROOM_PRESETS, ModelConfig
from explorer.tasks import (
    BOS,
    EOS,
    PAD,
    SPECIALS,
    TASK_NAMES,
    TASK_PRESETS,
    TASKS,
    Batch,
    TaskConfig,
    make_task,
)
from explorer.tasks.corpus import CORPUS

PRESETS = sorted(TASK_PRESETS)
SEQ2SEQ = ["reversal-fast", "reversal-seed", "copy", "sort"]
_CACHE: dict = {}


def task(name):
    """Each preset is built once per test session (reversal-seed has 51k rows)."""
    if name not in _CACHE:
        _CACHE[name] = make_task(name)
    return _CACHE[name]


def tensors(batch: Batch):
    return [t for t in (batch.src, batch.tgt_in, batch.tgt_out, batch.label) if t is not None]


def unpad(row) -> list[int]:
    ids = row.tolist()
    assert PAD not in ids[:len([i for i in ids if i != PAD])], "padding must be on the right"
    return [i for i in ids if i != PAD]


def rows_of(batch: Batch) -> set[bytes]:
    x = batch.src if batch.src is not None else batch.tgt_in
    return {r.tobytes() for r in x.reshape(len(batch), -1).numpy()}


# ---------------------------------------------------------------------------------------------
# Every preset
# ---------------------------------------------------------------------------------------------

def test_required_presets_exist():
    assert {"reversal-fast", "reversal-seed", "copy", "sort", "order", "order-vectors", "char-lm"} <= set(PRESETS)
    assert set(TASKS) == set(TASK_NAMES)


@pytest.mark.parametrize("name", PRESETS)
def test_same_config_gives_identical_tensors(name):
    a, b = task(name), make_task(TASK_PRESETS[name])
    for split in ("train", "val"):
        for x, y in zip(tensors(getattr(a, split)), tensors(getattr(b, split)), strict=True):
            assert torch.equal(x, y)


@pytest.mark.parametrize("name", PRESETS)
def test_different_seeds_differ(name):
    cfg = TASK_PRESETS[name]
    if cfg.n_train > 10_000:
        cfg = cfg.replace(n_train=2_000)
    a, b = make_task(cfg), make_task(cfg.replace(seed=cfg.seed + 1))
    x, y = tensors(a.train)[0], tensors(b.train)[0]
    assert x.shape != y.shape or not torch.equal(x, y)


@pytest.mark.parametrize("name", PRESETS)
def test_split_sizes_and_vocab(name):
    t = task(name)
    assert (len(t.train), len(t.val)) == (t.cfg.n_train, t.cfg.n_val)
    assert t.vocab[:3] == SPECIALS and len(set(t.vocab)) == len(t.vocab)
    assert t.kind in ("seq2seq", "classify", "lm")
    assert (t.class_names != ()) == (t.kind == "classify")
    for x in tensors(t.train):
        if x.dtype == torch.long and x is not t.train.label:
            assert 0 <= int(x.min()) and int(x.max()) < len(t.vocab)


@pytest.mark.parametrize("name", PRESETS)
def test_train_and_val_are_disjoint(name):
    t = task(name)
    assert not rows_of(t.train) & rows_of(t.val)


@pytest.mark.parametrize("name", PRESETS)
def test_sample_is_deterministic_and_drops_all_pad_columns(name):
    t = task(name)
    a = t.sample(16, torch.Generator().manual_seed(5))
    b = t.sample(16, torch.Generator().manual_seed(5))
    assert len(a) == 16
    for x, y in zip(tensors(a), tensors(b), strict=True):
        assert torch.equal(x, y)
    for x in (a.src, a.tgt_in, a.tgt_out):
        if x is not None and x.dim() == 2:
            assert bool((x[:, -1] != PAD).any()), "the last column must hold a token in some row"


@pytest.mark.parametrize("name", SEQ2SEQ)
def test_by_length_batches_come_from_one_range_of_lengths(name):
    t = task(name)
    g = torch.Generator().manual_seed(0)
    lengths = (t.train.src != PAD).sum(1)
    ranges = [(int(lengths[r].min()), int(lengths[r].max())) for r in t._length_buckets()[0]]
    assert 1 < len(ranges) <= t.length_buckets and all(a[1] < b[0] for a, b in zip(ranges, ranges[1:]))
    padded = uniform = 0
    for _ in range(20):
        b = t.sample(32, g, by_length=True)
        n = (b.src != PAD).sum(1)
        assert len(b) == 32 and any(lo <= int(n.min()) and int(n.max()) <= hi for lo, hi in ranges)
        assert all(t.solve(row[:k]) == out[:k] for row, out, k in zip(b.src.tolist(), b.tgt_out.tolist(), n.tolist()))
        padded += int((b.src == PAD).sum()) / b.src.numel()
        u = t.sample(32, g).src
        uniform += int((u == PAD).sum()) / u.numel()
    assert padded < 0.6 * uniform


def test_by_length_with_a_bucket_per_length_pads_nothing():
    t = task("reversal-fast")
    t.length_buckets = 100
    try:
        g = torch.Generator().manual_seed(0)
        for _ in range(20):
            b = t.sample(32, g, by_length=True)
            assert all(bool((x != PAD).all()) for x in (b.src, b.tgt_in, b.tgt_out))
            assert b.tgt_in.size(1) == b.src.size(1) + 1
    finally:
        del t.length_buckets   # back to the class default


def test_by_length_batches_keep_the_data_distribution():
    """Over many batches, row lengths come in the proportions of the training data (uniform draws'),
    and rows are drawn uniformly within a length."""
    t = task("reversal-fast")
    data = (t.train.src != PAD).sum(1).bincount(minlength=9).float()
    g = torch.Generator().manual_seed(1)
    drawn = torch.zeros(9)
    for _ in range(3000):
        drawn += (t.sample(4, g, by_length=True).src != PAD).sum(1).bincount(minlength=9)
    assert (drawn / drawn.sum() - data / data.sum()).abs().max() < 0.02  # 12000 rows, 3000 batches: sd < 0.01
    rows = [r for _ in range(200) for r in t.sample(64, g, by_length=True).src.tolist()]
    four = [r for r in rows if len(r) - r.count(PAD) == 4]
    assert len(four) > 500 and len(set(map(tuple, four))) > 0.5 * len(four)  # not a few rows repeated


@pytest.mark.parametrize("name", ["order", "char-lm", "order-vectors"])
def test_by_length_is_the_plain_draw_when_every_row_has_one_length(name):
    t = task(name)
    a = t.sample(16, torch.Generator().manual_seed(3), by_length=True)
    b = t.sample(16, torch.Generator().manual_seed(3))
    assert all(torch.equal(x, y) for x, y in zip(tensors(a), tensors(b), strict=True))


@pytest.mark.parametrize("name", PRESETS)
def test_iter_val_walks_the_validation_split_in_order(name):
    t = task(name)
    batches = list(t.iter_val(100))
    assert sum(len(b) for b in batches) == len(t.val)
    first = tensors(batches[0])[0]
    full = tensors(t.val)[0][:100]
    assert torch.equal(first, full[:, :first.shape[1]] if first.dim() > 1 else full)
    if first.dim() > 1:
        assert bool((full[:, first.shape[1]:] == PAD).all())


@pytest.mark.parametrize("name", PRESETS)
def test_model_config_passes_check_and_short_max_len_fails(name):
    t = task(name)
    for base in (None, CLASSROOM_PRESETS["tiny"], ModelConfig(max_len=4)):
        cfg = t.model_config(base)
        t.check(cfg)
        assert cfg.pad_idx == PAD and cfg.max_len >= max(t.max_src_len, t.max_tgt_len)
    need = max(t.max_src_len, t.max_tgt_len)
    with pytest.raises(ValueError, match=rf"max_len={need - 1} .*max_len >= {need}"):
        t.check(t.model_config().replace(max_len=need - 1))


@pytest.mark.parametrize("name", PRESETS)
def test_example_matches_solve_and_labels(name):
    t = task(name)
    src, answer = t.example("val", 3)
    if t.kind == "lm":
        assert answer == t.val.tgt_out[3].tolist()
    elif t.kind == "classify":
        assert answer == [int(t.val.label[3])] == t.solve(src)
    else:
        assert answer == t.solve(src)
    labels = t.position_labels(t.val.src[3] if t.val.src is not None else t.val.tgt_in[3])
    assert len(labels) == (t.max_src_len or t.max_tgt_len) and all(isinstance(s, str) for s in labels)
    with pytest.raises(ValueError, match="index"):
        t.example("val", len(t.val))
    with pytest.raises(ValueError, match="split"):
        t.example("test")


# ---------------------------------------------------------------------------------------------
# Sequence to sequence: reversal, copy, sort
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", SEQ2SEQ)
def test_seq2seq_tensors_hold_bos_target_eos_and_padding(name):
    t = task(name)
    rule = {"reversal": lambda s: s[::-1], "copy": list, "sort": sorted}[t.cfg.name]
    for batch in (t.val, _take_rows(t.train, 300)):
        for src_row, tin, tout in zip(batch.src, batch.tgt_in, batch.tgt_out, strict=True):
            src = unpad(src_row)
            target = t.solve(src)
            assert target == rule(src)
            assert unpad(tout) == target + [EOS]
            assert unpad(tin) == [BOS] + target
            assert BOS not in src and EOS not in src


def _take_rows(batch, n):
    return Batch(*(None if x is None else x[:n] for x in (batch.src, batch.tgt_in, batch.tgt_out, batch.label)))


def test_reversal_seed_is_the_chapters_exercise():
    t = task("reversal-seed")
    for batch in (t.train, t.val):
        lengths = (batch.src != PAD).sum(1)
        assert int(lengths.min()) == 10 and int(lengths.max()) == 20
        values = {int(t.tokens([i])[0]) for i in batch.src[batch.src != PAD].unique().tolist()}
        assert values == set(range(1, 101))
    assert t.max_tgt_len == 21 and t.encode("1 100") == [3, 102]


@pytest.mark.parametrize("name", PRESETS)
def test_rows_within_a_split_are_distinct(name):
    t = task(name)
    repeated = 1_466 if name == "scan-addjump" else 0  # the paper's add-jump file repeats "jump" alone
    if t.kind != "lm":  # language-model windows may overlap by design
        assert len(rows_of(t.train)) == len(t.train) - repeated


@pytest.mark.parametrize("name", SEQ2SEQ)
def test_expected_cross_attention_points_at_the_copied_token(name):
    t = task(name)
    for i in range(20):
        src, target = t.example("val", i)
        pattern = t.expected_cross_attention(src)
        assert pattern.shape == (len(target) + 1, len(src))
        assert np.all(pattern[-1] == 0) and np.all(pattern[:-1].sum(1) == 1)
        for row, out in zip(pattern[:-1], target, strict=True):
            assert src[int(row.argmax())] == out


def test_expected_cross_attention_shapes_per_task():
    src = [5, 3, 5, 4]
    rev = make_task(TASK_PRESETS["reversal-fast"].replace(n_train=10, n_val=5))
    copy = make_task(TASK_PRESETS["copy"].replace(n_train=10, n_val=5))
    sort = make_task(TASK_PRESETS["sort"].replace(n_train=10, n_val=5))
    assert np.array_equal(rev.expected_cross_attention(src)[:-1], np.eye(4)[::-1])
    assert np.array_equal(copy.expected_cross_attention(src)[:-1], np.eye(4))
    assert sort.expected_cross_attention(src)[:-1].argmax(1).tolist() == [1, 3, 0, 2]  # stable ties
    assert task("order").expected_cross_attention([3, 4]) is None


def test_small_space_uses_every_sequence_once_and_refuses_more():
    cfg = TaskConfig("copy", n_symbols=2, min_len=1, max_len=3, n_train=10, n_val=4)  # 2+4+8 = 14 exist
    t = make_task(cfg)
    everything = rows_of(t.train) | rows_of(t.val)
    assert len(everything) == 14
    with pytest.raises(ValueError, match="only 14 distinct sequences"):
        make_task(cfg.replace(n_train=11))


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["reversal", "copy", "sort"]), n=st.integers(2, 6), lo=st.integers(1, 4),
       extra=st.integers(0, 3), n_train=st.integers(1, 300), n_val=st.integers(1, 60), seed=st.integers(0, 99))
def test_any_small_seq2seq_config_is_disjoint_and_correct(name, n, lo, extra, n_train, n_val, seed):
    cfg = TaskConfig(name, n_symbols=n, min_len=lo, max_len=lo + extra, n_train=n_train, n_val=n_val, seed=seed)
    space = sum(n ** L for L in range(lo, lo + extra + 1))
    if n_train + n_val > space:
        with pytest.raises(ValueError, match=f"only {space} distinct"):
            make_task(cfg)
        return
    t = make_task(cfg)
    assert len(rows_of(t.train)) == n_train and not rows_of(t.train) & rows_of(t.val)
    for src_row, tout in zip(t.val.src, t.val.tgt_out, strict=True):
        assert unpad(tout) == t.solve(unpad(src_row)) + [EOS]


def test_seq2seq_encode_errors():
    t = task("reversal-seed")
    assert t.tokens(t.encode("3 1, 4")) == ["3", "1", "4"]
    with pytest.raises(ValueError, match="empty"):
        t.encode("   ")
    with pytest.raises(ValueError, match=r"unknown token 'x'.*integers 1\.\.100"):
        t.encode("3 x 4")
    for bad in ("0", "101", "-3", "2.5"):
        with pytest.raises(ValueError, match="unknown token"):
            t.encode(bad)
    with pytest.raises(ValueError, match="maximum is 20"):
        t.encode(" ".join(["7"] * 21))
    assert t.tokens([PAD, BOS, EOS]) == list(SPECIALS)


# ---------------------------------------------------------------------------------------------
# Order detection (tokens and vectors)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cfg", [TASK_PRESETS["order"], TaskConfig("order", 3, 5, 5, n_train=301, n_val=51)])
def test_order_labels_are_balanced_correct_and_a_b_appear_once(cfg):
    t = make_task(cfg)
    a, b = t.vocab.index("A"), t.vocab.index("B")
    assert (len(t.train), len(t.val)) == (cfg.n_train, cfg.n_val)
    for batch in (t.train, t.val):
        assert int(batch.label.sum()) == len(batch) // 2
        assert bool(((batch.src == a).sum(1) == 1).all()) and bool(((batch.src == b).sum(1) == 1).all())
        pos_a, pos_b = (batch.src == a).int().argmax(1), (batch.src == b).int().argmax(1)
        assert torch.equal(batch.label, (pos_a < pos_b).long())
    assert t.class_names[1] == "A first"


def test_order_content_alone_cannot_tell_the_label():
    t = task("order")
    a, b = t.vocab.index("A"), t.vocab.index("B")
    src = t.val.src
    swapped = src.clone()
    swapped[src == a], swapped[src == b] = b, a
    # same tokens, opposite answer: only position separates the classes
    assert torch.equal(swapped.sort(1).values, src.sort(1).values)
    assert [t.solve(r)[0] for r in swapped] == (1 - t.val.label).tolist()


def test_order_small_space_and_encode():
    cfg = TaskConfig("order", n_symbols=1, min_len=4, max_len=4, n_train=8, n_val=4)  # 12 exist
    t = make_task(cfg)
    assert len(rows_of(t.train) | rows_of(t.val)) == 12
    with pytest.raises(ValueError, match="only 12 distinct"):
        make_task(cfg.replace(n_train=10))
    t = task("order")
    assert t.solve(t.encode("3 A 1 b 2 6 4 5")) == [1]
    assert t.solve(t.encode("B A")) == [0]
    for text, msg in [("", "empty"), ("1 A 2", "exactly once"), ("A A B", "exactly once"),
                      ("A B 9", "unknown token '9'"), ("A B " + "1 " * 7, "maximum is 8")]:
        with pytest.raises(ValueError, match=msg):
            t.encode(text)


def test_order_vectors_is_the_notebooks_construction():
    t = task("order-vectors")
    assert t.train.src.shape == (400, 8, 16) and t.val.src.shape == (150, 8, 16)
    assert t.train.src.dtype == torch.float32 and t.vocab == SPECIALS
    x = torch.cat([t.train.src, t.val.src])
    labels = torch.cat([t.train.label, t.val.label])
    is_a = (x == t.vec_a).all(-1)
    is_b = (x == t.vec_b).all(-1)
    assert bool((is_a.sum(1) == 1).all()) and bool((is_b.sum(1) == 1).all())
    assert torch.equal(labels, (is_a.int().argmax(1) < is_b.int().argmax(1)).long())
    assert 0.4 < labels.float().mean() < 0.6
    noise = x[~(is_a | is_b)]
    assert abs(float(noise.std()) - 0.1) < 0.005 and abs(float(noise.mean())) < 0.005
    src, label = t.example("train", 0)
    labels0 = t.position_labels(src)
    assert sorted(labels0) == ["A", "B"] + ["·"] * 6 and label == t.solve(src)
    assert t.tokens(src) == [str(i) for i in range(8)]
    with pytest.raises(ValueError, match="pick an example"):
        t.encode("A B")
    cfg = t.model_config(CLASSROOM_PRESETS["small"])
    assert (cfg.src_vocab_size, cfg.d_model, cfg.arch, cfg.n_classes) == (0, 16, "encoder", 2)
    with pytest.raises(ValueError, match="src_vocab_size"):
        t.check(cfg.replace(src_vocab_size=16))
    with pytest.raises(ValueError, match="d_model"):
        t.check(cfg.replace(d_model=32))


def test_order_vectors_without_noise_and_other_width():
    t = make_task(TASK_PRESETS["order-vectors"].replace(noise=0.0, dim=12))
    x = t.val.src
    assert x.shape[-1] == 12 and int(((x != 0).any(-1)).sum()) == 2 * len(x)
    cfg = t.model_config(ModelConfig(n_heads=8))
    assert cfg.d_model == 12 and 12 % cfg.n_heads == 0
    t.check(cfg)


# ---------------------------------------------------------------------------------------------
# Character language model
# ---------------------------------------------------------------------------------------------

def test_char_lm_windows_come_from_disjoint_parts_of_the_text():
    t = task("char-lm")
    assert 4_000 <= len(CORPUS.encode()) <= 6_000
    assert t.vocab == SPECIALS + tuple(sorted(set(CORPUS)))
    cut = int(len(CORPUS) * 0.9)
    head, tail = CORPUS[:cut], CORPUS[cut:]
    for batch, part in ((t.train, head), (t.val, tail)):
        assert torch.equal(batch.tgt_in[:, 1:], batch.tgt_out[:, :-1])
        assert batch.tgt_in.shape[1] == 32
        for tin, tout in zip(batch.tgt_in[:50], batch.tgt_out[:50], strict=True):
            window = "".join(t.tokens(tin.tolist() + tout[-1:].tolist()))
            assert window in part
    val_windows = {"".join(t.tokens(r)) for r in t.val.tgt_in.tolist()}
    assert not any(w in head for w in val_windows)
    src, nxt = t.example("val", 0)
    assert t.solve(src) == nxt and t.solve([]) == []


def test_char_lm_encode_and_labels():
    t = task("char-lm")
    assert t.tokens(t.encode("the model")) == list("the model")
    assert t.position_labels(t.encode("a b")) == ["a", "␣", "b"]
    with pytest.raises(ValueError, match="empty"):
        t.encode("")
    with pytest.raises(ValueError, match=r"unknown characters \['#', '@'\]"):
        t.encode("a@b#")
    with pytest.raises(ValueError, match="maximum is 32"):
        t.encode("a" * 33)
    with pytest.raises(ValueError, match="n_val"):
        make_task(TASK_PRESETS["char-lm"].replace(n_val=5_000))


# ---------------------------------------------------------------------------------------------
# Config validation and model checks
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("changes, field", [
    (dict(name="parity"), "reversal, copy, sort"),
    (dict(min_len=9, max_len=8), "min_len=9"),
    (dict(n_symbols=1), "n_symbols=1"),
    (dict(min_len=0), "min_len=0"),
    (dict(n_train=0), "n_train=0"),
    (dict(n_val=2.5), "n_val=2.5"),
    (dict(seed=-1), "seed=-1"),
    (dict(noise=-0.1), "noise=-0.1"),
    (dict(name="order", min_len=4, max_len=8), "min_len == max_len"),
    (dict(name="char-lm", min_len=1, max_len=1), "min_len=1"),
])
def test_task_config_rejects_bad_fields(changes, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        TaskConfig().replace(**changes)


def test_task_config_round_trips_and_rejects_unknown_fields():
    for cfg in TASK_PRESETS.values():
        assert TaskConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown TaskConfig fields"):
        TaskConfig.from_dict({"name": "copy", "colour": "red"})
    with pytest.raises(ValueError, match="reversal-fast"):
        make_task("no-such-preset")


def test_check_names_the_field_that_does_not_fit():
    t = task("reversal-seed")
    cfg = t.model_config()
    assert (cfg.src_vocab_size, cfg.tgt_vocab_size, cfg.max_len) == (103, 103, 64)
    assert t.model_config(ModelConfig(max_len=8)).max_len == 21
    with pytest.raises(ValueError, match="arch='decoder' cannot do task 'reversal'; use 'encoder-decoder'"):
        t.check(ModelConfig(arch="decoder", tgt_vocab_size=103))
    with pytest.raises(ValueError, match="src_vocab_size=50"):
        t.check(cfg.replace(src_vocab_size=50))
    with pytest.raises(ValueError, match="tgt_vocab_size=50"):
        t.check(cfg.replace(tgt_vocab_size=50))
    with pytest.raises(ValueError, match=r"max_len=8 is shorter .*\(21 tokens\); use max_len >= 21"):
        t.check(cfg.replace(max_len=8))
    with pytest.raises(ValueError, match="n_classes=3"):
        task("order").check(task("order").model_config(n_classes=3))
    with pytest.raises(ValueError, match="arch='encoder-decoder' cannot do task 'char-lm'; use 'decoder'"):
        task("char-lm").check(ModelConfig())
