"""pe-order at its default budget decides its claim, with the evidence in result.json; residuals decides
its main training claims at a small budget."""

import json

import pytest

from explorer.experiments import cache_path, run_cached
from explorer.experiments.runner import RESULT_FILE


@pytest.mark.slow
def test_pe_order_at_its_default_budget_holds_with_its_evidence(tmp_path):
    result = run_cached("pe-order", cache_dir=tmp_path)   # 5 seeds x 2 conditions x 300 steps, ~15 s
    meta = json.loads((cache_path("pe-order", None, tmp_path) / RESULT_FILE).read_text())
    assert result.holds is True and meta["holds"] is True, result.verdict
    with_pe, without_pe = meta["evidence"]
    assert with_pe["test"] == without_pe["test"] == "one-sample t"
    assert with_pe["conditions"] == ["with PE"] and with_pe["n"] == [5] and with_pe["direction"] == ">"
    assert with_pe["holds"] is True and with_pe["interval"][0] > with_pe["threshold"] == 0.9
    assert without_pe["holds"] is True and without_pe["interval"][1] < without_pe["threshold"] == 0.65
    assert without_pe["interval"][0] <= without_pe["estimate"] <= without_pe["interval"][1]
    assert result.verdict.count("As predicted") == 2 and "95% CI [" in result.verdict
    assert "one-sample t, 5 seeds" in result.verdict


@pytest.mark.slow
def test_residuals_without_them_a_deep_stack_learns_only_character_frequencies(tmp_path):
    # 3 seeds x 3 conditions x 100 steps (~35 s on one core): the claims against the residual stack and
    # the unigram baseline decide at 3 seeds (the depth control and the gradients want the default 5)
    result = run_cached("residuals", {"seeds": 3, "steps": 100}, cache_dir=tmp_path)
    versus_residual, unigram = result.evidence[:2]
    assert versus_residual.holds is True and versus_residual.estimate > 0.3, result.verdict
    assert unigram.holds is True and unigram.test == "one-sample t", result.verdict
    assert result.holds is not False
