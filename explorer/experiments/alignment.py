"""Alignment heads: cross-attention of every decoder layer and head on 3 held-out reversal examples,
ranked by agreement with the alignment the task implies (chapter exercise 2.4).

Agreement of one head = the attention weight it puts on the source position that each output
copies, averaged over output positions (EOS excluded) and examples; 1/L is what a uniform head
scores. Head numbers mean nothing across seeds (seed 1's head 2 is unrelated to seed 0's), so the
table summarises per layer (best head, mean of heads) over seeds, and `extra["ranking"]` lists every
head of every seed; the figures show the first seed's model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from explorer.experiments._seq2seq import Seq2SeqBase, seq2seq_task, train_seq2seq
from explorer.experiments.base import Claim, Context, Experiment, Result, build_result, seed_major, whole
from explorer.experiments.charts import num, stat
from explorer.figures.attention import attention_mosaic
from explorer.figures.results import bar_with_error
from explorer.inspect import capture
from explorer.tasks import BOS

CLEAR = 0.5     # "clear alignment": most of a head's weight on the expected source position
BEST = "best head"
RANKING_COLUMNS = ["seed", "rank", "layer", "head", "agreement"]
ATTENTION_COLUMNS = ["example", "layer", "head", "q", "k", "value", "expected"]


@dataclass(frozen=True)
class AlignmentParams(Seq2SeqBase):
    examples: int = 3
    steps: int = 500

    def __post_init__(self) -> None:
        super().__post_init__()
        whole("examples", self.examples, 1, 20)


def cross_attention(model, task, index: int) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """(pattern (L, H, Q, K), expected (Q, K), query labels, key labels) of one validation example,
    the decoder reading the true target as in training."""
    src, tgt = task.example("val", index)
    model.eval()
    with torch.inference_mode(), capture(model, kinds=("cross",)) as cache:
        model(torch.tensor([src]), torch.tensor([[BOS] + tgt]))
    pattern = cache.stacked("cross")[:, 0].numpy()                          # (L, H, Q, K)
    q_labels = ["<bos>"] + task.tokens(tgt)
    return pattern, task.expected_cross_attention(src)[: len(q_labels)], q_labels, task.tokens(src)


def agreement(pattern: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """(L, H): mean weight on the expected key over the rows that have one."""
    rows = expected.sum(1) > 0
    return (pattern[:, :, rows] * expected[rows]).sum(-1).mean(-1)


def _unit(ctx: Context, p: AlignmentParams, seed: int):
    task = seq2seq_task(p, seed)
    model, _ = train_seq2seq(ctx, p, task, seed)
    seen = [cross_attention(model, task, i) for i in range(p.examples)]
    score = np.mean([agreement(pat, exp) for pat, exp, _, _ in seen], axis=0)  # (L, H)
    samples = [dict(condition=f"dec layer {li} (best head)", seed=seed, metric="agreement", value=float(row.max()))
               for li, row in enumerate(score)]
    samples += [dict(condition=f"dec layer {li} (mean of heads)", seed=seed, metric="agreement",
                     value=float(row.mean())) for li, row in enumerate(score)]
    samples.append(dict(condition=BEST, seed=seed, metric="agreement", value=float(score.max())))
    chance = float(np.mean([1 / len(k) for _, _, _, k in seen]))
    samples.append(dict(condition="uniform head (chance)", seed=seed, metric="agreement", value=chance))
    order = np.argsort(-score, axis=None, kind="stable")
    ranking = [dict(seed=seed, rank=r + 1, layer=int(i // score.shape[1]), head=int(i % score.shape[1]),
                    agreement=float(score.flat[i])) for r, i in enumerate(order)]
    cells, labels = [], []
    if seed == 0:  # the model the figures show
        for ex, (pat, exp, ql, kl) in enumerate(seen):
            li, hi, qi, ki = np.meshgrid(*(range(n) for n in pat.shape), indexing="ij")
            cells.append(pd.DataFrame(dict(example=ex, layer=li.ravel(), head=hi.ravel(), q=qi.ravel(),
                                           k=ki.ravel(), value=pat.ravel(),
                                           expected=np.broadcast_to(exp, pat.shape).ravel())))
            labels += [dict(example=ex, axis=axis, index=i, label=t)
                       for axis, toks in (("query", ql), ("key", kl)) for i, t in enumerate(toks)]
    return samples, ranking, cells, labels


def _measure(table) -> tuple[str, list[Claim]]:
    b, bs, _ = stat(table, BEST, "agreement")
    c = stat(table, "uniform head (chance)", "agreement")[0]
    return (f"the best-aligned head puts {num(b, bs, 2)} of its weight on the source position each output copies "
            f"(a uniform head: {c:.2f})",
            [Claim(f"some head aligns clearly, with more than {CLEAR:.0%} of its weight on the copied position",
                   "agreement", BEST, threshold=CLEAR, unit="%")])


def run(p: AlignmentParams, ctx: Context) -> Result:
    done = ctx.collect(seed_major(p.seeds, ("reversal",)), lambda u: _unit(ctx, p, u[0]),
                       lambda u: f"seed {u[0]}")
    ranking = pd.DataFrame([r for _, (_, rk, _, _) in done for r in rk], columns=RANKING_COLUMNS)
    cells = [c for _, (_, _, cs, _) in done for c in cs]
    attention = pd.concat(cells, ignore_index=True) if cells else pd.DataFrame(columns=ATTENTION_COLUMNS)
    labels = pd.DataFrame([x for _, (_, _, _, ls) in done for x in ls], columns=["example", "axis", "index", "label"])
    outputs = [(u, (s, [])) for u, (s, _, _, _) in done]
    predictions = {(BEST, "agreement"): (1.0, "clear: a head draws the anti-diagonal")}
    return build_result(NAME, p, outputs, predictions, _measure, ctx, with_curves=False,
                        extra={"ranking": ranking, "attention": attention, "labels": labels})


def draw(r: Result) -> list:
    out = []
    att, labels = r.extra["attention"], r.extra["labels"]
    for ex in sorted(att["example"].unique()):
        a = att[att["example"] == ex]
        L, H, Q, K = (int(a[c].max()) + 1 for c in ("layer", "head", "q", "k"))
        pattern = np.full((L, H, Q, K), np.nan)
        pattern[a["layer"], a["head"], a["q"], a["k"]] = a["value"]
        lab = labels[labels["example"] == ex].sort_values("index")
        ql, kl = list(lab[lab["axis"] == "query"]["label"]), list(lab[lab["axis"] == "key"]["label"])
        out.append(attention_mosaic(pattern, ql, kl, f"Held-out example {ex + 1}: {' '.join(kl)} "
                                    "(rows: decoder layers, columns: heads)",
                                    [f"dec {i}" for i in range(L)]))
    first = r.extra["ranking"]
    first = first[first["seed"] == first["seed"].min()]
    names = [f"dec {la} H{h}" for la, h in zip(first["layer"], first["head"])]
    out.append(bar_with_error(names, first["agreement"], np.zeros(len(first)),
                              "Heads ranked by agreement with the expected alignment (first seed)",
                              "agreement"))
    rows = r.table[r.table["condition"].str.contains("best head")]
    out.append(bar_with_error(list(rows["condition"]), rows["mean"], rows["std"],
                              "Best head per layer, over seeds", "agreement"))
    return out


NAME = "alignment-heads"
EXPERIMENT = Experiment(
    name=NAME, title="Which heads align input and output",
    question="In a model trained to reverse sequences, which decoder layers and heads attend to the source "
             "token they are about to copy?",
    prediction="Cross-attention shows a clear input-output alignment (on reversal, the anti-diagonal) in some "
               "heads and layers, not necessarily all.",
    source="chapter exercise 2.4",
    params=AlignmentParams, tiny=dataclasses.replace(AlignmentParams(), steps=20, seeds=1, eval_every=0,
                                                     eval_examples=20, d_model=16, n_layers=1),
    run=run, figures=draw)
