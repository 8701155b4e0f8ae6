"""The trainer: loss, schedules, learning, determinism, resume, divergence, snapshots."""

import itertools
import math

import pytest
import torch
import torch.nn.functional as F

from explorer.config import ModelConfig
from explorer.evaluation import evaluate
from explorer.losses import label_smoothing_loss
from explorer.model import build_model
from explorer.tasks import PAD, TaskConfig, make_task
from explorer.train_config import TrainConfig, lr_at
from explorer.training import new_state, train_steps

TINY = ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32)


@pytest.fixture(scope="module")
def reversal():
    return make_task(TaskConfig("reversal", n_symbols=6, min_len=3, max_len=5, n_train=500, n_val=50))


def tiny_model(task, seed=0, **kw):
    return build_model(task.model_config(TINY, **kw), seed=seed)


def quick(**kw) -> TrainConfig:
    return TrainConfig(**{**dict(steps=20, batch_size=16, lr=3e-3, warmup=5, eval_every=0, eval_examples=8), **kw})


# ---------------------------------------------------------------------------------------------
# Loss
# ---------------------------------------------------------------------------------------------

def chapter_loss(logits, target, eps, pad):
    """The chapter's recipe written out: a smoothed target distribution, then cross-entropy."""
    k = logits.size(-1)
    dist = torch.full_like(logits, eps / (k - 2))
    dist.scatter_(1, target[:, None], 1 - eps)
    dist[:, pad] = 0.0
    per_row = -(dist * logits.log_softmax(-1)).sum(-1)
    keep = target != pad
    return per_row[keep].mean()


def test_label_smoothing_eps0_equals_cross_entropy():
    torch.manual_seed(0)
    logits, target = torch.randn(12, 7), torch.randint(0, 7, (12,))
    target[:3] = PAD
    expected = F.cross_entropy(logits, target, ignore_index=PAD)
    assert torch.allclose(label_smoothing_loss(logits, target, 0.0), expected)
    assert torch.allclose(label_smoothing_loss(logits, target, 0.0, ignore_index=None), F.cross_entropy(logits, target))


def test_label_smoothing_matches_the_chapter_formula():
    torch.manual_seed(1)
    logits, target = torch.randn(10, 9), torch.randint(1, 9, (10,))
    target[[2, 5]] = PAD
    assert torch.allclose(label_smoothing_loss(logits, target, 0.1), chapter_loss(logits, target, 0.1, PAD), atol=1e-6)
    # without padding the mass spreads over all K - 1 other classes
    k = logits.size(-1)
    dist = torch.full_like(logits, 0.1 / (k - 1)).scatter_(1, target[:, None], 0.9)
    direct = -(dist * logits.log_softmax(-1)).sum(-1).mean()
    assert torch.allclose(label_smoothing_loss(logits, target, 0.1, ignore_index=None), direct, atol=1e-6)


def test_label_smoothing_ignores_padding_rows_and_takes_batched_logits():
    torch.manual_seed(2)
    logits, target = torch.randn(2, 5, 8), torch.randint(3, 8, (2, 5))
    base = label_smoothing_loss(logits, target, 0.2)
    padded_logits = torch.cat([logits, 100 * torch.randn(2, 3, 8)], dim=1)  # wild logits at padding
    padded_target = torch.cat([target, torch.full((2, 3), PAD)], dim=1)
    assert torch.allclose(label_smoothing_loss(padded_logits, padded_target, 0.2), base, atol=1e-6)


@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_an_all_padding_batch_has_a_loss_of_zero_and_zero_gradients(eps):
    logits = torch.randn(4, 6, requires_grad=True)
    loss = label_smoothing_loss(logits, torch.full((4,), PAD), eps)
    loss.backward()
    assert loss.item() == 0.0 and torch.equal(logits.grad, torch.zeros_like(logits))


# ---------------------------------------------------------------------------------------------
# Schedules and config
# ---------------------------------------------------------------------------------------------

def test_warmup_rises_linearly_then_each_schedule_behaves():
    cfg = TrainConfig(steps=1000, lr=1e-3, warmup=100)
    warm = [lr_at(s, cfg) for s in range(100)]
    assert warm[0] == pytest.approx(1e-5) and warm[-1] == pytest.approx(1e-3)
    assert all(b - a == pytest.approx(1e-5) for a, b in zip(warm, warm[1:]))
    assert lr_at(999, cfg) < 1e-7                                   # cosine ends near zero
    assert lr_at(550, cfg) == pytest.approx(0.5e-3, rel=0.01)         # and is halfway in the middle
    const = cfg.replace(schedule="constant")
    assert {lr_at(s, const) for s in range(100, 1000)} == {1e-3}
    inv = cfg.replace(schedule="inverse_sqrt")
    assert lr_at(399, inv) == pytest.approx(0.5e-3) and lr_at(100, inv) < 1e-3


@pytest.mark.parametrize("field, value", [
    ("steps", 0), ("batch_size", 2.5), ("lr", 0), ("lr", float("nan")), ("warmup", -1),
    ("schedule", "linear"), ("label_smoothing", 1.0), ("grad_clip", -1), ("beta2", 1.0),
    ("threads", 0), ("seed", True), ("batching", "sorted"),
])
def test_train_config_rejects_bad_values_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: value})


def test_train_config_round_trips_through_a_dict():
    cfg = TrainConfig(steps=7, schedule="inverse_sqrt", label_smoothing=0.1)
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="bogus"):
        TrainConfig.from_dict({**cfg.to_dict(), "bogus": 1})


# ---------------------------------------------------------------------------------------------
# Learning
# ---------------------------------------------------------------------------------------------

class OneBatch:
    """The task, but every training batch is the same one."""

    def __init__(self, task, batch):
        self._task, self._batch = task, batch

    def __getattr__(self, name):
        return getattr(self._task, name)

    def sample(self, batch_size, generator, by_length=False):
        return self._batch


def test_a_single_batch_is_overfitted(reversal):
    task = OneBatch(reversal, reversal.sample(16, torch.Generator().manual_seed(0)))
    model = tiny_model(reversal, d_model=32, n_heads=2, d_ff=64)
    recs = list(train_steps(model, task, quick(steps=100, lr=1e-2, warmup=10, schedule="constant")))
    assert recs[-1].loss < 0.1 * recs[0].loss
    assert recs[-1].token_acc == 1.0 and recs[-1].seq_acc == 1.0


# ---------------------------------------------------------------------------------------------
# Determinism, resume, divergence
# ---------------------------------------------------------------------------------------------

def run(task, cfg, seed=0, **model_kw):
    model = tiny_model(task, seed=seed, **model_kw)
    return [r.loss for r in train_steps(model, task, cfg)], model


def test_same_seed_same_run_other_seed_other_run(reversal):
    cfg = quick(steps=15)
    (a, ma), (b, mb) = run(reversal, cfg, dropout=0.1), run(reversal, cfg, dropout=0.1)
    assert a == b
    assert all(torch.equal(p, q) for p, q in zip(ma.state_dict().values(), mb.state_dict().values()))
    c, _ = run(reversal, cfg.replace(seed=1), seed=1, dropout=0.1)
    assert c != a


def test_stop_and_resume_equals_a_straight_run(reversal):
    cfg = quick(steps=60, eval_every=30)
    straight, m_straight = run(reversal, cfg, dropout=0.1)
    model = tiny_model(reversal, dropout=0.1)
    state = new_state(model, reversal, cfg)
    steps = train_steps(model, reversal, cfg, state)
    first = [r.loss for r in itertools.islice(steps, 30)]
    steps.close()  # the consumer walks away mid-run
    assert state.step == 30 and len(state.history) == 30
    rest = [r.loss for r in train_steps(model, reversal, cfg, state)]
    assert first + rest == straight
    assert all(torch.equal(p, q) for p, q in zip(model.state_dict().values(), m_straight.state_dict().values()))
    assert state.history[-1].elapsed >= state.history[29].elapsed


def test_a_larger_step_budget_continues_the_run(reversal):
    cfg = quick(steps=20, schedule="constant")
    straight, _ = run(reversal, cfg.replace(steps=40))
    model = tiny_model(reversal)
    state = new_state(model, reversal, cfg)
    first = [r.loss for r in train_steps(model, reversal, cfg, state)]
    rest = [r.loss for r in train_steps(model, reversal, cfg.replace(steps=40), state)]
    assert first + rest == straight and [r.step for r in state.history] == list(range(1, 41))


def test_divergence_stops_and_keeps_finite_weights(reversal):
    model = tiny_model(reversal)
    recs = list(train_steps(model, reversal, quick(steps=200, lr=1e6, warmup=0)))
    last = recs[-1]
    assert last.stopped and "diverged" in last.stopped and len(recs) < 200
    assert all(r.stopped is None for r in recs[:-1])
    assert all(bool(torch.isfinite(p).all()) for p in model.parameters())


def test_a_non_finite_gradient_is_not_applied(reversal):
    model = tiny_model(reversal)
    state = new_state(model, reversal, quick())
    steps = train_steps(model, reversal, quick(steps=10), state)
    list(itertools.islice(steps, 3))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.output_proj.bias.register_hook(lambda g: torch.full_like(g, math.inf))
    rest = list(steps)
    assert len(rest) == 1 and "gradient" in rest[0].stopped and rest[0].step == 4
    assert state.step == 3
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


# ---------------------------------------------------------------------------------------------
# Records and every task kind
# ---------------------------------------------------------------------------------------------

def test_records_carry_grad_norms_eval_and_snapshots(reversal):
    model = tiny_model(reversal, n_decoder_layers=2)
    state = new_state(model, reversal, quick())
    recs = list(train_steps(model, reversal, quick(steps=10, snapshot_every=5, eval_every=4), state))
    assert state.layer_labels == ("enc 0", "dec 0", "dec 1")
    assert all(len(r.grad_norms) == 3 and r.grad_norm > 0 for r in recs)
    assert [r.step for r in recs if r.val_loss is not None] == [4, 8, 10]
    assert [r.step for r in recs if r.snapshot is not None] == [5, 10]
    snap = recs[4].snapshot
    src, tgt = reversal.example("val", 0)
    assert snap.kind == "cross" and snap.pattern.shape == (2, 2, len(tgt) + 1, len(src))
    assert snap.pattern.dtype == "float32" and abs(snap.pattern.sum(-1) - 1).max() < 1e-5
    assert len(snap.q_labels) == len(tgt) + 1 and snap.k_labels == tuple(reversal.tokens(src))
    row = recs[-1].to_row(state.layer_labels)
    assert {"grad_enc_0", "grad_dec_1", "val_exact", "loss"} <= set(row) and "snapshot" not in row
    assert 0 < recs[0].entropy <= math.log(len(reversal.vocab)) + 1e-4


@pytest.mark.parametrize("clip", [0.0, 0.05])
def test_gradient_norms_are_those_of_torch(reversal, clip):
    """Per-block and total norms come from one foreach call; they equal inspect.grad_norms and
    torch's total norm, and clipping leaves the total at `clip`."""
    from explorer import inspect
    model = tiny_model(reversal, n_decoder_layers=2)
    [rec] = list(train_steps(model, reversal, quick(steps=1, grad_clip=clip)))
    grads = [p.grad for p in model.parameters() if p.grad is not None]   # as the step left them
    after = float(torch.nn.utils.get_total_norm(grads))
    if clip:
        assert rec.grad_norm > clip and after == pytest.approx(clip, rel=1e-4)
    else:
        assert after == pytest.approx(rec.grad_norm, rel=1e-6)
        expected = inspect.grad_norms(inspect.grad_groups(model))
        assert rec.grad_norms == pytest.approx(tuple(expected.values()), rel=1e-5)
        assert all(g > 0 for g in rec.grad_norms)


def test_by_length_batching_trains_on_unpadded_batches(reversal):
    seen = []

    class Spy:
        def __getattr__(self, name):
            return getattr(reversal, name)

        def sample(self, batch_size, generator, by_length=False):
            batch = reversal.sample(batch_size, generator, by_length=by_length)
            seen.append(bool((batch.src != PAD).all()))
            return batch
    recs = list(train_steps(tiny_model(reversal), Spy(), quick(steps=12, batching="by-length")))
    assert len(recs) == 12 and all(seen) and all(r.stopped is None for r in recs)
    seen.clear()
    list(train_steps(tiny_model(reversal), Spy(), quick(steps=12)))
    assert not all(seen)   # uniform draws mix lengths, so some rows are padded


@pytest.mark.parametrize("preset, attention", [("order", "enc_self"), ("order-vectors", "enc_self"),
                                               ("char-lm", "dec_self")])
def test_every_task_kind_trains_and_evaluates(preset, attention):
    task = make_task(preset)
    model = build_model(task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1,
                                                      n_decoder_layers=1, d_ff=32)), seed=0)
    recs = list(train_steps(model, task, quick(steps=4, snapshot_every=4, eval_examples=20)))
    last = recs[-1]
    assert last.stopped is None and math.isfinite(last.loss)
    assert 0 <= last.val_exact <= 1 and 0 <= last.val_token_acc <= 1
    assert last.snapshot.kind == attention and abs(last.snapshot.pattern.sum(-1) - 1).max() < 1e-5


def test_evaluate_counts_exact_matches_with_greedy_decoding(reversal):
    model = tiny_model(reversal)
    out = evaluate(model, reversal, max_examples=30, batch_size=7)
    assert set(out) == {"val_loss", "val_token_acc", "val_exact"}
    assert out["val_exact"] == 0.0 and out["val_loss"] > 1.0   # untrained: nothing is reversed
    assert model.training  # the trainer's mode is left as it was
    quick_eval = evaluate(model, reversal, max_examples=30, batch_size=7, exact=False)  # no greedy decoding
    assert quick_eval == {**out, "val_exact": None}
