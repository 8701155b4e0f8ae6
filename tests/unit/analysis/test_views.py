"""What the Attention and Outputs pages compute: typed input, attention views with masks and expected
patterns, match scores, entropy, output distributions and decoding, on tiny and shipped models."""

import functools
import math

import numpy as np
import pytest
import torch
from hypothesis import event, given, settings
from hypothesis import strategies as st

from explorer.analysis import views
from explorer.config import ModelConfig
from explorer.decoding import generate
from explorer.model import HookPoint, build_model
from explorer.store import checkpoints
from explorer.tasks import BOS, EOS, PAD, TASK_PRESETS, TaskConfig, make_task

TINY = ModelConfig(d_model=16, n_heads=2, n_encoder_layers=2, n_decoder_layers=2, d_ff=32)
task_of = functools.cache(make_task)
TASKS = {name: task_of(name) for name in ("reversal-fast", "sort", "order", "order-vectors", "char-lm")}


def tiny(task, seed=0):
    cfg = task.model_config(TINY.replace(d_model=task.cfg.dim) if task.name == "order-vectors" else TINY)
    return build_model(cfg, seed=seed).eval()


MODELS = {name: tiny(task) for name, task in TASKS.items()}


@pytest.fixture(scope="module")
def shipped_reversal():
    """The shipped reversal-fast model (the app's default), with its own task."""
    entry = next((e for e in checkpoints.pretrained_manifest() if e["name"] == "reversal-fast"), None)
    assert entry is not None, "pretrained/ must ship reversal-fast (python -m explorer.store.shipped builds it)"
    model, meta = checkpoints.load_pretrained("reversal-fast")
    return model.eval(), make_task(TaskConfig.from_dict(meta["task"]))


# ------------------------------------------------------------------------------------- typed input
@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(TASK_PRESETS)), text=st.text(max_size=60))
def test_any_text_gives_ids_or_a_message(name, text):
    task = task_of(name)
    try:
        ids = views.read_input(task, text)
    except ValueError as err:
        assert len(str(err)) > 10  # a sentence, not a bare token
        return
    assert ids and all(3 <= i < len(task.vocab) for i in ids)  # never PAD, BOS or EOS
    assert len(ids) <= max(task.max_src_len, task.max_tgt_len)


def near_valid(task) -> st.SearchStrategy[str]:
    """Text that is often valid: a validation example typed back, cut short, or with a near miss
    (an unknown token, an extra A) put in."""
    def typed(i: int, cut: int, extra: str) -> str:
        text = views.text_of(task, task.example("val", i)[0])
        return text[:cut] + extra
    return st.builds(typed, st.integers(0, 20), st.one_of(st.just(999), st.integers(1, 40)),
                     st.sampled_from(["", "", "", " 0", " 11", " A", "~"]))


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(["reversal-fast", "order", "char-lm"]), data=st.data(), pad=st.booleans(),
       teacher=st.booleans())
def test_accepted_text_runs_through_every_view(name, data, pad, teacher):
    """Whatever the text box accepts, the pages' computations take without another exception."""
    task, model = TASKS[name], MODELS[name]
    text = data.draw(st.one_of(near_valid(task), near_valid(task), st.text(max_size=40)))
    try:
        src = views.read_input(task, text)
    except ValueError:
        event("rejected")
        return
    event(f"accepted {name}")
    tgt_in = views.decoder_input(model, task, src, teacher) if task.kind == "seq2seq" else None
    view = views.attention_for(model, task, src, tgt_in, pad=pad)
    for kind in view.kinds:
        assert np.allclose(view.patterns[kind].sum(-1), 1.0, atol=1e-5)
    probs = views.output_distribution(model, task, src, tgt_in)
    assert np.allclose(probs.sum(-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("text, words", [
    ("", "empty"), ("1 2 x", "integers 1..10"), ("0", "integers 1..10"), ("1 " * 9, "maximum is 8")])
def test_bad_input_says_what_is_valid(text, words):
    with pytest.raises(ValueError, match=words):
        views.read_input(TASKS["reversal-fast"], text)


@pytest.mark.parametrize("name", ["reversal-fast", "order", "char-lm"])
def test_an_example_typed_back_reads_the_same(name):
    task = TASKS[name]
    src, _ = task.example("val", 5)
    assert views.read_input(task, views.text_of(task, src)) == tuple(src)


# ------------------------------------------------------------------------------------ attention
def test_seq2seq_view_axes_masks_and_expected_pattern():
    task, model = TASKS["reversal-fast"], MODELS["reversal-fast"]
    src = (3, 4, 5, 6)                                                  # "1 2 3 4"
    tgt_in = views.decoder_input(model, task, src, teacher=True)
    assert tgt_in == (BOS, 6, 5, 4, 3)
    view = views.attention_for(model, task, src, tgt_in, pad=True)
    assert view.patterns["enc_self"].shape == (2, 2, 8, 8)              # padded to the task's 8 tokens
    assert view.patterns["cross"].shape == (2, 2, 9, 8)                 # decoder padded to 9
    assert view.k_labels["cross"] == ("1", "2", "3", "4") + ("<pad>",) * 4
    assert view.q_labels["cross"][:5] == ("<bos>", "4", "3", "2", "1")
    enc_mask, dec_mask = view.masks["enc_self"], view.masks["dec_self"]
    assert enc_mask[:, :4].all() and not enc_mask[:, 4:].any()
    assert np.array_equal(dec_mask[:5, :5], np.tri(5, dtype=bool)) and not dec_mask[:, 5:].any()
    for kind in view.kinds:                                             # forbidden cells get no weight
        assert np.allclose(view.patterns[kind][..., ~view.masks[kind]], 0.0, atol=1e-6)
    want = view.expected["cross"]
    assert [tuple(np.nonzero(row)[0]) for row in want[:5]] == [(3,), (2,), (1,), (0,), ()]  # anti-diagonal


def test_lm_and_classifier_views():
    lm = views.attention_for(MODELS["char-lm"], TASKS["char-lm"], views.read_input(TASKS["char-lm"], "the "))
    assert lm.kinds == ("dec_self",) and lm.q_labels["dec_self"] == ("t", "h", "e", "␣")
    assert np.array_equal(lm.masks["dec_self"], np.tri(4, dtype=bool))
    vec_task = TASKS["order-vectors"]
    src, _ = vec_task.example("val", 0)
    view = views.attention_for(MODELS["order-vectors"], vec_task, src, pad=True)  # vectors: nothing to pad
    assert view.kinds == ("enc_self",) and view.patterns["enc_self"].shape[-1] == len(src)
    assert sorted(view.q_labels["enc_self"]).count("·") == len(src) - 2 and "A" in view.q_labels["enc_self"]


def test_the_shared_model_is_left_untouched():
    task, model = TASKS["reversal-fast"], MODELS["reversal-fast"]
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    threads = torch.get_num_threads()
    views.attention_for(model, task, (3, 4, 5), (BOS, 5, 4, 3))
    views.output_distribution(model, task, (3, 4, 5), (BOS, 5, 4, 3))
    views.decode_both(model, task, (3, 4, 5), k=2)
    assert model.training and torch.get_num_threads() == threads
    assert not any(m._forward_hooks for m in model.modules() if isinstance(m, HookPoint))
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    model.eval()


def test_match_scores_find_the_planted_head():
    rng = np.random.default_rng(0)
    q, k = 5, 4
    expected = np.zeros((q, k))
    expected[np.arange(4), [3, 2, 1, 0]] = 1.0                          # last row expects nothing
    pats = rng.dirichlet(np.ones(k), size=(2, 3, q))                    # (L, H, Q, K) random rows
    pats[1, 2] = expected + np.eye(q, k, 0) * 0                         # a head that follows exactly...
    pats[1, 2, 4] = 1.0 / k                                             # ...with a free last row
    pats[0, 1] = 1.0 / k                                                # a uniform head
    scores = views.match_scores(pats, expected)
    assert scores.shape == (2, 3)
    assert scores[1, 2] == pytest.approx(1.0) and scores[0, 1] == pytest.approx(1 / k)
    assert views.best_head(scores)[:2] == (1, 2)
    assert np.isnan(views.match_scores(pats, np.zeros((q, k)))).all()
    assert views.best_head(np.full((2, 2), np.nan)) is None


def test_entropy_from_sharp_to_uniform():
    mask = np.tri(4, dtype=bool)
    real = np.ones(4, dtype=bool)
    uniform = mask / mask.sum(-1, keepdims=True)
    pats = np.stack([np.eye(4), uniform])[None]                         # (1, 2, 4, 4)
    ent = views.head_entropy(pats, real)
    assert ent[0, 0] == pytest.approx(0.0, abs=1e-9)
    assert ent[0, 1] == pytest.approx(views.uniform_entropy(mask, real))
    assert views.uniform_entropy(mask, real) == pytest.approx(np.mean(np.log([1, 2, 3, 4])))
    blank = views.masked_for_mosaic(pats, mask)
    assert np.isnan(blank[..., 0, 1]).all() and not np.isnan(blank[..., 1, 0]).any()


# -------------------------------------------------------------------------------------- outputs
def test_shipped_reversal_model_reverses_and_draws_the_anti_diagonal(shipped_reversal):
    model, task = shipped_reversal
    src, target = task.example("val", 0)
    written = views.greedy_output(model, task, src)
    assert written == (*target, EOS)
    tgt_in = views.decoder_input(model, task, src, teacher=False)
    assert tgt_in == (BOS, *target)                                     # it reads what it wrote
    view = views.attention_for(model, task, src, tgt_in)
    expected = views.reference_patterns(view, "cross")[views.EXPECTED]
    trained = views.best_head(views.match_scores(view.patterns["cross"], expected))
    fresh = views.attention_for(tiny(task), task, src, tgt_in)
    untrained = views.best_head(views.match_scores(fresh.patterns["cross"], expected))
    assert trained[2] > 0.5 and trained[2] > untrained[2] + 0.2
    probs = views.output_distribution(model, task, src, tgt_in)   # (T, V)
    assert list(probs.argmax(-1)) == [*target, EOS]
    assert views.row_entropy(probs).max() < 0.5 * math.log(len(task.vocab))
    out = views.decode_both(model, task, src, k=4)
    assert out.greedy == out.beam == tuple(target) and out.greedy_done and out.beam_done
    assert -1.0 < out.beam_logprob <= 0.0 and out.beam_logprob >= out.greedy_logprob - 1e-5


def test_beam_search_is_never_less_probable_than_greedy():
    task, model = TASKS["reversal-fast"], MODELS["reversal-fast"]
    for i in range(5):
        src, _ = task.example("val", i)
        out = views.decode_both(model, task, src, k=4)
        assert out.beam_logprob >= out.greedy_logprob - 1e-4 and out.k == 4


def test_classifier_and_lm_distributions():
    order = views.output_distribution(MODELS["order"], TASKS["order"], TASKS["order"].example("val", 0)[0])
    assert order.shape == (1, 2) and order.sum() == pytest.approx(1.0)
    text = views.read_input(TASKS["char-lm"], "the model")
    probs = views.output_distribution(MODELS["char-lm"], TASKS["char-lm"], text)
    assert probs.shape == (9, len(TASKS["char-lm"].vocab))
    assert views.solution(TASKS["char-lm"], views.read_input(TASKS["char-lm"], "zzqx")) == ()


def test_text_continuation_greedy_and_seeded_sampling():
    model, ids = MODELS["char-lm"], views.read_input(TASKS["char-lm"], "the ")
    greedy = views.continue_text(model, ids, 12)
    assert greedy == tuple(generate(model, torch.tensor([ids]), 12)[0].tolist())
    sampled = [views.continue_text(model, ids, 12, temperature=1.5, seed=s) for s in (1, 1, 2)]
    assert sampled[0] == sampled[1] != sampled[2] and len(sampled[0]) == 12
    assert PAD not in greedy and BOS not in greedy


def test_fingerprint_follows_the_weights():
    model = tiny(TASKS["reversal-fast"], seed=1)
    first = views.fingerprint(model)
    assert views.fingerprint(model) == first
    with torch.no_grad():
        model.output_proj.bias[0] += 0.01
    assert views.fingerprint(model) != first


@pytest.mark.parametrize("preset,text,words", [
    ("reversal-fast", "1 " + "9" * 5000, "5,000 characters"),   # int() would refuse it in Python's words
    ("order", "A B " + "3" * 5000, "5,000 characters"),
    ("order", "A 007 B", "distractors 1..6"),
    ("char-lm", "the " * 20, "80 characters, too long; the maximum is 32"),
])
def test_typed_input_errors_speak_the_apps_language(preset, text, words):
    with pytest.raises(ValueError) as err:
        views.read_input(make_task(preset), text)
    assert words in str(err.value) and "digits" not in str(err.value) and len(str(err.value)) < 200
