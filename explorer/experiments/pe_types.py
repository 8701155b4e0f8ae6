"""Positional encoding types on reversal: sinusoidal, learned, RoPE, ALiBi and none, including length
generalisation: train on lengths min_len..N, test on N+1..2N (chapter §2.2; ALiBi's "Train Short, Test
Long", Press et al. 2022, makes for ALiBi the claim the chapter makes for sinusoids).

ALiBi biases self-attention only (as in the paper), so in an encoder-decoder the decoder reads the encoder's
output as a set, and the encoder's symmetric bias gives a reversed source the reversed memory: the model
cannot tell a sequence from its reverse (tests/unit/test_alibi.py), and reversal is out of its reach.

Measured at the default budget (3 seeds x 400 steps; bench/README.md, "ALiBi and the seeds' remaining claims"):
exact match at lengths 4-8 sinusoidal 99.7%, learned 98.2%, RoPE 60.5%, ALiBi 2.3%, none 1.7%; at 9-16 none of
them passes 2.3% (token accuracy there: RoPE 58.8%, the others 28-38%). `lm-length` tests ALiBi's claim where
it applies, in a language model.

Every type gets the same model, data and steps. The longer test sequences come from the same task
with another seed; the model's position table (learned PE) is sized for them but never trained there.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from explorer.config import POS_ENCODINGS
from explorer.evaluation import evaluate
from explorer.experiments._seq2seq import Seq2SeqBase, seq2seq_task, train_seq2seq
from explorer.experiments.base import Claim, Context, Experiment, Result, build_result, seed_major, whole
from explorer.experiments.charts import bars, curve_bands, pct, stat
from explorer.figures.curves import line_chart

EXACT_IN, EXACT_OUT, TOKEN_OUT = "exact (trained lengths)", "exact (longer)", "token accuracy (longer)"
LEARNED_MIN, GENERALISES_MIN, FAILS_MAX = 0.9, 0.5, 0.1
OOD_SEED = 1000


@dataclass(frozen=True)
class PETypesParams(Seq2SeqBase):
    encodings: tuple[str, ...] = POS_ENCODINGS
    min_len: int = 4
    max_len: int = 8     # N: trained on min_len..N, tested on N+1..2N as well
    seeds: int = 3       # the fewest that decide a claim (evidence.MIN_SEEDS); five encodings: ~3 minutes
    eval_every: int = 100

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.encodings or any(e not in POS_ENCODINGS for e in self.encodings):
            raise ValueError(f"encodings={self.encodings!r} must list some of {', '.join(POS_ENCODINGS)}")
        whole("min_len", self.min_len, 1, 128)
        whole("max_len", self.max_len, self.min_len, 128)
        if "rope" in self.encodings and (self.d_model // self.n_heads) % 2:
            raise ValueError(f"RoPE needs an even head dimension; d_model={self.d_model} / n_heads={self.n_heads} "
                             "is odd")


def _unit(ctx: Context, p: PETypesParams, seed: int, pe: str):
    n = p.max_len
    task = seq2seq_task(p, seed, min_len=p.min_len, max_len=n)
    longer = seq2seq_task(p, seed + OOD_SEED, min_len=n + 1, max_len=2 * n, n_train=1, n_val=p.eval_examples)
    model, history = train_seq2seq(ctx, p, task, seed, max_len=2 * n + 2, pos_encoding=pe)
    inside, outside = evaluate(model, task, p.eval_examples), evaluate(model, longer, p.eval_examples)
    samples = [dict(condition=pe, seed=seed, metric=m, value=v) for m, v in (
        (EXACT_IN, inside["val_exact"]), (EXACT_OUT, outside["val_exact"]), (TOKEN_OUT, outside["val_token_acc"]))]
    curves = [dict(condition=pe, seed=seed, step=r.step, metric="val_exact", value=r.val_exact)
              for r in history if r.val_exact is not None]
    return samples, curves


def _claims(p: PETypesParams) -> list[Claim]:
    """The chapter's three checkable claims, for the encodings asked for."""
    n = p.max_len
    claims = {"none": Claim(f"without positions reversal fails, with exact match below {FAILS_MAX:.0%}", EXACT_IN,
                            "none", above=False, threshold=FAILS_MAX, unit="%"),
              "sinusoidal": Claim(f"sinusoidal PE generalises to unseen lengths {n + 1}-{2 * n}, with exact match "
                                  f"above {GENERALISES_MIN:.0%}", EXACT_OUT, "sinusoidal", threshold=GENERALISES_MIN,
                                  unit="%"),
              "learned": Claim(f"learned PE cannot, with exact match on lengths {n + 1}-{2 * n} below {FAILS_MAX:.0%}",
                               EXACT_OUT, "learned", above=False, threshold=FAILS_MAX, unit="%"),
              "alibi": Claim(f"ALiBi extrapolates (Press et al., 2022) to unseen lengths {n + 1}-{2 * n}, with exact "
                             f"match above {GENERALISES_MIN:.0%}", EXACT_OUT, "alibi", threshold=GENERALISES_MIN,
                             unit="%")}
    return [claims[e] for e in claims if e in p.encodings]


def _measure(p: PETypesParams):
    n = p.max_len

    def measure(table) -> tuple[str, list[Claim]]:
        have = [e for e in p.encodings if stat(table, e, EXACT_IN)[2]]

        def row(metric):
            return ", ".join(f"{e} {pct(*stat(table, e, metric)[:2])}" for e in have)
        text = (f"Exact match at trained lengths {p.min_len}-{n}: {row(EXACT_IN)}. On longer ones ({n + 1}-{2 * n}): "
                f"exact {row(EXACT_OUT)}; tokens {row(TOKEN_OUT)}")
        slow = [e for e in have if e != "none" and stat(table, e, EXACT_IN)[0] < LEARNED_MIN]
        if slow:
            text += f". Below {LEARNED_MIN:.0%} at trained lengths after {p.steps} steps: {', '.join(slow)}"
        if "alibi" in have:
            text += (". ALiBi cannot reverse at any length in an encoder-decoder: its encoder bias -m|i - j| is "
                     "mirror-symmetric and cross-attention has none, so a source and its reverse give the same "
                     "output; the paper's claim is about decoder-only language models")
        return text, _claims(p)
    return measure


def run(p: PETypesParams, ctx: Context) -> Result:
    done = ctx.collect(seed_major(p.seeds, p.encodings), lambda u: _unit(ctx, p, *u),
                       lambda u: f"seed {u[0]}, {u[1]}")
    predictions = {("none", EXACT_IN): (0.0, "fails: the encoder cannot tell first from last"),
                   ("sinusoidal", EXACT_OUT): (None, "generalises to unseen lengths"),
                   ("learned", EXACT_OUT): (0.0, "cannot: positions beyond training are untrained"),
                   ("rope", EXACT_OUT): (None, "relative positions: principled extrapolation"),
                   ("alibi", EXACT_OUT): (None, "train short, test long: extrapolates (Press et al.)")}
    for e in ("sinusoidal", "learned", "rope", "alibi"):
        predictions[(e, EXACT_IN)] = (1.0, "learns the trained lengths")
    predictions = {k: v for k, v in predictions.items() if k[0] in p.encodings}
    return build_result(NAME, p, done, predictions, _measure(p), ctx)


def draw(r: Result) -> list:
    series, bands = curve_bands(r.curves, "val_exact")
    n = r.params["max_len"]
    return [bars(r.table, EXACT_IN, f"Exact match at trained lengths ({r.params['min_len']}-{n})",
                 "exact match (%)", 100.0),
            bars(r.table, EXACT_OUT, f"Exact match on longer sequences ({n + 1}-{2 * n})", "exact match (%)", 100.0),
            bars(r.table, TOKEN_OUT, f"Token accuracy on longer sequences ({n + 1}-{2 * n}, teacher forced)",
                 "token accuracy (%)", 100.0),
            line_chart(series, "Validation exact match while training (trained lengths)", "step",
                       "exact match", bands=bands)]


NAME = "pe-types"
EXPERIMENT = Experiment(
    name=NAME, title="Sinusoidal, learned, RoPE, ALiBi or no positional encoding",
    question="How do the positional encodings compare on reversal, and which of them still work on "
             "sequences longer than any seen in training?",
    prediction="Without positions reversal is impossible; the four encodings all learn it. Sinusoidal PE "
               "generalises to unseen lengths, learned PE cannot, RoPE extrapolates on principle, and ALiBi "
               "trains short and tests long.",
    source="chapter §2.2 (sinusoidal, learned, RoPE) and its summary; Press, Smith & Lewis (2022) for ALiBi",
    params=PETypesParams, tiny=dataclasses.replace(PETypesParams(), steps=20, seeds=1, eval_every=0,
                                                   eval_examples=10, d_model=16, n_layers=1),
    run=run, figures=draw)
