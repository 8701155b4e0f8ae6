"""Every visitor-given string is inert on every page (explorer/quoting.py): hostile values in every URL
parameter a page reads, and a model trained on an uploaded TSV of hostile tokens in the sidebar. Nothing that
reaches markdown is a live link, image or tag, and no figure carries a token's markup."""

import pytest
from streamlit.testing.v1 import AppTest

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store import runs
from explorer.tasks import make_task
from explorer.tasks.own_data import pairs_config
from explorer.train_config import TrainConfig
from tests.app.helpers import PAGES, ROOT, assert_ok, figures
from tests.app.training_helpers import ME
from tests.hostile import VALUES, live_markdown, live_plotly, tsv
from ui import inside, inspecting, lesson_nav, models, owner, presenter, room

# What pages read off the URL themselves; the widgets bound to it are added from the page as drawn.
DIRECT = [lesson_nav.LESSON, lesson_nav.STEP, lesson_nav.LOCK, room.ROOM, room.TEACH, room.NAME, room.OLD_KEY,
          inspecting.ATT_LAYER, inspecting.ATT_HEAD, inspecting.ATT_KIND, inspecting.ATT_REF, inside.KIND,
          inside.LAYER, inside.HEAD, presenter.PRESENT, presenter.DARK, inspecting.INSPECT_TEXT, models.PRETRAINED,
          "search_fields", "search_space_lr", "search_space_d_model", "cfg_d_model", "cfg_norm", "cfg_task"]
WIDGETS = ("text_input", "number_input", "selectbox", "multiselect", "radio", "slider", "select_slider", "toggle",
           "checkbox", "segmented_control", "text_area", "pills", "color_picker", "date_input")
TEXT = ("markdown", "caption", "warning", "error", "info", "success", "title", "header", "subheader", "toast")


@pytest.fixture
def hostile_run(runs_dir) -> str:
    """A run on a TSV of hostile tokens, this visitor's (it is private: only its owner may open it)."""
    task = make_task(pairs_config(tsv()))
    cfg = task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32))
    return runs.save_run("hostile", build_model(cfg, seed=0), task.cfg, TrainConfig(steps=1), [],
                         owner=owner.id_of(ME)).name


def visit(page: str, query: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[owner.TOKEN] = ME
    at.query_params.update(query)
    at.run()
    if page != PAGES[0]:
        at.switch_page(page).run()
    assert_ok(at)
    return at


def drawn_keys(at: AppTest) -> set[str]:
    return {w.key for kind in WIDGETS for w in at.get(kind) if getattr(w, "key", None)}


def hostile(keys, shift: int) -> dict:
    return {key: VALUES[(i + shift) % len(VALUES)] for i, key in enumerate(sorted(keys))}


def assert_inert(at: AppTest, page: str) -> None:
    for kind in TEXT:
        for el in at.get(kind):
            body = getattr(el, "value", None) or getattr(getattr(el, "proto", None), "body", "")
            assert live_markdown(str(body)) == [], (page, kind, str(body)[:300])
    for fig in figures(at):
        assert live_plotly(fig) == [], (page, fig.get("layout", {}).get("title"))


@pytest.mark.parametrize("page", PAGES)
def test_hostile_link_values_and_uploaded_tokens_stay_text(page, hostile_run):
    model = {models.SOURCE: "Trained run", models.RUN: hostile_run}
    first = visit(page, {**hostile(DIRECT, 0), **model})  # the hostile tokens' model, hostile values around it
    assert_inert(first, page)
    keys = (set(DIRECT) | drawn_keys(first)) - {models.SOURCE, models.RUN}
    again = visit(page, {**hostile(keys, 3), **model})    # every value the page draws
    assert_inert(again, page)
    if page == PAGES[0]:  # the sidebar is every page's: a hostile run name once
        assert_inert(visit(page, {models.SOURCE: "Trained run", models.RUN: VALUES[0]}), page)
