"""The shipped models of issue 38, measured here with plain torch on inputs built here (neither the task's
data nor explorer's analysis): induction forms an induction head, induction-1l does not, modular-add groks."""

import torch

from explorer import inspect
from explorer.store.checkpoints import load_pretrained

N_SPECIALS = 3   # <pad> <bos> <eos>, then the task's tokens


def _repeated_halves(n_symbols: int, half: int, rows: int, seed: int = 123) -> torch.Tensor:
    """(rows, 2 half) windows: `half` distinct random tokens, then the same again."""
    g = torch.Generator().manual_seed(seed)
    first = torch.argsort(torch.rand(rows, n_symbols, generator=g), 1)[:, :half] + N_SPECIALS
    return torch.cat([first, first], 1)


def _induction_measures(name: str) -> tuple[float, float]:
    """(the best head's induction score, next-token accuracy on the repeated half) over halves of 6..12 tokens.
    The score: the attention a repeated token pays to the token after its earlier occurrence."""
    model, meta = load_pretrained(name)
    task = meta["task"]
    scores, hits, count = [], 0, 0
    for half in range(task["min_len"], task["max_len"] + 1):
        window = _repeated_halves(task["n_symbols"], half, 64, seed=half)
        x, y = window[:, :-1], window[:, 1:]                                        # (B, 2 half - 1)
        with torch.no_grad(), inspect.capture(model, kinds=("dec_self",)) as cache:
            logits = model(x)                                                       # (B, T, V)
        pattern = cache.stacked("dec_self")                                         # (L, B, H, T, T)
        q = torch.arange(half, 2 * half - 1)                                        # repeated tokens but the first
        scores.append(pattern[:, :, :, q, q - half + 1].mean((1, 3)))               # (L, H)
        hits += int((logits[:, q].argmax(-1) == y[:, q]).sum())
        count += y[:, q].numel()
    return float(torch.stack(scores).mean(0).max()), hits / count


def test_two_layers_form_an_induction_head_and_predict_the_repeated_half():
    score, acc = _induction_measures("induction")
    assert score >= 0.4 and acc >= 0.9, (score, acc)


def test_one_layer_forms_no_induction_head():
    score, acc = _induction_measures("induction-1l")
    assert score < 0.4 and acc < 0.9, (score, acc)


def test_modular_add_answers_all_pairs():
    model, meta = load_pretrained("modular-add")
    p = meta["task"]["n_symbols"]
    a, b = torch.arange(p).repeat_interleave(p), torch.arange(p).repeat(p)        # all p² pairs
    plus, eq = N_SPECIALS + p, N_SPECIALS + p + 1                                   # "+" and "=" follow the integers
    x = torch.stack([a + N_SPECIALS, torch.full_like(a, plus), b + N_SPECIALS, torch.full_like(a, eq)], 1)
    with torch.no_grad():
        answer = model(x)[:, -1].argmax(-1) - N_SPECIALS                            # (p²,)
    assert float((answer == (a + b) % p).float().mean()) >= 0.98
