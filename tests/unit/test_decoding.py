"""Greedy decoding, beam search and LM continuation on tiny models."""

import pytest
import torch

from explorer.config import ModelConfig
from explorer.decoding import beam_search, generate, greedy, sequence_logprob, strip
from explorer.model import build_model
from explorer.tasks import BOS, EOS, PAD, TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import train_steps

SMALL = ModelConfig(d_model=32, n_heads=4, n_encoder_layers=1, n_decoder_layers=1, d_ff=64)


@pytest.fixture(scope="module")
def task():
    return make_task(TaskConfig("reversal", n_symbols=6, min_len=3, max_len=5, n_train=2000, n_val=100))


@pytest.fixture(scope="module")
def trained(task):
    """A model that reverses (1.0 greedy exact on validation with this seed, ~3 s)."""
    model = build_model(task.model_config(SMALL), seed=0)
    cfg = TrainConfig(steps=300, lr=1e-2, warmup=20, batch_size=64, eval_every=0, eval_examples=100)
    last = list(train_steps(model, task, cfg))[-1]
    assert last.val_exact >= 0.95
    return model.eval()


@pytest.fixture(scope="module")
def untrained(task):
    return build_model(task.model_config(SMALL), seed=3).eval()


def val_src(task, n=40):
    return task.val.src[:n]


def test_greedy_reverses_with_a_trained_model(task, trained):
    src = torch.tensor([[3, 4, 5, 6, 7], [8, 3, 3, 0, 0]])  # "1 2 3 4 5" and "6 1 1" (PAD-ed)
    out = greedy(trained, src, max_len=6)
    assert strip(out[0]) == [7, 6, 5, 4, 3] and strip(out[1]) == [3, 3, 8]
    assert out[1, 3].item() == EOS and (out[1, 4:] == PAD).all()  # PAD after EOS


def test_greedy_format_and_early_stop(task, untrained):
    src = val_src(task, 8)
    out = greedy(untrained, src, max_len=30)
    assert out.shape[0] == 8 and out.shape[1] <= 30
    for row in out.tolist():
        if EOS in row:
            assert set(row[row.index(EOS) + 1:]) <= {PAD}
        assert BOS not in row
    if out.shape[1] < 30:  # stopped early: every row has ended
        assert all(EOS in row for row in out.tolist())


@pytest.mark.parametrize("which", ["trained", "untrained"])
def test_beam_of_one_is_greedy(task, which, request):
    model = request.getfixturevalue(which)
    src = val_src(task)
    seqs, scores = beam_search(model, src, k=1, max_len=7)
    assert torch.equal(seqs, greedy(model, src, max_len=7))
    assert torch.allclose(scores, sequence_logprob(model, src, seqs), atol=1e-4)


@pytest.mark.parametrize("which", ["trained", "untrained"])
def test_wider_beam_scores_at_least_greedy(task, which, request):
    model = request.getfixturevalue(which)
    src = val_src(task)
    _, greedy_scores = beam_search(model, src, k=1, max_len=7)
    seqs, scores = beam_search(model, src, k=4, max_len=7)
    assert (scores >= greedy_scores - 1e-5).all()
    assert torch.allclose(scores, sequence_logprob(model, src, seqs), atol=1e-4)  # score = log P(sequence)
    assert seqs.shape[0] == len(src) and not (seqs == BOS).any()


def test_length_penalty_changes_only_the_ranking(task, untrained):
    src = val_src(task, 10)
    seqs, scores = beam_search(untrained, src, k=4, max_len=7, length_penalty=1.0)
    assert torch.allclose(scores, sequence_logprob(untrained, src, seqs), atol=1e-4)
    with pytest.raises(ValueError, match="k=0"):
        beam_search(untrained, src, k=0)


def test_decoding_leaves_the_model_mode_alone(task, untrained):
    untrained.train()
    greedy(untrained, val_src(task, 2), max_len=3)
    assert untrained.training
    untrained.eval()


def test_strip():
    assert strip([BOS, 5, 6, EOS, 7, PAD]) == [5, 6]
    assert strip(torch.tensor([5, PAD, 6])) == [5, 6]
    assert strip([]) == []


@pytest.fixture(scope="module")
def lm():
    cfg = ModelConfig(arch="decoder", tgt_vocab_size=11, d_model=16, n_heads=2, n_decoder_layers=1,
                      d_ff=32, max_len=8)
    return build_model(cfg, seed=0).eval()


def test_generate_greedy_continuation(lm):
    prompt = torch.tensor([[3, 4, 5], [6, 7, 8]])
    out = generate(lm, prompt, n_new=4)
    assert out.shape == (2, 4)
    tokens = prompt
    for _ in range(4):  # by hand: argmax of the last position, appended
        logits = lm(tokens)[:, -1]
        logits[:, [PAD, BOS]] = float("-inf")  # never emitted
        tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(out, tokens[:, 3:])


def test_generate_samples_reproducibly_and_past_max_len(lm):
    prompt = torch.tensor([[3, 4, 5]])
    a = generate(lm, prompt, 12, temperature=1.0, generator=torch.Generator().manual_seed(0))
    b = generate(lm, prompt, 12, temperature=1.0, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a, b) and a.shape == (1, 12)  # 15 tokens > max_len 8: the window slides
    with pytest.raises(ValueError, match="temperature"):
        generate(lm, prompt, 1, temperature=-1)
