"""The Gradients page under AppTest: the profile at initialisation and its verdict over seeds, and
gradients over training compared for two runs (saved or shipped) on one colour scale."""


import numpy as np

from explorer.analysis.gradients import depth_profile, evenness
from explorer.store import checkpoints
from tests.app.helpers import SHIPPED, array, assert_ok, open_app
from tests.app.training_helpers import GRADIENTS, chart, saved_run
from ui import state


def test_gradients_at_initialisation_shows_both_variants():
    at = open_app(GRADIENTS)
    fig = chart(at, "grad_profile_chart")
    assert [t["name"] for t in fig["data"]] == ["Pre-LN", "Post-LN"]
    for t, norm in zip(fig["data"], ("pre", "post")):
        assert np.allclose(array(t["y"]), depth_profile(norm, n_layers=12, d_model=64, seed=0).weight_grad)
    assert any("chapter predicts" in m.value for m in at.markdown)
    at.slider(key=state.GRAD_LAYERS).set_value(4).run()
    at.radio(key=state.GRAD_WHAT).set_value("inputs").run()
    assert_ok(at)
    fig = chart(at, "grad_profile_chart")
    assert np.allclose(array(fig["data"][1]["y"]), depth_profile("post", n_layers=4, d_model=64, seed=0).input_grad)
    assert any("p.grad.norm()" in m.value for m in at.markdown)  # why the input measure differs


def test_the_gradients_verdict_is_taken_over_seeds_and_says_when_it_cannot_tell():
    at = open_app(GRADIENTS)  # the chapter's exercise: 12 layers, each layer's weights
    said = next(m.value for m in at.markdown if "Over 8 seeds" in m.value)
    e = evenness("weights", 12, 64, seeds=range(8))
    assert f"Pre-LN ×{e.pre:.2f}, Post-LN ×{e.post:.2f}" in said
    assert ("Inconclusive" in said) == (e.holds is None) and "Welch's t" in said
    at.slider(key=state.GRAD_LAYERS).set_value(48).run()  # deep stacks: where the chapter says it shows
    said = next(m.value for m in at.markdown if "Over 8 seeds" in m.value)
    assert evenness("weights", 48, 64, seeds=range(8)).holds and "As the chapter predicts" in said


def test_gradients_over_training_compares_two_runs_on_one_colour_scale():
    pre, post = saved_run("copy-preLN-d16-seed0", "pre"), saved_run("copy-postLN-d16-seed0", "post")
    at = open_app(GRADIENTS)
    assert at.selectbox(key=state.GRAD_RUN_A).value == f"run:{pre}"
    assert at.selectbox(key=state.GRAD_RUN_B).value == f"run:{post}"  # a comparable pair: only the norm differs
    a, b = chart(at, state.GRAD_RUN_A), chart(at, state.GRAD_RUN_B)
    assert array(a["data"][0]["z"]).shape == (2, 8)
    assert (a["data"][0]["zmin"], a["data"][0]["zmax"]) == (b["data"][0]["zmin"], b["data"][0]["zmax"])
    assert {t["name"] for t in chart(at, "grad_total_chart")["data"]} == {f"{pre} · grad_norm", f"{post} · grad_norm"}


def test_gradients_over_training_offers_the_shipped_pre_and_post_ln_pair(monkeypatch):
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", SHIPPED)
    at = open_app(GRADIENTS)
    assert at.selectbox(key=state.GRAD_RUN_A).value == "pretrained:reversal-fast"
    assert at.selectbox(key=state.GRAD_RUN_B).value == "pretrained:reversal-fast-postln"
    a, b = chart(at, state.GRAD_RUN_A), chart(at, state.GRAD_RUN_B)
    steps = checkpoints.pretrained_history("reversal-fast")["step"].max()
    assert array(a["data"][0]["z"]).shape[1] == min(steps, 300)
    assert a["layout"]["title"]["text"].startswith("reversal-fast")
    assert (a["data"][0]["zmin"], a["data"][0]["zmax"]) == (b["data"][0]["zmin"], b["data"][0]["zmax"])
