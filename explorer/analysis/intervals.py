"""Student's t, the intervals every verdict rests on, and the two one-sided tests of equivalence.

`one_sample` and `welch` give a mean (or a difference of means) with its t interval; `tost` asks whether a
difference lies within +-margin of nothing (Schuirmann's two one-sided tests): both one-sided nulls,
"difference <= -margin" and "difference >= +margin", are rejected at `alpha`, which is the same as the
1 - 2 alpha (90%) interval lying inside (-margin, +margin). The t quantile is computed here (regularised
incomplete beta, bisection), so nothing beyond the standard library and numpy is needed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95       # confidence level of every interval
ALPHA = 0.05       # each one-sided test of an equivalence: its 90% interval lies within the margin


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
# Equivalence: two one-sided tests
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Equivalence:
    """Schuirmann's TOST of a difference against +-margin: `p` is the larger of the two one-sided p-values
    (`p_lower` for "difference > -margin", `p_upper` for "difference < +margin"); `interval` the
    1 - 2 alpha interval; `equivalent` p < alpha. NaN p-values when there are too few values."""

    margin: float
    estimate: float
    p_lower: float
    p_upper: float
    interval: tuple[float, float]
    df: float
    alpha: float = ALPHA

    @property
    def p(self) -> float:
        return max(self.p_lower, self.p_upper)

    @property
    def equivalent(self) -> bool:
        return self.p < self.alpha   # False for NaN


def _tost(estimate: float, se: float, df: float, margin: float, alpha: float) -> Equivalence:
    if not (margin > 0 and math.isfinite(margin)):
        raise ValueError(f"margin={margin!r} must be a number > 0")
    if not math.isfinite(df) or not math.isfinite(se):
        return Equivalence(margin, estimate, math.nan, math.nan, (math.nan, math.nan), df, alpha)
    half = t_quantile(1 - alpha, df) * se
    if se == 0:  # no spread at all: the difference is exactly the estimate
        inside = -margin < estimate < margin
        p = 0.0 if inside else 1.0
        return Equivalence(margin, estimate, p, p, (estimate, estimate), df, alpha)
    p_lower = 1.0 - t_cdf((estimate + margin) / se, df)
    p_upper = t_cdf((estimate - margin) / se, df)
    return Equivalence(margin, estimate, p_lower, p_upper, (estimate - half, estimate + half), df, alpha)


def tost(a: Iterable[float], b: Iterable[float] | None, margin: float, alpha: float = ALPHA) -> Equivalence:
    """Is mean(a) - mean(b) (Welch) within +-margin of 0? With `b` None, a's mean itself (one-sample t,
    also the paired test of per-seed differences). Needs two values in each sample for its p-values."""
    a = _values(a)
    if b is None:
        n = len(a)
        estimate = float(a.mean()) if n else math.nan
        if n < 2:
            return _tost(estimate, math.nan, math.nan, margin, alpha)
        return _tost(estimate, float(a.std(ddof=1)) / math.sqrt(n), float(n - 1), margin, alpha)
    b = _values(b)
    estimate = float(a.mean() - b.mean()) if len(a) and len(b) else math.nan
    if len(a) < 2 or len(b) < 2:
        return _tost(estimate, math.nan, math.nan, margin, alpha)
    va, vb = float(a.var(ddof=1)), float(b.var(ddof=1))
    return _tost(estimate, math.sqrt(va / len(a) + vb / len(b)), welch_df(va, len(a), vb, len(b)), margin, alpha)


__all__ = ["LEVEL", "ALPHA", "beta_regularized", "t_cdf", "t_quantile", "Interval", "one_sample", "welch_df",
           "welch", "Equivalence", "tost"]
