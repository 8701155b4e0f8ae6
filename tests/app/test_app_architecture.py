"""The Architecture page's checks under AppTest: our modules against PyTorch's, and the two initialisations."""

import re

import pandas as pd
import pytest

from tests.app.helpers import array, assert_ok, figures, open_app

ARCHITECTURE = "pages/architecture.py"
INIT_TITLE = "Gradient norm per block at initialisation"


def init_figure(at) -> dict:
    return next(f for f in figures(at) if f["layout"].get("title", {}).get("text") == INIT_TITLE)


def max_diffs(at) -> list[float]:
    """The max |diff| each verdict reports: "Equal to float rounding: max |diff| 2.4e-07 over 640 values"."""
    return [float(re.search(r"max \|diff\| (\S+)", s.value).group(1)) for s in at.success]


def init_table(at) -> pd.DataFrame:
    return next(t.value for t in at.table if "measure" in t.value.columns).set_index("measure")


def test_architecture_shows_the_pytorch_check_and_both_initialisations():
    at = open_app(ARCHITECTURE)
    verdicts = [s.value for s in at.success]
    assert len(verdicts) == 2 and all(v.startswith("Equal to float rounding") for v in verdicts)
    assert all(d < 1e-5 for d in max_diffs(at))
    assert any("nn.MultiheadAttention(64, 4" in c.value for c in at.caption)
    fig = init_figure(at)
    assert [t["name"] for t in fig["data"]] == ["Xavier uniform", "PyTorch defaults"]
    assert fig["layout"]["yaxis"]["type"] == "log"
    assert list(fig["layout"]["xaxis"]["ticktext"]) == ["enc 0", "enc 1", "dec 0", "dec 1"]
    assert all((array(t["y"]) > 0).all() for t in fig["data"])
    loss = init_table(at).loc["Initial loss"]
    assert loss["Xavier uniform"] != loss["PyTorch defaults"]


RADIOS = ("cfg_attn_scale", "cfg_residual")


@pytest.mark.parametrize("key, value, reason", [
    ("cfg_pos_encoding", "rope", "RoPE rotates"),
    ("cfg_activation", "swiglu", "SwiGLU gates"),
    ("cfg_attn_scale", "none", "always divides the scores by sqrt(d_k)"),
    ("cfg_residual", "none", "always adds each sublayer to its input"),
])
def test_a_config_without_a_pytorch_counterpart_says_why(key, value, reason):
    at = open_app(ARCHITECTURE)
    (at.radio if key in RADIOS else at.selectbox)(key=key).set_value(value).run()
    assert_ok(at)
    assert any(reason in i.value and "No PyTorch counterpart" in i.value for i in at.info)
    assert init_figure(at)  # the initialisation study needs no counterpart


def test_post_ln_check_follows_the_widget():
    at = open_app(ARCHITECTURE)
    at.radio(key="cfg_norm").set_value("post").run()
    assert_ok(at)
    assert any("norm_first=False" in c.value for c in at.caption)
    assert len(max_diffs(at)) == 2 and max(max_diffs(at)) < 1e-5


def test_the_attention_scale_and_the_residuals_come_from_a_link():
    at = open_app(ARCHITECTURE, query={"cfg_attn_scale": "None", "cfg_residual": "Off"})
    assert at.radio(key="cfg_attn_scale").value == "none" and at.radio(key="cfg_residual").value == "none"
    assert not at.error and not at.warning
    assert sum("No PyTorch counterpart" in i.value for i in at.info) == 2
