"""The Experiments page shows "no meaningful difference" as its own verdict, with the claim's margin: a heads
result whose conditions tie (built from constructed seeds, cached as an earlier visitor's run would be)."""

from explorer.experiments import EXPERIMENTS, cache_path, save_csv
from explorer.experiments.base import build_result
from explorer.experiments.heads import NAME, _measure
from tests.app.helpers import assert_ok, open_app
from ui import experiment_params

ACCURACY = {"4 heads": [1.0, 1.0, 0.9933, 1.0], "1 head": [1.0, 0.9933, 1.0, 1.0]}


def tied_result(params):
    outputs = [((seed, cond), ([dict(condition=cond, seed=seed, metric="accuracy", value=v)],
                               [dict(condition=cond, seed=seed, step=s, metric=m, value=v)
                                for s in (10, 20) for m in ("val_exact", "loss")]))
               for cond, values in ACCURACY.items() for seed, v in enumerate(values)]
    return build_result(NAME, params, outputs, {}, _measure(params), None)


def test_the_page_shows_no_meaningful_difference_with_its_margin():
    params = EXPERIMENTS[NAME].tiny
    result = tied_result(params)
    assert result.outcome == "equivalent" and result.holds is None
    save_csv(result, cache_path(NAME, params))
    at = open_app("pages/experiments.py")
    at.segmented_control(key=experiment_params.EXP_NAME).set_value(NAME).run()
    at.segmented_control(key=experiment_params.EXP_BUDGET).set_value("quick").run()
    assert_ok(at)
    verdicts = [i.value for i in at.info if "**Measured:**" in i.value]
    assert len(verdicts) == 1 and "No meaningful difference" in verdicts[0] and "±2.0 points" in verdicts[0]
    assert not at.success and not [w for w in at.warning if "**Measured:**" in w.value]
    evidence = next(t.value for t in at.table if "margin" in t.value.columns)
    assert list(evidence["margin"]) == ["±2.0 points"]
    assert evidence["outcome"].iloc[0].startswith("no meaningful difference: 90% CI [")
