"""Every page runs under Streamlit's AppTest: by default, after widget changes, and across page
switches; the Plotly specs hold the traces and shapes the pages promise."""

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.config import ModelConfig, human, param_count
from explorer.model import build_model
from explorer.store import checkpoints
from explorer.store.runs import save_run
from explorer.tasks import make_task
from explorer.train_config import TrainConfig
from tests.app.helpers import PAGES, SHIPPED, array, assert_ok, figures, open_app
from ui import menu, model_config, models, state


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


# ------------------------------------------------------------------------------------ the frame
@pytest.mark.parametrize("page", PAGES)
def test_page_runs_by_default(page):
    at = open_app(page)
    assert at.title, f"{page} has no title"
    assert at.sidebar.radio(key=models.SOURCE).value == "untrained"  # app.py's sidebar ran on this page too
    assert any("d_model 64" in c.value for c in at.sidebar.caption)


def test_home_shows_the_selected_model_and_links_every_page():
    at = open_app()
    facts = metrics(at)
    cfg = make_task(model_config.DEFAULT_TASK).model_config(ModelConfig())
    assert facts["d_model"] == "64" and facts["Layers"] == "2 + 2" and facts["Norm"] == "Pre-LN"
    assert facts["Parameters"] == human(param_count(cfg)["total"])
    linked = {link.proto.page for link in at.main.get("page_link")}   # the sidebar menu links them all too
    assert len(linked) == len(menu.PAGES) - 1


# --------------------------------------------------------------------------------- architecture
def test_architecture_default_figures_match_the_config():
    at = open_app("pages/architecture.py")
    cfg, err = model_config.build_config(model_config.DEFAULTS, make_task(model_config.DEFAULT_TASK))
    assert err is None
    bars = next(f for f in figures(at) if f["data"][0]["type"] == "bar")
    assert array(bars["data"][0]["x"]).sum() == param_count(cfg)["total"]
    diagram = next(f for f in figures(at) if "shapes" in f["layout"])
    assert "Pre-LN" in diagram["layout"]["title"]["text"]
    table = at.dataframe[0].value
    assert table["Model"].iloc[-1] == "Your config"
    assert table["Params"].iloc[-1] == human(param_count(cfg)["total"])
    assert {"BERT-Base", "GPT-2 Medium", "GPT-3 175B"} <= set(table["Model"])


def test_invalid_head_split_shows_an_error_not_an_exception():
    at = open_app("pages/architecture.py")
    at.number_input(key="cfg_n_heads").set_value(3).run()
    assert_ok(at)
    assert any("n_heads" in e.value and "try" in e.value for e in at.error)
    assert not any("shapes" in f["layout"] for f in figures(at))  # no diagram for a config that cannot exist
    assert at.dataframe[0].value["Model"].iloc[-1] != "Your config"


@pytest.mark.parametrize("key, value, shape_name", [
    ("cfg_norm", "post", "norm:addnorm"),
    ("cfg_pos_encoding", "rope", "note:rope"),
    ("cfg_pos_encoding", "none", "note:none"),
])
def test_architecture_diagram_follows_the_widgets(key, value, shape_name):
    at = open_app("pages/architecture.py")
    widget = at.radio(key=key) if key == "cfg_norm" else at.selectbox(key=key)
    widget.set_value(value).run()
    assert_ok(at)
    assert not at.error
    diagram = next(f for f in figures(at) if "shapes" in f["layout"])
    assert shape_name in {s.get("name") for s in diagram["layout"]["shapes"]}


def test_vector_task_fixes_d_model():
    at = open_app("pages/architecture.py")
    at.selectbox(key=model_config.TASK).set_value("order-vectors").run()
    assert_ok(at)
    assert not at.error
    diagram = next(f for f in figures(at) if "shapes" in f["layout"])
    assert "Encoder classifier" in diagram["layout"]["title"]["text"]
    assert "d_model = 16" in diagram["layout"]["title"]["text"]


def test_config_survives_page_switches_and_drives_the_untrained_model():
    at = open_app("pages/architecture.py")
    at.number_input(key="cfg_d_model").set_value(128).run()
    at.switch_page("pages/home.py").run()
    assert metrics(at)["d_model"] == "128"
    assert at.session_state[models.SELECTED].model.cfg.d_model == 128
    at.switch_page("pages/architecture.py").run()
    assert at.number_input(key="cfg_d_model").value == 128


def test_config_from_the_url():
    """A teacher's link: selection widgets put their label in the URL, numbers their value."""
    at = open_app(query={"cfg_d_model": "32", "cfg_norm": "Post-LN", "cfg_n_heads": "999", "cfg_task": "sort"})
    assert metrics(at)["d_model"] == "32" and metrics(at)["Norm"] == "Post-LN"
    assert metrics(at)["Heads"] == "4 × 8"  # out of range: ignored
    at.switch_page("pages/architecture.py").run()
    assert_ok(at)
    assert at.number_input(key="cfg_d_model").value == 32 and at.radio(key="cfg_norm").value == "post"
    assert at.selectbox(key=model_config.TASK).value == "sort"


# ------------------------------------------------------------------------------------ positional
def test_positional_default_is_the_chapter_exercise():
    at = open_app("pages/positional.py")
    heat, sim, lines = figures(at)
    assert heat["data"][0]["type"] == "heatmap" and array(heat["data"][0]["z"]).shape == (100, 64)
    assert array(sim["data"][0]["z"]).shape == (100, 100)
    ys = [array(t["y"]) for t in lines["data"]]
    assert len(ys) >= 3 and all(np.allclose(y, ys[0]) for y in ys)  # depends on the offset only


def test_positional_rope_scores_depend_on_relative_distance_only():
    at = open_app("pages/positional.py")
    at.radio(key=state.PE_TYPE).set_value("rope").run()
    assert_ok(at)
    _, scores, lines = figures(at)
    z = array(scores["data"][0]["z"])
    assert np.allclose(np.diagonal(z, 3), np.diagonal(z, 3)[0], atol=1e-4)
    ys = [array(t["y"]) for t in lines["data"]]
    assert len(ys) >= 3 and all(np.allclose(y, ys[0], atol=1e-4) for y in ys)
    at.number_input(key=state.PE_D_MODEL).set_value(63).run()
    assert_ok(at)
    assert any("even" in e.value for e in at.error) and not figures(at)


def test_positional_none_says_there_is_nothing_to_show():
    at = open_app("pages/positional.py")
    at.radio(key=state.PE_TYPE).set_value("none").run()
    assert_ok(at)
    assert not figures(at) and any("Nothing to show" in i.value for i in at.info)


def test_positional_alibi_shows_each_heads_slope_and_decay():
    at = open_app("pages/positional.py")
    at.radio(key=state.PE_TYPE).set_value("alibi").run()
    at.number_input(key=state.PE_HEADS).set_value(4).run()
    assert_ok(at)
    bias, decay, mosaic = figures(at)
    slopes = [2 ** (-8 * h / 4) for h in range(1, 5)]                  # the paper's m_h for H = 4
    for trace, m in zip(bias["data"], slopes):
        assert np.allclose(array(trace["y"]), -m * array(trace["x"]))
    for trace, m in zip(decay["data"], slopes):   # weights fall by e^-m per step back
        w = array(trace["y"])
        assert np.allclose(w[1:] / w[:-1], np.exp(-m)) and np.isclose(w.sum(), 1.0)
    z = array(mosaic["data"][0]["z"])
    assert np.isclose(np.nansum(z), 4 * 12)    # 4 heads of 12 rows, each summing to one


def test_positional_learned_shows_the_selected_models_table():
    at = open_app("pages/positional.py")
    at.radio(key=state.PE_TYPE).set_value("learned").run()
    assert not figures(at) and at.info  # the default model uses sinusoids: nothing learned to show
    assert any("reversal-fast-learned" in i.value for i in at.info)  # and the shipped model that has one
    at = open_app("pages/positional.py", state={"cfg_pos_encoding": "learned"})
    at.radio(key=state.PE_TYPE).set_value("learned").run()
    assert_ok(at)
    model = at.session_state[models.SELECTED].model
    z = array(figures(at)[0]["data"][0]["z"])
    assert np.allclose(z, model.encoder.pos.weight.detach().numpy())


# ----------------------------------------------------------------------------- model sources
def test_runs_on_disk_and_in_the_session_appear_in_the_sidebar(runs_dir):
    task = make_task("order")
    cfg = task.model_config(ModelConfig(d_model=32, n_heads=2, n_encoder_layers=1, d_ff=64))
    save_run("disk-run", build_model(cfg, seed=0), task.cfg, TrainConfig(steps=1), [])
    session = models.SelectedModel(build_model(cfg.replace(d_model=16), seed=0), cfg.replace(d_model=16), task,
                               "session-run", "run", "run:session-run")
    at = open_app(state={models.SESSION_RUNS: {"session-run": session}})
    assert at.sidebar.radio(key=models.SOURCE).value == "untrained"
    at.session_state["_pending_selection"] = ("run", "session-run")  # what models.select_run() leaves
    at.run()
    assert at.sidebar.radio(key=models.SOURCE).value == "run"
    assert at.sidebar.selectbox(key=models.RUN).options == ["session-run", "disk-run"]
    assert metrics(at)["d_model"] == "16"
    at.sidebar.selectbox(key=models.RUN).set_value("disk-run").run()
    assert_ok(at)
    assert metrics(at)["d_model"] == "32" and metrics(at)["Architecture"] == "Encoder classifier"


def test_a_broken_run_shows_a_message_not_a_traceback(runs_dir):
    task = make_task("order")
    cfg = task.model_config(ModelConfig(d_model=32, n_heads=2, n_encoder_layers=1, d_ff=64))
    info = save_run("broken", build_model(cfg, seed=0), task.cfg, TrainConfig(steps=1), [])
    (info.path / "model.safetensors").write_bytes(b"not a safetensors file")
    at = open_app(query={models.SOURCE: "Trained run"})
    assert_ok(at)
    assert any("broken" in e.value for e in at.sidebar.error)
    assert metrics(at)["d_model"] == "64"  # fell back to the untrained model


def test_shipped_models_are_the_default_source(tmp_path):
    task = make_task("copy")
    cfg = task.model_config(ModelConfig(d_model=32, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=64))
    checkpoints.save_checkpoint(tmp_path / "pretrained" / "tiny-copy", build_model(cfg, seed=0),
                                {"task": task.cfg.to_dict()})
    manifest = {"models": [{"name": "tiny-copy-test", "path": "tiny-copy", "task": "copy",
                            "description": "A one-layer model that copies its input."}]}
    (tmp_path / "pretrained" / "manifest.json").write_text(json.dumps(manifest))
    at = open_app()
    assert at.sidebar.radio(key=models.SOURCE).value == "pretrained"
    assert metrics(at)["d_model"] == "32" and metrics(at)["Task"] == "copy"
    assert any("copies its input" in c.value for c in at.sidebar.caption)


def test_every_shipped_model_loads_with_its_task(monkeypatch):
    """The repository's own pretrained/ folder: each entry loads and fits the task it names."""
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", SHIPPED)
    for entry in checkpoints.pretrained_manifest():
        sel = models.load_pretrained(entry["name"], entry)
        sel.task.check(sel.config)
        assert sel.source == "pretrained" and not sel.model.training


def test_a_broken_manifest_shows_a_message_not_a_traceback(tmp_path):
    (tmp_path / "pretrained").mkdir()
    (tmp_path / "pretrained" / "manifest.json").write_text("{not json")
    at = open_app()
    assert any("shipped models" in e.value for e in at.sidebar.error)
    assert at.sidebar.radio(key=models.SOURCE).value == "untrained"


def test_architecture_explains_why_large_is_not_the_chapters_300m():
    at = open_app("pages/architecture.py")
    said = next(c.value for c in at.caption if c.value.startswith("**Large:"))
    assert "~300M in the chapter" in said and "cross-attention 50.4M" in said and "embeddings and output 37.9M" in said


def test_a_link_with_invalid_values_says_what_it_did_not_use():
    at = open_app("pages/architecture.py", query={"cfg_d_model": "1000", "cfg_norm": "Middle-LN", "cfg_n_heads": "2"})
    said = " ".join(w.value for w in at.warning)
    assert "Part of this link was not used" in said
    assert "`cfg_d_model=1000` is not valid (it takes a number from 4 to 512), so it is 64" in said
    assert "`cfg_norm=Middle-LN`" in said and "Pre-LN, Post-LN" in said and "cfg_n_heads" not in said
    at.run()
    assert not any("not used" in w.value for w in at.warning)  # said once


def test_sizes_and_durations_read_in_one_unit_system():
    from ui.train_settings import duration
    from ui.widgets import human_bytes
    assert human_bytes(6.18e9) == "5.76 GiB" and human_bytes(2 * 2**20) == "2 MiB"
    assert duration(42) == "42 s" and duration(511) == "8 min 31 s" and duration(3 * 3600 + 300) == "3 h 05 min"
    assert duration(453636 * 60) == "315 days"


def test_architecture_says_when_the_sidebars_model_is_another_config(monkeypatch):
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", SHIPPED)
    at = open_app("pages/architecture.py")  # the sidebar picks the shipped reversal-fast, d_model 32
    sel = at.session_state[models.SELECTED]
    assert sel.source == "pretrained" and sel.config.d_model != 64
    assert any(f"**{sel.label}**, is another config" in i.value for i in at.info)
    at.sidebar.radio(key=models.SOURCE).set_value("untrained").run()
    assert not any("is another config" in i.value for i in at.info)  # the untrained model is this config
