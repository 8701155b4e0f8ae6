"""Decoding: greedy vs beam search (k=4) on reversal, exact match of each (the comparison of chapter
exercise 2.5, on our task). Both decoders run on the same held-out rows at every evaluation step, so
the curves show where beam search helps: early, while the model is unsure, or not at all.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from explorer.decoding import beam_search, greedy, sequence_logprob
from explorer.experiments._seq2seq import Seq2SeqBase, exact_match, seq2seq_task, train_seq2seq, val_rows
from explorer.experiments.base import Claim, Context, Experiment, Result, build_result, seed_major, whole
from explorer.experiments.charts import bars, curve_bands, num, pct, stat
from explorer.figures.curves import line_chart

GREEDY = "greedy"
EXACT, LOGP = "exact match", "log-probability"
GAIN = "beam minus greedy exact match, largest during training"
TOLERANCE = 0.01
LOGP_TOLERANCE = 1e-4   # nats: rounding, not search


@dataclass(frozen=True)
class DecodingParams(Seq2SeqBase):
    takes_own_data: ClassVar[bool] = True   # task="pairs": a teacher's TSV
    beam_k: int = 4
    eval_examples: int = 200
    steps: int = 300

    def __post_init__(self) -> None:
        super().__post_init__()
        whole("beam_k", self.beam_k, 2, 32)


def compare(model, batch, k: int) -> dict:
    """Exact-match rate and mean total log-probability of the greedy and the beam outputs."""
    width = batch.tgt_out.size(1)
    g = greedy(model, batch.src, max_len=width)
    b, _ = beam_search(model, batch.src, k=k, max_len=width)
    return {"greedy_exact": float(exact_match(g, batch.tgt_out).float().mean()),
            "beam_exact": float(exact_match(b, batch.tgt_out).float().mean()),
            "greedy_logp": float(sequence_logprob(model, batch.src, g).mean()),
            "beam_logp": float(sequence_logprob(model, batch.src, b).mean())}


def _unit(ctx: Context, p: DecodingParams, seed: int, beam: str):
    task = seq2seq_task(p, seed)
    batch = val_rows(task, p.eval_examples)
    curves, last = [], {}

    def measure(model, step):
        last.update(compare(model, batch, p.beam_k))
        for cond, key in ((GREEDY, "greedy"), (beam, "beam")):
            curves.append(dict(condition=cond, seed=seed, step=step, metric=EXACT, value=last[f"{key}_exact"]))

    every = p.eval_every or p.steps

    def each(model, rec):
        if rec.step % every == 0 or rec.step == p.steps:
            measure(model, rec.step)

    model, _ = train_seq2seq(ctx, p, task, seed, each=each)
    if not last:   # a diverged run never reached an evaluation step
        measure(model, p.steps)
    samples = [dict(condition=cond, seed=seed, metric=m, value=last[f"{key}_{short}"])
               for cond, key in ((GREEDY, "greedy"), (beam, "beam")) for m, short in ((EXACT, "exact"), (LOGP, "logp"))]
    gaps = [b["value"] - g["value"] for g, b in zip(curves[::2], curves[1::2])]   # (greedy, beam) per evaluation
    samples.append(dict(condition=beam, seed=seed, metric=GAIN, value=max(gaps)))
    return samples, curves


def _measure(p: DecodingParams):
    beam = f"beam k={p.beam_k}"

    def measure(table) -> tuple[str, list[Claim]]:
        (g, gs, _), (b, bs, _) = stat(table, GREEDY, EXACT), stat(table, beam, EXACT)
        (gl, gls, _), (bl, bls, _) = stat(table, GREEDY, LOGP), stat(table, beam, LOGP)
        gain, gain_s, _ = stat(table, beam, GAIN)
        text = (f"exact match after {p.steps} steps: greedy {pct(g, gs)}, {beam} {pct(b, bs)}; log-probability of "
                f"the output: greedy {num(gl, gls)}, beam {num(bl, bls)}; beam's largest lead during training "
                f"{100 * gain:+.1f} ± {100 * gain_s:.1f} points")
        # both decoders read the same seed's model: the per-seed differences are what is tested
        return text, [
            Claim(f"{beam}'s exact match is at least greedy's, within {100 * TOLERANCE:.0f} point", EXACT, beam,
                  GREEDY, threshold=-TOLERANCE, paired=True, unit="%"),
            Claim(f"{beam}'s outputs are at least as probable as greedy's", LOGP, beam, GREEDY,
                  threshold=-LOGP_TOLERANCE, paired=True, unit="nats")]
    return measure


def run(p: DecodingParams, ctx: Context) -> Result:
    beam = f"beam k={p.beam_k}"
    done = ctx.collect(seed_major(p.seeds, (beam,)), lambda u: _unit(ctx, p, *u), lambda u: f"seed {u[0]}")
    predictions = {(beam, EXACT): (None, "at least greedy's"),
                   (beam, LOGP): (None, "at least greedy's: it searches more")}
    return build_result(NAME, p, done, predictions, _measure(p), ctx)


def draw(r: Result) -> list:
    series, bands = curve_bands(r.curves, EXACT)
    return [bars(r.table, EXACT, "Exact match on held-out sequences", "exact match (%)", 100.0),
            line_chart(series, "Exact match while training: greedy vs beam (mean ± std over seeds)", "step",
                       "exact match", bands=bands),
            bars(r.table, LOGP, "Total log-probability of the decoded sequence (higher = more probable)",
                 "log-probability")]


NAME = "decoding"
EXPERIMENT = Experiment(
    name=NAME, title="Greedy decoding vs beam search",
    question="Does beam search (k=4) decode reversals more accurately than greedy decoding?",
    prediction="Beam search keeps several candidates, so it finds outputs at least as probable as greedy's and "
               "matches or beats its exact match; the gap shrinks as the model grows confident.",
    source="chapter exercise 2.5 (greedy vs beam k=4), on our reversal task",
    params=DecodingParams, tiny=dataclasses.replace(DecodingParams(), steps=20, seeds=1, eval_every=10,
                                                    eval_examples=20, d_model=16, n_layers=1),
    run=run, figures=draw)
