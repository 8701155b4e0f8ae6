"""Pre-LN against Post-LN over seeds, at the depths where the chapter says the difference shows."""

import pytest


def test_evenness_over_seeds_decides_only_when_the_interval_is_on_one_side():
    from explorer.analysis.gradients import evenness
    deep = evenness("weights", n_layers=48, seeds=range(8))     # the chapter: deep Post-LN stacks drift
    assert deep.holds is True and deep.interval[0] > 1 and deep.post > deep.pre
    inputs = evenness("inputs", n_layers=12, seeds=range(8))    # at the layers' inputs Pre-LN grows toward the input
    assert inputs.holds is False and inputs.interval[1] < 1 and inputs.pre > inputs.post
    few = evenness("weights", n_layers=12, seeds=range(2))
    assert few.holds is None  # two seeds never decide
    with pytest.raises(ValueError, match="weights"):
        evenness("biases")
