"""The statistics behind every verdict: t quantiles and intervals against published values, and the
verdict rule (too few seeds, an interval that spans the threshold, one side or the other, a stopped run)."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from explorer.analysis.evidence import (
    MIN_SEEDS,
    OPEN,
    Claim,
    Evidence,
    beta_regularized,
    combine,
    one_sample,
    t_cdf,
    t_quantile,
    verdict,
    weigh,
    welch,
    welch_df,
)


@pytest.mark.parametrize("df, quantile", [
    (1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764), (5, 2.5706), (10, 2.2281), (30, 2.0423), (120, 1.9799),
])
def test_t_quantile_matches_the_table(df, quantile):
    assert t_quantile(0.975, df) == pytest.approx(quantile, abs=1e-4)
    assert t_quantile(0.025, df) == pytest.approx(-quantile, abs=1e-4)
    assert t_cdf(t_quantile(0.975, df), df) == pytest.approx(0.975, abs=1e-10)


def test_t_distribution_basics():
    assert t_cdf(0.0, 3) == pytest.approx(0.5)
    assert t_cdf(1.0, 1) == pytest.approx(0.75)            # Cauchy: 1/2 + atan(1)/pi
    assert t_cdf(2.0, 2) == pytest.approx(0.5 + 1 / math.sqrt(6), abs=1e-12)  # 1/2 + t / (2 sqrt(2 + t^2))
    assert t_quantile(0.95, 10) == pytest.approx(1.8125, abs=1e-4)
    assert t_quantile(0.975, 1e6) == pytest.approx(1.95996, abs=1e-4)  # the normal quantile
    assert beta_regularized(2, 3, 0.4) == pytest.approx(0.5248)  # P(Binomial(4, 0.4) >= 2)
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)
    with pytest.raises(ValueError):
        t_cdf(1.0, 0)


def test_welch_interval_and_degrees_of_freedom_by_hand():
    a, b = [1, 2, 3, 4, 5], [2, 4, 6]          # var 2.5 (n 5), var 4 (n 3)
    se2 = 2.5 / 5 + 4 / 3
    df = se2 ** 2 / ((2.5 / 5) ** 2 / 4 + (4 / 3) ** 2 / 2)
    assert welch_df(2.5, 5, 4.0, 3) == pytest.approx(df) == pytest.approx(3.5328, abs=1e-4)
    iv = welch(a, b)
    half = t_quantile(0.975, df) * math.sqrt(se2)
    assert iv.estimate == pytest.approx(-1.0) and iv.df == pytest.approx(df)
    assert (iv.low, iv.high) == pytest.approx((-1.0 - half, -1.0 + half))
    assert (iv.low, iv.high) == pytest.approx((-4.96373, 2.96373), abs=1e-4)  # scipy's ttest_ind(equal_var=False)


def test_one_sample_interval_by_hand():
    iv = one_sample([0.5, 0.52, 0.47])
    half = 4.302653 * np.std([0.5, 0.52, 0.47], ddof=1) / math.sqrt(3)
    assert iv.df == 2 and (iv.low, iv.high) == pytest.approx((0.49667 - half, 0.49667 + half), abs=1e-5)
    assert math.isnan(one_sample([0.5]).low) and one_sample([0.5]).estimate == 0.5
    assert math.isnan(one_sample([]).estimate)
    assert one_sample([1.0, math.nan, 1.0, 1.0]).low == 1.0  # non-finite values are dropped; zero spread


def test_intervals_agree_with_scipy_when_it_is_there():
    from scipy import stats  # requirements-dev installs it: never a skip
    rng = np.random.default_rng(0)
    for n_a, n_b in ((3, 3), (3, 7), (10, 4)):
        a, b = rng.normal(1.0, 1.0, n_a), rng.normal(0.0, 3.0, n_b)
        ours, ref = welch(a, b), stats.ttest_ind(a, b, equal_var=False)
        low, high = ref.confidence_interval()
        assert (ours.low, ours.high, ours.df) == pytest.approx((low, high, ref.df), rel=1e-8)
        low, high = stats.ttest_1samp(a, 0.0).confidence_interval()
        assert (one_sample(a).low, one_sample(a).high) == pytest.approx((low, high), rel=1e-8)


def samples(values: dict[str, list[float]], metric: str = "m") -> pd.DataFrame:
    return pd.DataFrame([dict(condition=c, seed=s, metric=metric, value=v)
                         for c, vs in values.items() for s, v in enumerate(vs)])


LARGER = Claim("A is larger than B", "m", "A", "B")


def test_too_few_seeds_is_inconclusive_whatever_the_difference():
    for n in (1, MIN_SEEDS - 1):
        e = weigh(LARGER, samples({"A": [10.0] * n, "B": [0.0] * n}))
        assert e.holds is None and e.reason == f"too few seeds (n={n}; at least 3 decide)" and e.n == (n, n)
    one = verdict([LARGER], samples({"A": [10.0], "B": [0.0]}))
    assert one.holds is None and "Inconclusive" in one.text and "too few seeds (n=1; at least 3 decide)" in one.text
    uneven = weigh(LARGER, samples({"A": [10.0, 11, 12, 13], "B": [0.0, 1.0]}))  # the smaller group counts
    assert uneven.holds is None and "n=2" in uneven.reason and uneven.n == (4, 2)
    missing = verdict([LARGER], samples({"A": [1.0, 2.0, 3.0]}))
    assert missing.holds is None and "n=0" in missing.evidence[0].reason and "not measured" in missing.text


def test_an_interval_that_spans_zero_is_inconclusive():
    e = weigh(LARGER, samples({"A": [1.0, 3.0, 2.0], "B": [1.5, 2.5, 1.0]}))
    low, high = e.interval
    assert low < 0 < high and e.holds is None and e.test == "Welch's t"
    assert e.reason == f"the 95% interval [{low:.3g}, {high:.3g}] spans 0"
    assert "Inconclusive whether A is larger than B" in verdict([LARGER], samples(
        {"A": [1.0, 3.0, 2.0], "B": [1.5, 2.5, 1.0]})).text


def test_one_sided_intervals_decide_both_ways():
    up = verdict([LARGER], samples({"A": [5.0, 5.2, 4.9], "B": [1.0, 1.1, 0.8]}))
    (e,) = up.evidence
    assert up.holds is True and e.holds is True and e.interval[0] > 0 and e.reason == ""
    assert up.text.startswith("As predicted: A is larger than B (difference 4.07, 95% CI [")
    assert "Welch's t, 3 seeds each" in up.text
    down = verdict([LARGER], samples({"A": [1.0, 1.1, 0.8], "B": [5.0, 5.2, 4.9]}))
    assert down.holds is False and down.evidence[0].interval[1] < 0
    assert down.text.startswith("NOT as predicted: the seed says A is larger than B, but the 95% interval lies below 0")
    smaller = Claim("A is below 0.65", "m", "A", above=False, threshold=0.65, unit="%")  # one sample, a threshold
    assert weigh(smaller, samples({"A": [0.5, 0.52, 0.47]})).holds is True
    assert weigh(smaller, samples({"A": [0.9, 0.92, 0.87]})).holds is False
    spans = weigh(smaller, samples({"A": [0.5, 0.8, 0.65]}))
    assert spans.holds is None and spans.reason.endswith("spans 65.0%") and spans.test == "one-sample t"


def test_a_share_keeps_its_interval_within_0_and_100_percent():
    share = weigh(Claim("A is above 90%", "m", "A", threshold=0.9, unit="%"), samples({"A": [1.0, 0.98, 1.0]}))
    raw = one_sample([1.0, 0.98, 1.0])
    assert raw.high > 1 and share.interval == (raw.low, 1.0) and share.holds is True
    assert "95% CI [" in verdict([Claim("A is above 90%", "m", "A", threshold=0.9, unit="%")],
                                 samples({"A": [1.0, 0.98, 1.0]})).text
    gap = weigh(Claim("A beats B", "m", "A", "B", unit="%"), samples({"A": [1.0, 0.2, 0.9], "B": [0.0, 0.0, 0.0]}))
    assert gap.interval[0] >= -1.0 and gap.interval[1] == 1.0 and gap.holds is None


def test_a_margin_shifts_the_threshold():
    within = Claim("A is at least B (within 0.02)", "m", "A", "B", threshold=-0.02)
    assert weigh(within, samples({"A": [0.99, 0.99, 0.98], "B": [0.99, 1.0, 0.99]})).holds is True
    assert weigh(within, samples({"A": [0.90, 0.91, 0.89], "B": [0.99, 1.0, 0.99]})).holds is False


def test_paired_claims_test_the_per_seed_differences():
    # A tracks B seed by seed (+0.1) but the seeds differ a lot: only the paired test sees it
    b = [0.0, 5.0, 10.0, 2.0]
    data = samples({"A": [x + 0.1 for x in b], "B": b})
    paired = weigh(Claim("A beats B", "m", "A", "B", paired=True), data)
    assert paired.test == "paired t" and paired.holds is True and paired.n == (4, 4)
    assert weigh(Claim("A beats B", "m", "A", "B"), data).holds is None


def test_a_stopped_run_decides_nothing():
    data = samples({"A": [5.0, 5.2, 4.9], "B": [1.0, 1.1, 0.8]})
    v = verdict([LARGER], data, stopped="run stopped after 6 of 10 runs")
    assert v.holds is None and v.evidence[0].reason == "run stopped after 6 of 10 runs"
    assert "Inconclusive whether A is larger than B: run stopped after 6 of 10 runs" in v.text
    assert v.evidence[0].interval[0] > 0  # the interval is still reported


def test_claims_combine_and_open_questions_never_decide():
    assert combine([True, True]) is True and combine([True, None]) is None and combine([None, False]) is False
    assert combine([]) is None
    data = samples({"A": [5.0, 5.2, 4.9], "B": [1.0, 1.1, 0.8]})
    opened = verdict([Claim("how much A exceeds B", "m", "A", "B", open=True)], data)
    assert opened.holds is None and opened.evidence[0].reason == OPEN and opened.text.startswith("Open question")
    both = verdict([LARGER, Claim("B is larger than A", "m", "B", "A")], data)
    assert both.holds is False and [e.holds for e in both.evidence] == [True, False]


def test_evidence_survives_json():
    e = weigh(LARGER, samples({"A": [5.0, 5.2, 4.9], "B": [1.0, 1.1, 0.8]}))
    d = json.loads(json.dumps(e.to_json(), allow_nan=False))
    assert d["test"] == "Welch's t" and d["n"] == [3, 3] and d["holds"] is True and len(d["interval"]) == 2
    assert Evidence.from_json(d) == e
    lonely = weigh(LARGER, samples({"A": [5.0], "B": [1.0]}))
    d = json.loads(json.dumps(lonely.to_json(), allow_nan=False))   # NaN bounds become null
    assert d["interval"] == [None, None] and d["holds"] is None
    back = Evidence.from_json(d)
    assert math.isnan(back.interval[0]) and back.reason == lonely.reason
