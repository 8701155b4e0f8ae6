"""When a difference over seeds decides a claim: the claim, its evidence, and the one verdict rule.

A seed's claim becomes a `Claim`: one metric of one condition, or of one condition minus another,
is above (or below) a threshold (0 for "larger than"), perhaps with a `margin` (in the claim's own
unit) under which a difference does not matter. `weigh(claim, samples)` measures it over the seeds in
a samples frame (condition, seed, metric, value) and returns `Evidence`: the test, the estimate, its
95% confidence interval, n per condition, the degrees of freedom, and its `outcome`:

    holds           at least MIN_SEEDS seeds per condition and the interval lies on the claimed side
    does not hold   at least MIN_SEEDS seeds per condition and the interval lies on the other side
    equivalent      neither, and the claim has a margin that the two one-sided tests (TOST) place the
                    difference within: its 90% interval lies inside (-margin, +margin); "no meaningful
                    difference"
    inconclusive    otherwise, with the reason: too few seeds, the interval spans the threshold (and,
                    with a margin, reaches beyond it), the run stopped, or the seed asks an open question
                    (`Claim.open`: measured, never decided)

`holds` is True, False or None (None for both "equivalent" and "inconclusive": neither confirms nor refutes
the direction claimed). `verdict(claims, samples, stopped)` weighs every claim and combines them: one
that fails makes it "does not hold", all holding "holds", all holding or equivalent (one at least)
"equivalent", else "inconclusive". Every experiment's verdict goes through it.

Tests. Two conditions trained separately: Welch's t (unequal variances, Welch-Satterthwaite degrees
of freedom). One condition against a number: the one-sample t. Two numbers measured on the same
seed's model (greedy and beam decoding of one model): the one-sample t of the per-seed differences
("paired t"). The distributions, intervals and TOST live in explorer.analysis.intervals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from explorer.analysis.intervals import (
    ALPHA,
    LEVEL,
    Equivalence,
    Interval,
    beta_regularized,
    one_sample,
    t_cdf,
    t_quantile,
    tost,
    welch,
    welch_df,
)

MIN_SEEDS = 3      # fewer seeds per compared condition never decide a claim
HOLDS, FAILS, EQUIVALENT, INCONCLUSIVE = "holds", "does not hold", "equivalent", "inconclusive"
OUTCOMES = (HOLDS, FAILS, EQUIVALENT, INCONCLUSIVE)

WELCH, ONE_SAMPLE, PAIRED = "Welch's t", "one-sample t", "paired t"
OPEN = "the seed asks rather than claims"   # the reason of an open claim's evidence


# ---------------------------------------------------------------------------------------------
# Claims, evidence and the verdict
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Claim:
    """What a seed claims, as a test: `metric` of `condition` (minus `versus`'s, if given) lies
    above (`above`) or below `threshold`. `says` is the claim in a teacher's words ("with PE the
    accuracy is above 90%"); `unit` "%" marks a share (0..1; shown as a percentage, its interval cut
    to 0..100%, or to +-100 points for a difference), any other text follows the numbers.
    `paired`: `versus` was measured on the same seed's model, so the per-seed differences are tested.
    `open`: the seed asks rather than claims; the interval is reported, nothing is decided.
    `margin` (a difference only, in the claim's unit: a share for "%", 0.02 = 2 points): the smallest
    difference that matters; an undecided claim whose difference TOST places within +-margin concludes
    "no meaningful difference"."""

    says: str
    metric: str
    condition: str
    versus: str | None = None
    above: bool = True
    threshold: float = 0.0
    paired: bool = False
    unit: str = ""
    open: bool = False
    margin: float | None = None

    def __post_init__(self) -> None:
        if self.margin is None:
            return
        if self.versus is None:
            raise ValueError(f"claim {self.says!r}: a margin needs two conditions (versus=...) to compare")
        if isinstance(self.margin, bool) or not isinstance(self.margin, (int, float)) or not (
                math.isfinite(self.margin) and self.margin > 0):
            raise ValueError(f"claim {self.says!r}: margin={self.margin!r} must be a number > 0 in the claim's unit")


@dataclass(frozen=True)
class Evidence:
    """A claim measured over seeds. `estimate` is the difference of means (condition - versus) or
    the mean; `interval` its 95% confidence interval (NaN when n < 2); `n` the seeds per condition
    (pairs, for a paired test); `holds` True/False/None and, when None, the `reason`. With a margin:
    `margin`, TOST's `equivalence_p` (the larger one-sided p) and its 90% `equivalence_interval`;
    `equivalent` when the outcome is "no meaningful difference"."""

    test: str
    claim: str
    metric: str
    conditions: tuple[str, ...]
    estimate: float
    interval: tuple[float, float]
    threshold: float
    above: bool
    n: tuple[int, ...]
    df: float
    holds: bool | None
    reason: str = ""
    unit: str = ""
    level: float = LEVEL
    margin: float | None = None
    equivalence_p: float = math.nan
    equivalence_interval: tuple[float, float] = (math.nan, math.nan)
    equivalent: bool = False

    @property
    def outcome(self) -> str:
        """HOLDS, FAILS, EQUIVALENT or INCONCLUSIVE (an open question is inconclusive)."""
        if self.holds is not None:
            return HOLDS if self.holds else FAILS
        return EQUIVALENT if self.equivalent else INCONCLUSIVE

    @property
    def within_margin(self) -> bool:
        """TOST places the difference within +-margin (whatever the outcome: a decided claim may be tiny)."""
        return self.margin is not None and self.equivalence_p < ALPHA

    @property
    def difference(self) -> bool:
        """The estimate is a difference of two conditions (Welch or paired), not one condition's mean."""
        return len(self.conditions) == 2

    def to_json(self) -> dict:
        def clean(x):
            return None if isinstance(x, float) and not math.isfinite(x) else x
        return {"test": self.test, "claim": self.claim, "metric": self.metric, "conditions": list(self.conditions),
                "estimate": clean(self.estimate), "interval": [clean(self.interval[0]), clean(self.interval[1])],
                "threshold": self.threshold, "direction": ">" if self.above else "<", "n": list(self.n),
                "df": clean(self.df), "level": self.level, "holds": self.holds, "reason": self.reason,
                "unit": self.unit, "outcome": self.outcome, "margin": self.margin,
                "equivalence_p": clean(self.equivalence_p),
                "equivalence_interval": [clean(self.equivalence_interval[0]), clean(self.equivalence_interval[1])],
                "equivalent": self.equivalent}

    @classmethod
    def from_json(cls, d: dict) -> Evidence:
        def num(x):
            return math.nan if x is None else float(x)
        return cls(test=d["test"], claim=d["claim"], metric=d["metric"], conditions=tuple(d["conditions"]),
                   estimate=num(d["estimate"]), interval=(num(d["interval"][0]), num(d["interval"][1])),
                   threshold=float(d["threshold"]), above=d["direction"] == ">", n=tuple(int(k) for k in d["n"]),
                   df=num(d["df"]), holds=d["holds"], reason=d.get("reason", ""), unit=d.get("unit", ""),
                   level=float(d.get("level", LEVEL)),
                   margin=None if d.get("margin") is None else float(d["margin"]),
                   equivalence_p=num(d.get("equivalence_p")),
                   equivalence_interval=tuple(num(x) for x in d.get("equivalence_interval", (None, None))),
                   equivalent=bool(d.get("equivalent", False)))


def _column(samples: pd.DataFrame, condition: str, metric: str) -> pd.Series:
    """The per-seed values of one condition and metric, indexed by seed, finite values only."""
    rows = samples[(samples["condition"] == condition) & (samples["metric"] == metric)]
    v = pd.Series(rows["value"].astype(float).to_numpy(), index=rows["seed"].to_numpy())
    return v[np.isfinite(v.to_numpy())]


def fmt(value: float, unit: str = "", difference: bool = False) -> str:
    """A measured number as the verdict shows it: 3 significant digits and the unit; a share as a
    percentage, a difference of shares in (percentage) points."""
    if math.isnan(value):
        return "not measured"
    if unit == "%":
        return f"{100 * value:.1f}" + (" points" if difference else "%")
    return f"{value:.3g}" + (f" {unit}" if unit else "")


def fmt_interval(low: float, high: float, unit: str = "", difference: bool = False) -> str:
    """[low, high] with the unit once: "[0.8, 1.9] nats", "[96.5%, 99.5%]", "[-1.0, 3.0] points"."""
    if unit == "%" and not difference:
        return f"[{fmt(low, unit)}, {fmt(high, unit)}]"
    if unit == "%":
        return f"[{100 * low:.1f}, {100 * high:.1f}] points"
    return f"[{low:.3g}, {high:.3g}]" + (f" {unit}" if unit else "")


def _margin(e: Evidence | Claim) -> str:
    return f"±{fmt(e.margin, e.unit, difference=True)}"


def _equivalence(claim: Claim, values: tuple[pd.Series, ...]) -> Equivalence | None:
    """TOST of the claim's difference against its margin (None without one); a share's interval cut to +-1."""
    if claim.margin is None:
        return None
    eq = tost(values[0], values[1] if len(values) == 2 else None, claim.margin)
    if claim.unit == "%" and math.isfinite(eq.interval[0]):
        eq = Equivalence(eq.margin, eq.estimate, eq.p_lower, eq.p_upper,
                         (max(eq.interval[0], -1.0), min(eq.interval[1], 1.0)), eq.df, eq.alpha)
    return eq


def weigh(claim: Claim, samples: pd.DataFrame, stopped: str | None = None) -> Evidence:
    """Measure one claim over the seeds in `samples` and decide it (see the module docstring).
    `stopped` (e.g. "run stopped after 3 of 10 runs") makes it inconclusive whatever the numbers."""
    a = _column(samples, claim.condition, claim.metric)
    if claim.versus is None:
        test, conditions, values = ONE_SAMPLE, (claim.condition,), (a,)
        iv = one_sample(a)
    elif claim.paired:
        b = _column(samples, claim.versus, claim.metric)
        common = a.index.intersection(b.index)
        test, conditions, values = PAIRED, (claim.condition, claim.versus), (a[common] - b[common],)
        iv = one_sample(values[0])
    else:
        b = _column(samples, claim.versus, claim.metric)
        test, conditions, values = WELCH, (claim.condition, claim.versus), (a, b)
        iv = welch(a, b)
    n = tuple(len(v) for v in values)
    if claim.paired:
        n = (n[0], n[0])
    low, high = iv.low, iv.high
    difference = claim.versus is not None
    if claim.unit == "%" and not math.isnan(low):  # a share: no interval beyond what a share can be
        low, high = max(low, -1.0 if difference else 0.0), min(high, 1.0)
    eq = _equivalence(claim, values)
    equivalent = False
    if claim.open:
        holds, reason = None, OPEN
    elif stopped:
        holds, reason = None, stopped
    elif min(n) < MIN_SEEDS:
        holds, reason = None, f"too few seeds (n={min(n)}; at least {MIN_SEEDS} decide)"
    elif low > claim.threshold:
        holds, reason = claim.above, ""
    elif high < claim.threshold:
        holds, reason = not claim.above, ""
    elif eq is not None and eq.equivalent:
        holds, reason, equivalent = None, "", True
    else:
        holds, reason = None, (f"the {LEVEL:.0%} interval {fmt_interval(low, high, claim.unit, difference)} "
                               f"spans {fmt(claim.threshold, claim.unit, difference)}")
        if eq is not None and not math.isnan(eq.p):
            reason += (f", and its {1 - 2 * eq.alpha:.0%} interval {fmt_interval(*eq.interval, claim.unit, True)} "
                       f"reaches beyond the {_margin(claim)} margin")
    return Evidence(test=test, claim=claim.says, metric=claim.metric, conditions=conditions, estimate=iv.estimate,
                    interval=(low, high), threshold=claim.threshold, above=claim.above, n=n, df=iv.df, holds=holds,
                    reason=reason, unit=claim.unit, margin=claim.margin,
                    equivalence_p=math.nan if eq is None else eq.p,
                    equivalence_interval=(math.nan, math.nan) if eq is None else eq.interval,
                    equivalent=equivalent)


def _seeds(e: Evidence) -> str:
    if e.test == PAIRED or len(e.n) == 1:
        return f"{e.n[0]} seed" + ("s" if e.n[0] != 1 else "")
    if len(set(e.n)) == 1:
        return f"{e.n[0]} seed{'s' if e.n[0] != 1 else ''} each"
    return "seeds " + " and ".join(map(str, e.n))


def measured(e: Evidence, interval: bool = True) -> str:
    """The estimate (and its interval) in words: "difference 1.3, 95% CI [0.8, 1.9], Welch's t, 3 seeds each"."""
    diff = e.difference
    text = f"{'difference' if diff else 'mean'} {fmt(e.estimate, e.unit, diff)}"
    if math.isnan(e.interval[0]):  # no interval, so no test either
        return f"{text}, {_seeds(e)}"
    if interval:
        text += f", {e.level:.0%} CI {fmt_interval(*e.interval, e.unit, diff)}"
    return f"{text}, {e.test}, {_seeds(e)}"


def equivalence_text(e: Evidence) -> str:
    """TOST in words: "90% CI [-0.4, 0.6] points within the ±2.0 points margin, TOST p = 0.003" ("" without a
    margin, or without the seeds for a test)."""
    if e.margin is None or math.isnan(e.equivalence_p):
        return ""
    low, high = e.equivalence_interval
    where = "within" if e.within_margin else "not within"
    level = 1 - 2 * ALPHA
    return (f"{level:.0%} CI {fmt_interval(low, high, e.unit, True)} {where} the {_margin(e)} margin, "
            f"TOST p = {e.equivalence_p:.2g}")


def sentence(e: Evidence) -> str:
    """One claim's verdict in words, naming the interval (or why there is no verdict) and any margin."""
    margin = "" if e.margin is None else f"; a difference under {_margin(e)} does not matter"
    if e.holds is True:
        tiny = f", though {equivalence_text(e)}" if e.within_margin else ""
        return f"As predicted: {e.claim} ({measured(e)}{tiny}{margin})"
    if e.holds is False:
        side = "below" if e.above else "above"
        tiny = f", though {equivalence_text(e)}" if e.within_margin else ""
        return (f"NOT as predicted: the seed says {e.claim}, but the {e.level:.0%} interval lies {side} "
                f"{fmt(e.threshold, e.unit, e.difference)} ({measured(e)}{tiny}{margin})")
    if e.equivalent:
        return (f"No meaningful difference: asked whether {e.claim}, the difference lies within {_margin(e)} "
                f"({equivalence_text(e)}; measured {measured(e)})")
    if math.isnan(e.estimate):
        return f"{'Open question' if e.reason == OPEN else 'Inconclusive'} whether {e.claim}: not measured"
    if e.reason == OPEN:
        return f"Open question, {e.claim}: {measured(e)}"
    spans = e.reason.startswith(f"the {e.level:.0%} interval")
    return f"Inconclusive whether {e.claim}: {e.reason}; measured {measured(e, interval=not spans)}"


def combine(outcomes: Sequence[bool | None]) -> bool | None:
    """All claims together: False if one fails, True if all hold, else None (no claims: None)."""
    if not outcomes:
        return None
    if any(o is False for o in outcomes):
        return False
    return True if all(o is True for o in outcomes) else None


def overall(evidence: Sequence[Evidence]) -> str:
    """The outcome of all claims together (open questions aside): FAILS if one fails, HOLDS if all hold,
    EQUIVALENT if each holds or shows no meaningful difference (one at least), else INCONCLUSIVE."""
    outcomes = [e.outcome for e in evidence if e.reason != OPEN]
    if not outcomes:
        return INCONCLUSIVE
    if FAILS in outcomes:
        return FAILS
    if all(o == HOLDS for o in outcomes):
        return HOLDS
    return EQUIVALENT if all(o in (HOLDS, EQUIVALENT) for o in outcomes) else INCONCLUSIVE


@dataclass(frozen=True)
class Verdict:
    holds: bool | None
    text: str
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)

    @property
    def outcome(self) -> str:
        return overall(self.evidence)


def verdict(claims: Sequence[Claim], samples: pd.DataFrame, stopped: str | None = None) -> Verdict:
    """Weigh every claim; holds is None unless every claim that decides anything is decided."""
    evidence = tuple(weigh(c, samples, stopped) for c in claims)
    holds = combine([e.holds for e in evidence if e.reason != OPEN])
    return Verdict(holds, ". ".join(sentence(e) for e in evidence), evidence)


__all__ = ["MIN_SEEDS", "LEVEL", "ALPHA", "OPEN", "WELCH", "ONE_SAMPLE", "PAIRED", "HOLDS", "FAILS", "EQUIVALENT",
           "INCONCLUSIVE", "OUTCOMES", "beta_regularized", "t_cdf", "t_quantile", "Interval", "one_sample", "welch",
           "welch_df", "Equivalence", "tost", "Claim", "Evidence", "Verdict", "weigh", "verdict", "sentence",
           "measured", "equivalence_text", "combine", "overall", "fmt", "fmt_interval"]
