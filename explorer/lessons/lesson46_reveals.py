"""The notebook lesson's answers from its experiments (pe-order, heads, length, pre-post-ln). Each reveal
reads a Result's table, evidence and figures; a choice is marked right only where a 95% interval over
seeds decides it, and nothing is marked when the result's verdict is undecided (`holds` None)."""

from __future__ import annotations

import math

from explorer.analysis.evidence import INCONCLUSIVE, Evidence, one_sample
from explorer.experiments import EXPERIMENTS, Result
from explorer.experiments.charts import pct, stat
from explorer.experiments.norm import DIVERGED, LOSS, MARGIN, POST, PRE, RATIO_P
from explorer.lessons.base import Reveal, View, result_figure

CHANCE, BETWEEN, LEARNED = "about 50%: chance", "between 65% and 90%", "above 90%"
ORDER_CHOICES = (LEARNED, BETWEEN, CHANCE)   # from the top band down: the right one's place says nothing
CHANCE_BELOW, LEARNED_ABOVE = 0.65, 0.90   # the bands of ORDER_CHOICES
HEADS_CHOICES = ("4 heads, by more than 2 points", "about the same (within 2 points)", "1 head, by more than 2 points")
SAME = 0.02                                # "about the same": the whole interval of the difference within ±2 points
HOLDS, DROPS, FALLS = "yes: still near 100%", "it drops, but stays well above chance", "it falls to chance, about 50%"
LENGTH_CHOICES = (HOLDS, DROPS, FALLS)
NORM_CHOICES = ("Pre-LN", "Post-LN", "no clear difference")


def _evidence(result: Result, *conditions: str, metric: str | None = None) -> Evidence | None:
    return next((e for e in result.evidence if e.conditions == conditions and metric in (None, e.metric)), None)


def _figure(result: Result, index: int = 0, starts: str = "") -> View:
    figs = [f for f in result.figures if (f.layout.title.text or "").startswith(starts)] if starts else []
    figs = figs or list(result.figures[index:index + 1])
    seeds = len(result.samples["seed"].unique())
    return View(result_figure(figs[0]) if figs else None, f"{EXPERIMENTS[result.name].title}: {seeds} seeds, "
                                                          f"{result.seconds:.0f} s to compute")


def _interval(e: Evidence | None, scale: float = 100.0, unit: str = "%", digits: int = 1) -> str:
    if e is None or math.isnan(e.interval[0]):
        return "no interval (too few seeds)"
    return f"95% interval [{scale * e.interval[0]:.{digits}f}, {scale * e.interval[1]:.{digits}f}]{unit}"


def _band(low: float, high: float, edges: tuple[float, float]) -> tuple[int, ...]:
    """Which of three bands (below edges[0], between, above edges[1]) an interval lies wholly in."""
    if math.isnan(low) or math.isnan(high):
        return ()
    if high < edges[0]:
        return (0,)
    if low > edges[1]:
        return (2,)
    if low >= edges[0] and high <= edges[1]:
        return (1,)
    return ()


def _decided(result: Result, picked: tuple[int, ...]) -> tuple[int, ...]:
    # "no meaningful difference" decides too (heads' claim has a margin): only an inconclusive verdict marks none
    return () if result.outcome == INCONCLUSIVE or result.partial else picked


def _undecided_note(correct: tuple[int, ...]) -> str:
    return "" if correct else " These seeds do not decide between the choices, so none is marked."


# --------------------------------------------------------------------------- pe-order
def order_accuracy(result: Result) -> Reveal:
    without, with_ = _evidence(result, "without PE"), _evidence(result, "with PE")
    w = stat(result.table, "with PE", "accuracy")
    o = stat(result.table, "without PE", "accuracy")
    low, high = without.interval if without is not None else (math.nan, math.nan)
    bands = (CHANCE, BETWEEN, LEARNED)   # _band's 0, 1, 2
    correct = tuple(ORDER_CHOICES.index(bands[i]) for i in _decided(result, _band(low, high, (CHANCE_BELOW,
                                                                                           LEARNED_ABOVE))))
    return Reveal(
        f"Over {o[2]} seeds, each with its own data and initial weights: **without PE {pct(o[0], o[1])}** "
        f"({_interval(without)}), with PE {pct(w[0], w[1])} ({_interval(with_)}). The 150 test sequences are "
        "half \"A first\", half \"B first\": without positions the model can only guess."
        + _undecided_note(correct),
        correct=correct,
        view=_figure(result), verdict=result.verdict)


# --------------------------------------------------------------------------- heads
def heads_accuracy(result: Result) -> Reveal:
    e = _evidence(result, "4 heads", "1 head")
    four, one = stat(result.table, "4 heads", "accuracy"), stat(result.table, "1 head", "accuracy")
    low, high = e.interval if e is not None else (math.nan, math.nan)
    # bands of the negated difference (1 head - 4 heads), so that band 0 is "4 heads better"
    correct = _decided(result, _band(-high, -low, (-SAME, SAME)))
    ceiling = " Both sit at the ceiling: at T=8 one head already solves the task, so this says the task needs " \
              "no more than one head, not that heads never help." if min(four[0], one[0]) > 0.97 else ""
    diff = "" if e is None else (f" The difference, 4 heads minus 1: {100 * e.estimate:.1f} points, "
                                 f"{_interval(e, unit=' points')}.")
    return Reveal(f"Over {four[2]} seeds: **4 heads {pct(four[0], four[1])}, 1 head {pct(one[0], one[1])}**.{diff}"
                  f"{ceiling}" + _undecided_note(correct),
                  correct=correct, view=_figure(result), verdict=result.verdict)


# --------------------------------------------------------------------------- length
def length_accuracy(result: Result) -> Reveal:
    short, long_ = stat(result.table, "T=8", "accuracy"), stat(result.table, "T=32", "accuracy")
    values = result.samples.loc[(result.samples["condition"] == "T=32") & (result.samples["metric"] == "accuracy"),
                                "value"]
    ci = one_sample(values)
    e = _evidence(result, "T=8", "T=32")
    # what T=32's interval excludes, decided once: the sentence and the marks both read it
    ruled = () if math.isnan(ci.low) or result.partial else tuple(
        LENGTH_CHOICES.index(c) for c, out in ((FALLS, ci.low > CHANCE_BELOW), (HOLDS, ci.high < 0.97)) if out)
    if math.isnan(ci.low):
        reach = "Too few seeds for an interval."
    else:
        excluded = " and ".join(f"\"{LENGTH_CHOICES[i]}\"" for i in ruled)
        reach = (f"T=32's 95% interval is [{100 * ci.low:.1f}, {100 * min(ci.high, 1.0):.1f}]%"
                 + (f": that rules out {excluded}" if ruled else "") + ".")
    drop = "" if e is None else f" The cost of T=32, {100 * e.estimate:.1f} points, has {_interval(e, unit=' points')}."
    # both ends excluded leaves one choice standing: then it is the answer
    correct = tuple(i for i in range(len(LENGTH_CHOICES)) if i not in ruled) if len(ruled) == 2 else ()
    left = (f"what is left is \"{LENGTH_CHOICES[correct[0]]}\"" if correct else
            "it decides nothing between the others, so no choice is marked right" if ruled else "no choice is marked")
    return Reveal(
        f"Over {long_[2]} seeds: **T=8 {pct(short[0], short[1])}, T=32 {pct(long_[0], long_[1])}**. {reach}{drop} "
        f"Single T=32 runs ended between {100 * values.min():.0f}% and {100 * values.max():.0f}%, trained on the "
        "same 400 examples for 992 ordered pairs of places instead of 56. The notebook asks rather than claims, "
        f"and the experiment reports the difference without deciding it: {left}.",
        correct=correct, ruled_out=ruled, view=_figure(result), verdict=result.verdict)


# --------------------------------------------------------------------------- pre-post-ln
def norm_stability(result: Result) -> Reveal:
    loss = _evidence(result, POST, PRE, metric=LOSS)
    pre, post = stat(result.table, PRE, "final accuracy"), stat(result.table, POST, "final accuracy")
    lp, lq = stat(result.table, PRE, LOSS)[0], stat(result.table, POST, LOSS)[0]
    low, high = loss.interval if loss is not None else (math.nan, math.nan)
    decided = loss is not None and loss.holds is not None
    # Post - Pre loss: above the margin means Pre-LN trains better, below minus the margin Post-LN does
    picked = () if not decided else (0,) if low > MARGIN else (1,) if high < -MARGIN else \
        (2,) if -MARGIN < low and high < MARGIN else ()
    correct = () if result.partial or not decided else picked
    broke = stat(result.table, POST, DIVERGED)[0]
    stuck = (f" A final loss of {lq:.3f} is ln 2, a coin flip: Post-LN did not blow up (no run diverged), it never "
             "started learning." if abs(lq - math.log(2)) < 0.01 and broke == 0 else "")
    init = _evidence(result, POST, PRE, metric=RATIO_P)
    if init is not None and init.holds is None:
        stuck += (" The experiment's other part, how even the gradients are across depth at initialisation, is "
                  "not decided by these seeds (see the verdict); the question is about training only.")
    return Reveal(
        f"{result.params.get('train_layers', 10)} blocks, lr 0.01, no warmup, over {pre[2]} seeds: **Pre-LN "
        f"{pct(pre[0], pre[1])}, Post-LN {pct(post[0], post[1])}** test accuracy; final training loss {lp:.3f} "
        f"against {lq:.3f} (Post − Pre {_interval(loss, 1.0, ' nats', 3)}).{stuck} The usual explanation: in Post-LN "
        "every gradient on its way down passes through each block's LayerNorm, while Pre-LN's residual path runs "
        "untouched from the loss to the first block." + _undecided_note(correct),
        correct=correct, view=_figure(result, 3, "Every run's training loss"), verdict=result.verdict)


__all__ = ["ORDER_CHOICES", "HEADS_CHOICES", "LENGTH_CHOICES", "NORM_CHOICES", "order_accuracy", "heads_accuracy",
           "length_accuracy", "norm_stability"]
