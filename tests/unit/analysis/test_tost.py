"""Equivalence in verdicts: the two one-sided tests (TOST) against scipy, and the four outcomes a claim with a
margin can reach (holds, does not hold, no meaningful difference, inconclusive), each checked against scipy."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats  # requirements-dev installs it (tests only): never a skip

from explorer.analysis.evidence import (
    EQUIVALENT,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    Claim,
    Evidence,
    overall,
    verdict,
    weigh,
)
from explorer.analysis.intervals import tost

MARGIN = 0.5


def scipy_tost(a, b, margin, paired=False):
    """Schuirmann's TOST from scipy's one-sided t tests, the data shifted by the margin."""
    if b is None or paired:
        d = np.asarray(a) - (0 if b is None else np.asarray(b))
        lower = stats.ttest_1samp(d, -margin, alternative="greater").pvalue
        upper = stats.ttest_1samp(d, margin, alternative="less").pvalue
    else:
        lower = stats.ttest_ind(np.asarray(a) + margin, b, equal_var=False, alternative="greater").pvalue
        upper = stats.ttest_ind(np.asarray(a) - margin, b, equal_var=False, alternative="less").pvalue
    return lower, upper


@pytest.mark.parametrize("n_a, n_b, shift", [(3, 3, 0.0), (3, 7, 0.3), (10, 4, -0.2), (5, 5, 1.0)])
def test_tost_matches_scipy_for_two_samples(n_a, n_b, shift):
    rng = np.random.default_rng(n_a * 10 + n_b)
    a, b = rng.normal(shift, 0.3, n_a), rng.normal(0.0, 0.6, n_b)
    ours = tost(a, b, MARGIN)
    lower, upper = scipy_tost(a, b, MARGIN)
    assert (ours.p_lower, ours.p_upper) == pytest.approx((lower, upper), rel=1e-7)
    low, high = stats.ttest_ind(a, b, equal_var=False).confidence_interval(confidence_level=0.90)
    assert ours.interval == pytest.approx((low, high), rel=1e-7)
    assert ours.equivalent == (max(lower, upper) < 0.05) == (-MARGIN < low and high < MARGIN)


def test_tost_matches_scipy_for_one_sample_and_pairs():
    rng = np.random.default_rng(7)
    d = rng.normal(0.1, 0.2, 6)
    ours = tost(d, None, MARGIN)
    assert (ours.p_lower, ours.p_upper) == pytest.approx(scipy_tost(d, None, MARGIN), rel=1e-7)
    b = rng.normal(3.0, 2.0, 6)
    a = b + rng.normal(0.05, 0.1, 6)
    paired = weigh(Claim("A differs from B", "m", "A", "B", paired=True, margin=MARGIN), samples({"A": a, "B": b}))
    assert paired.equivalence_p == pytest.approx(max(scipy_tost(a, b, MARGIN, paired=True)), rel=1e-7)
    assert tost(a, b, MARGIN).equivalent is False   # unpaired, the seeds' spread hides it


def test_tost_needs_two_values_and_a_positive_margin():
    assert math.isnan(tost([1.0], [1.0, 2.0], MARGIN).p) and not tost([1.0], [1.0, 2.0], MARGIN).equivalent
    flat = tost([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], MARGIN)   # no spread: the difference is exactly 0
    assert flat.equivalent and flat.interval == (0.0, 0.0)
    assert not tost([2.0, 2.0, 2.0], [1.0, 1.0, 1.0], MARGIN).equivalent
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="margin"):
            tost([1.0, 2.0], [1.0, 2.0], bad)


def samples(values: dict, metric: str = "m") -> pd.DataFrame:
    return pd.DataFrame([dict(condition=c, seed=s, metric=metric, value=float(v))
                         for c, vs in values.items() for s, v in enumerate(vs)])


CLAIM = Claim("A is larger than B", "m", "A", "B", margin=MARGIN, unit="nats")
B = [1.0, 1.2, 0.8, 1.1, 0.9]
CASES = {   # A's values against B's: each reaches one outcome
    HOLDS: [3.0, 3.2, 2.8, 3.1, 2.9],
    FAILS: [-1.0, -0.8, -1.2, -0.9, -1.1],
    EQUIVALENT: [1.05, 1.25, 0.85, 1.15, 0.95],
    INCONCLUSIVE: [0.0, 2.4, 1.0, 3.0, -0.5],
}


@pytest.mark.parametrize("outcome", list(CASES))
def test_the_four_outcomes_agree_with_scipy(outcome):
    a = CASES[outcome]
    e = weigh(CLAIM, samples({"A": a, "B": B}))
    assert e.outcome == outcome and e.holds == {HOLDS: True, FAILS: False}.get(outcome)
    ref = stats.ttest_ind(a, B, equal_var=False)
    low, high = ref.confidence_interval(confidence_level=0.95)
    assert e.interval == pytest.approx((low, high), rel=1e-7)
    p_tost = max(scipy_tost(a, B, MARGIN))
    assert e.equivalence_p == pytest.approx(p_tost, rel=1e-7)
    expected = (HOLDS if low > 0 else FAILS if high < 0 else EQUIVALENT if p_tost < 0.05 else INCONCLUSIVE)
    assert expected == outcome
    assert e.equivalent == (outcome == EQUIVALENT)


def test_every_outcome_states_its_margin():
    texts = {o: verdict([CLAIM], samples({"A": a, "B": B})).text for o, a in CASES.items()}
    assert all("±0.5 nats" in t for t in texts.values())
    assert texts[HOLDS].startswith("As predicted") and texts[FAILS].startswith("NOT as predicted")
    assert texts[EQUIVALENT].startswith("No meaningful difference: asked whether A is larger than B, the "
                                        "difference lies within ±0.5 nats (90% CI [")
    assert "TOST p = " in texts[EQUIVALENT]
    assert texts[INCONCLUSIVE].startswith("Inconclusive whether A is larger than B: the 95% interval")
    assert "reaches beyond the ±0.5 nats margin" in texts[INCONCLUSIVE]


def test_a_share_margin_reads_in_points():
    claim = Claim("4 heads beat 1", "accuracy", "4", "1", unit="%", margin=0.02)
    v = verdict([claim], samples({"4": [1.0, 0.998, 1.0], "1": [1.0, 1.0, 0.998]}, "accuracy"))
    assert v.outcome == EQUIVALENT and v.holds is None and "lies within ±2.0 points" in v.text
    assert "] points within the ±2.0 points margin" in v.text


def test_too_few_seeds_or_a_stop_never_conclude_equivalence():
    data = samples({"A": CASES[EQUIVALENT][:2], "B": B[:2]})
    assert weigh(CLAIM, data).outcome == INCONCLUSIVE and "too few seeds" in weigh(CLAIM, data).reason
    full = samples({"A": CASES[EQUIVALENT], "B": B})
    assert weigh(CLAIM, full, stopped="run stopped after 4 of 10 runs").outcome == INCONCLUSIVE


def test_a_margin_belongs_to_a_difference_and_is_positive():
    with pytest.raises(ValueError, match="two conditions"):
        Claim("A is above 1", "m", "A", threshold=1.0, margin=0.1)
    for bad in (0.0, -0.1, math.nan, True):
        with pytest.raises(ValueError, match="must be a number > 0"):
            Claim("A beats B", "m", "A", "B", margin=bad)


def test_claims_combine_with_equivalence():
    def ev(outcome):
        return weigh(CLAIM, samples({"A": CASES[outcome], "B": B}))
    assert overall([ev(HOLDS), ev(EQUIVALENT)]) == EQUIVALENT
    assert overall([ev(EQUIVALENT), ev(FAILS)]) == FAILS
    assert overall([ev(EQUIVALENT), ev(INCONCLUSIVE)]) == INCONCLUSIVE
    assert overall([ev(HOLDS), ev(HOLDS)]) == HOLDS and overall([]) == INCONCLUSIVE
    both = verdict([CLAIM, CLAIM], samples({"A": CASES[EQUIVALENT], "B": B}))
    assert both.holds is None and both.outcome == EQUIVALENT


def test_equivalence_survives_json_and_old_evidence_still_loads():
    e = weigh(CLAIM, samples({"A": CASES[EQUIVALENT], "B": B}))
    d = json.loads(json.dumps(e.to_json(), allow_nan=False))
    assert d["outcome"] == "equivalent" and d["margin"] == MARGIN and d["equivalent"] is True and d["holds"] is None
    assert Evidence.from_json(d) == e
    old = {k: v for k, v in d.items() if k not in ("outcome", "margin", "equivalence_p", "equivalence_interval",
                                                   "equivalent")}
    back = Evidence.from_json(old)
    assert back.margin is None and back.outcome == INCONCLUSIVE and back.holds is None


def test_the_cli_and_a_result_state_the_margin_and_the_outcome():
    from explorer.cli.experiment import format_evidence
    from explorer.experiments import Result

    judged = verdict([CLAIM], samples({"A": CASES[EQUIVALENT], "B": B}))
    empty = pd.DataFrame()
    result = Result(name="heads", table=empty, samples=empty, curves=None, verdict=judged.text, holds=judged.holds,
                    params={}, evidence=judged.evidence)
    assert result.outcome == EQUIVALENT and judged.outcome == EQUIVALENT
    line = format_evidence(result).splitlines()[1]
    assert "margin ±0.5 nats (90% CI [" in line and line.endswith(": no meaningful difference")
    stopped = Result(name="heads", table=empty, samples=empty, curves=None, verdict="", holds=None, params={},
                     evidence=judged.evidence, partial=True)
    assert stopped.outcome == INCONCLUSIVE
