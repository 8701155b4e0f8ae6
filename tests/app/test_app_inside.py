"""The Inside the model page under AppTest: an encoder-decoder, the classifier and the language model; the
figures carry the library's numbers, a focused head follows the link, and a run's heads over training show."""

import numpy as np
import pytest

from explorer import interpret
from explorer.interpret import Part, learning
from explorer.model import build_model
from explorer.store import checkpoints
from explorer.store.runs import save_run
from explorer.tasks import TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import new_state, train_steps
from tests.app.helpers import SHIPPED, array, assert_ok, figures, open_app
from ui import inside, models

PAGE = "pages/inside.py"


@pytest.fixture
def shipped(monkeypatch):
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", SHIPPED)


def by_title(at, start: str) -> dict:
    return next(f for f in figures(at) if f["layout"].get("title", {}).get("text", "").startswith(start))


def view(at, name: str):
    at.segmented_control(key=inside.VIEW).set_value(name).run()
    assert_ok(at)
    return at


def heading(at) -> str:
    return at.subheader[0].value


def test_encoder_decoder_ablation_shows_the_library_drops_and_focuses_a_clicked_head(shipped):
    at = open_app(PAGE, query={models.PRETRAINED: "reversal-fast"})
    sel = at.session_state[models.SELECTED]
    heat = by_title(at, "What each head is worth")
    ticks = heat["layout"]["yaxis"]["ticktext"]
    assert ticks == ["Enc self L0", "Enc self L1", "Dec self L0", "Dec self L1", "Cross L0", "Cross L1"]
    z = array(heat["data"][0]["z"]).astype(float)
    want = interpret.ablate(sel.model, sel.task, n=inside.N_EXAMPLES, which=[Part("cross", 1, 0), Part("cross", 1)])
    assert z[5, 0] == pytest.approx(want.loc[0, "exact_drop"]) and z[5, 4] == pytest.approx(want.loc[1, "exact_drop"])
    assert heading(at) == "Cross L1 H0"                      # the head whose removal costs most
    said = [m.value for m in at.markdown if "Without it" in m.value][0]
    assert said.split("**Without it:**")[0] != said.split("**Without it:**")[1]
    # a click stores the cell's head (pick_head); the page then outlines and explains that one
    at.session_state[inside.KIND], at.session_state[inside.LAYER], at.session_state[inside.HEAD] = "cross", 0, 2
    at.run()
    assert_ok(at)
    assert heading(at) == "Cross L0 H2" and at.query_params[inside.HEAD] == "2"
    (outline,) = by_title(at, "What each head is worth")["layout"]["shapes"]
    assert (outline["x0"], outline["y0"]) == (1.5, 3.5)
    assert by_title(at, "Cross L0 H2: where it looks")


def test_the_attention_pages_link_opens_that_heads_ablation(shipped):
    at = open_app("pages/attention.py", query={models.PRETRAINED: "reversal-fast"})
    (link,) = at.main.get("page_link")
    assert link.proto.page == "inside" and "inside_kind=cross" in link.proto.query_string
    query = dict(pair.split("=") for pair in link.proto.query_string.split("&"))
    query = {k: v.replace("+", " ") for k, v in query.items()}
    at = open_app(PAGE, query={models.PRETRAINED: "reversal-fast", **query})
    assert heading(at) == f"Cross L{query[inside.LAYER]} H{query[inside.HEAD]}"


def test_classifier_ablation_lens_and_patching(shipped):
    at = open_app(PAGE, query={models.PRETRAINED: "order-pe"})
    assert at.selectbox(key=inside.METRIC).options == ["Accuracy", "Loss"]
    assert by_title(at, "What each head is worth")["layout"]["yaxis"]["ticktext"] == ["L0"]
    sel = at.session_state[models.SELECTED]
    at.segmented_control(key=inside.MODE).set_value("mean").run()
    assert_ok(at)
    z = array(by_title(at, "What each head is worth")["data"][0]["z"]).astype(float)
    want = interpret.ablate(sel.model, sel.task, mode="mean", n=inside.N_EXAMPLES, which=[Part("enc_self", 0, 2)])
    assert z[0, 2] == pytest.approx(want.loc[0, "exact_drop"])
    view(at, "lens")
    lens = interpret.logit_lens(sel.model, sel.task, 0)
    z = array(by_title(at, "What each encoder layer")["data"][0]["z"]).astype(float)
    assert np.allclose(z, lens.p_correct, atol=1e-6) and z[-1, 0] == pytest.approx(
        lens.output[0, lens.correct[0]], abs=1e-6)
    view(at, "patching")
    assert any("A and B swap places" in m.value for m in at.markdown)
    assert inside.POSITION not in [n.key for n in at.number_input]   # A and B swap: no position to choose
    assert by_title(at, "One head put back")


def test_language_model_views(shipped):
    at = open_app(PAGE, query={models.PRETRAINED: "char-lm"})
    assert at.selectbox(key=inside.METRIC).value == "loss_rise"
    assert "rise in loss" in by_title(at, "What each head is worth")["layout"]["xaxis"]["title"]["text"]
    view(at, "patching")
    assert by_title(at, "The decoder's residual stream")
    at.number_input(key=inside.POSITION).set_value(3).run()
    assert_ok(at)
    assert any("character 3 changes" in m.value for m in at.markdown)
    view(at, "embeddings")
    at.segmented_control(key=inside.DIMS).set_value(3).run()
    assert_ok(at)
    scatter = by_title(at, "Tokens: principal axes")["data"][0]
    assert scatter["type"] == "scatter3d" and "⏎" in scatter["text"]


def test_over_training_shows_each_heads_match_from_a_saved_run():
    task = make_task(TaskConfig("reversal", n_symbols=6, min_len=3, max_len=5, n_train=60, n_val=10))
    model = build_model(task.model_config(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=2, d_ff=32))
    cfg = TrainConfig(steps=6, batch_size=8, snapshot_every=2)
    history = list(train_steps(model, task, cfg, new_state(model, task, cfg)))
    info = save_run("followed", model, task.cfg, cfg, history)
    at = open_app(PAGE, query={inside.VIEW: "Over training"})
    assert at.selectbox(key=inside.RUN).value == info.name
    lines = by_title(at, "Each head's match")["data"]
    table = interpret.heads_over_training(info.name)
    assert [t["name"] for t in lines] == ["L0 H0", "L0 H1", "L1 H0", "L1 H1"]
    want = table[(table["layer"] == 1) & (table["head"] == 0)]["match"].to_numpy()
    assert np.allclose(np.asarray(lines[2]["y"], dtype=float), want)
    at.segmented_control(key=inside.LINES).set_value("entropy").run()
    assert_ok(at)
    assert by_title(at, "Each head's entropy")


def test_over_training_without_snapshots_says_where_to_get_them():
    at = open_app(PAGE, query={inside.VIEW: "Over training"})
    assert any("No run here recorded attention snapshots" in i.value for i in at.info)


def test_over_training_of_the_shipped_reversal_from_its_replayed_snapshots(shipped):
    at = open_app(PAGE, query={models.PRETRAINED: "reversal-fast", inside.VIEW: "Over training"})
    assert at.selectbox(key=inside.RUN).value == "reversal-fast"
    lines = by_title(at, "Each head's match")["data"]
    assert len(lines) == 2 * 4 and lines[0]["x"][-1] == 800


@pytest.mark.parametrize("name", ["reversal-fast", "char-lm"])
def test_a_shipped_models_first_ablation_view_is_read_from_its_stored_table(shipped, monkeypatch, name):
    inside.ablation.clear()

    def refuse(*args, **kwargs):
        raise AssertionError("computed instead of read from pretrained/ablation/")
    monkeypatch.setattr(interpret, "ablate", refuse)
    at = open_app(PAGE, query={models.PRETRAINED: name})
    assert by_title(at, "What each head is worth")


def test_how_it_learned_shows_the_induction_heads_forming_and_the_phase_change(shipped):
    at = open_app(PAGE, query={models.PRETRAINED: "induction", inside.VIEW: "How it learned"})
    lines = by_title(at, "Each head's induction score")["data"]
    seen = learning.how_it_learned("induction")
    assert len(lines) == 2 * 4 + 1 and lines[-1]["name"] == "loss on the repeated half"
    assert max(lines[4]["y"] + lines[5]["y"] + lines[6]["y"] + lines[7]["y"]) >= 0.4     # a head of layer 1
    assert any(f"falls fastest at step **{seen['phase_step']}**" in m.value for m in at.markdown)
    assert by_title(at, "Each head's previous-token score")


def test_how_it_learned_shows_grokking_and_the_key_frequencies(shipped):
    at = open_app(PAGE, query={models.PRETRAINED: "modular-add", inside.VIEW: "How it learned"})
    curves = by_title(at, "Memorising, then generalising")
    assert curves["layout"]["xaxis"]["type"] == "log"
    assert [t["name"] for t in curves["data"]] == ["training accuracy", "validation accuracy", "weight norm"]
    assert by_title(at, "Which frequencies carry the embeddings")["data"][0]["type"] == "heatmap"
    assert any("key frequencies are" in m.value for m in at.markdown)


def test_how_it_learned_names_the_models_it_is_for(shipped):
    at = open_app(PAGE, query={models.PRETRAINED: "reversal-fast", inside.VIEW: "How it learned"})
    assert any("induction, induction-1l and modular-add" in i.value for i in at.info)
