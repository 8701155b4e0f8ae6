"""When a difference over seeds decides a claim: Welch's t intervals, and the one verdict rule.

A seed's claim becomes a `Claim`: one metric of one condition, or of one condition minus another,
is above (or below) a threshold (0 for "larger than"). `weigh(claim, samples)` measures it over
the seeds in a samples frame (condition, seed, metric, value) and returns `Evidence`: the test, the
estimate, its 95% confidence interval, n per condition, the degrees of freedom, and `holds`:

    True   at least MIN_SEEDS seeds per condition and the interval lies on the claimed side
    False  at least MIN_SEEDS seeds per condition and the interval lies on the other side
    None   otherwise, with the reason: too few seeds, the interval spans the threshold, the run
           stopped, or the seed asks an open question (`Claim.open`: measured, never decided)

`verdict(claims, samples, stopped)` weighs every claim and combines them (all must hold; one that
fails makes the verdict False; otherwise an undecided one leaves it None): (holds, sentences,
evidence). Every experiment's verdict goes through it.

Tests. Two conditions trained separately: Welch's t (unequal variances, Welch-Satterthwaite degrees
of freedom). One condition against a number: the one-sample t. Two numbers measured on the same
seed's model (greedy and beam decoding of one model): the one-sample t of the per-seed differences
("paired t"). The t quantile is computed here (regularised incomplete beta, bisection), so nothing
beyond the standard library is needed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

MIN_SEEDS = 3      # fewer seeds per compared condition never decide a claim
LEVEL = 0.95       # confidence level of every interval

WELCH, ONE_SAMPLE, PAIRED = "Welch's t", "one-sample t", "paired t"
OPEN = "the seed asks rather than claims"   # the reason of an open claim's evidence


# ---------------------------------------------------------------------------------------------
# Student's t distribution
# ---------------------------------------------------------------------------------------------

def _beta_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= c * d
        if abs(c * d - 1.0) < eps:
            break
    return h


def beta_regularized(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularised incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df (> 0, not necessarily whole) degrees of freedom."""
    if not df > 0:
        raise ValueError(f"df={df!r} must be > 0")
    tail = 0.5 * beta_regularized(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p, by bisection on t_cdf (to 1e-12)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p={p!r} must lie in (0, 1)")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, 2.0 * high
    while high - low > 1e-12 * max(1.0, high):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if t_cdf(mid, df) < p else (low, mid)
    return 0.5 * (low + high)


# ---------------------------------------------------------------------------------------------
# Intervals
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Interval:
    estimate: float    # the difference of means, or the mean
    low: float         # NaN when there are too few values for an interval
    high: float
    df: float


def _values(values: Iterable[float]) -> np.ndarray:
    v = np.asarray(list(values), dtype=float)
    return v[np.isfinite(v)]


def one_sample(values: Iterable[float], level: float = LEVEL) -> Interval:
    """The mean and its t interval (df = n - 1); NaN bounds for fewer than two values."""
    v = _values(values)
    n = len(v)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, math.nan)
    mean = float(v.mean())
    if n < 2:
        return Interval(mean, math.nan, math.nan, math.nan)
    half = t_quantile(0.5 + level / 2, n - 1) * float(v.std(ddof=1)) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, float(n - 1))


def welch_df(var_a: float, n_a: int, var_b: float, n_b: int) -> float:
    """Welch-Satterthwaite degrees of freedom; n_a + n_b - 2 when both variances are 0."""
    qa, qb = var_a / n_a, var_b / n_b
    if qa + qb == 0:
        return float(n_a + n_b - 2)
    return (qa + qb) ** 2 / (qa ** 2 / (n_a - 1) + qb ** 2 / (n_b - 1))


def welch(a: Iterable[float], b: Iterable[float], level: float = LEVEL) -> Interval:
    """mean(a) - mean(b) and its Welch t interval; NaN bounds unless both have two values or more."""
    a, b = _values(a), _values(b)
    if not len(a) or not len(b):
        return Interval(math.nan, math.nan, math.nan, math.nan)
    diff = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return Interval(diff, math.nan, math.nan, math.nan)
    va, vb = float(a.var(ddof=1)), float(b.var(ddof=1))
    df = welch_df(va, len(a), vb, len(b))
    half = t_quantile(0.5 + level / 2, df) * math.sqrt(va / len(a) + vb / len(b))
    return Interval(diff, diff - half, diff + half, df)


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
    `open`: the seed asks rather than claims; the interval is reported, nothing is decided."""

    says: str
    metric: str
    condition: str
    versus: str | None = None
    above: bool = True
    threshold: float = 0.0
    paired: bool = False
    unit: str = ""
    open: bool = False


@dataclass(frozen=True)
class Evidence:
    """A claim measured over seeds. `estimate` is the difference of means (condition - versus) or
    the mean; `interval` its 95% confidence interval (NaN when n < 2); `n` the seeds per condition
    (pairs, for a paired test); `holds` True/False/None and, when None, the `reason`."""

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
                "unit": self.unit}

    @classmethod
    def from_json(cls, d: dict) -> Evidence:
        def num(x):
            return math.nan if x is None else float(x)
        return cls(test=d["test"], claim=d["claim"], metric=d["metric"], conditions=tuple(d["conditions"]),
                   estimate=num(d["estimate"]), interval=(num(d["interval"][0]), num(d["interval"][1])),
                   threshold=float(d["threshold"]), above=d["direction"] == ">", n=tuple(int(k) for k in d["n"]),
                   df=num(d["df"]), holds=d["holds"], reason=d.get("reason", ""), unit=d.get("unit", ""),
                   level=float(d.get("level", LEVEL)))


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
    else:
        holds, reason = None, (f"the {LEVEL:.0%} interval {fmt_interval(low, high, claim.unit, difference)} "
                               f"spans {fmt(claim.threshold, claim.unit, difference)}")
    return Evidence(test=test, claim=claim.says, metric=claim.metric, conditions=conditions, estimate=iv.estimate,
                    interval=(low, high), threshold=claim.threshold, above=claim.above, n=n, df=iv.df, holds=holds,
                    reason=reason, unit=claim.unit)


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


def sentence(e: Evidence) -> str:
    """One claim's verdict in words, naming the interval (or why there is no verdict)."""
    if e.holds is True:
        return f"As predicted: {e.claim} ({measured(e)})"
    if e.holds is False:
        side = "below" if e.above else "above"
        return (f"NOT as predicted: the seed says {e.claim}, but the {e.level:.0%} interval lies {side} "
                f"{fmt(e.threshold, e.unit, e.difference)} ({measured(e)})")
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


@dataclass(frozen=True)
class Verdict:
    holds: bool | None
    text: str
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)


def verdict(claims: Sequence[Claim], samples: pd.DataFrame, stopped: str | None = None) -> Verdict:
    """Weigh every claim; holds is None unless every claim that decides anything is decided."""
    evidence = tuple(weigh(c, samples, stopped) for c in claims)
    holds = combine([e.holds for e in evidence if e.reason != OPEN])
    return Verdict(holds, ". ".join(sentence(e) for e in evidence), evidence)


__all__ = ["MIN_SEEDS", "LEVEL", "OPEN", "WELCH", "ONE_SAMPLE", "PAIRED", "beta_regularized", "t_cdf", "t_quantile",
           "Interval", "one_sample", "welch", "welch_df", "Claim", "Evidence", "Verdict", "weigh", "verdict",
           "sentence", "measured", "combine", "fmt", "fmt_interval"]
