"""The Runs page as a researcher keeps it, in a real Chromium: a study's runs, tags and notes on screen at
1280x720 and on a 390x844 phone with no serious axe-core violation, and one's own notes saved by keyboard
alone (another visitor's run, open beside them, offers no form). Screenshots go to tests/screenshots/."""

import json
import time

import pytest

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store import runs
from explorer.tasks import TaskConfig, make_task
from explorer.train_config import TrainConfig
from explorer.training import train_steps
from tests.browser.axe import violations
from tests.browser.helpers import SHOTS, TIMEOUT_MS, streamlit_server, wait_rendered
from tests.browser.rooms import DESKTOP, PHONE
from ui.owner import COOKIE, id_of

pytestmark = pytest.mark.browser

TOKEN = "run-notes-browser-token-0123456789"   # this browser's owner cookie


def save_tiny(name: str, owner_token: str | None, extra: dict | None = None) -> str:
    task = make_task(TaskConfig("copy", n_symbols=4, min_len=2, max_len=4, n_train=40, n_val=8))
    model = build_model(task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1,
                                                      n_decoder_layers=1, d_ff=32)), seed=0)
    cfg = TrainConfig(steps=4, batch_size=4, eval_every=4, eval_examples=8)
    history = list(train_steps(model, task, cfg))
    return runs.save_run(name, model, task.cfg, cfg, history, extra=extra,
                         owner=id_of(owner_token) if owner_token else None).name


@pytest.fixture(scope="module")
def notes_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("run-notes")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EXPLORER_RUNS_DIR", str(tmp / "runs"))
        for trial in (0, 1):
            save_tiny(f"lr-study-t{trial}", TOKEN, {"search": "lr-study", "trial": trial})
        theirs = save_tiny("theirs", "someone-elses-token-0123456789")
        runs.annotate_run(theirs, notes="Their notes: **not** markup", tags=["their-tag"])
        mine = save_tiny("mine", TOKEN)   # the newest: the run the page opens on
        runs.annotate_run(mine, tags=["baseline"])
    with streamlit_server(tmp) as url:
        yield url, tmp / "runs"


def open_runs(chromium, url: str, viewport: dict):
    context = chromium.new_context(viewport=viewport)
    context.add_cookies([{"name": COOKIE, "value": TOKEN, "url": url}])
    page = context.new_page()
    page.goto(f"{url}/runs")
    wait_rendered(page)
    page.get_by_role("textbox", name="Notes").wait_for(timeout=TIMEOUT_MS)
    return context, page


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_runs_page_with_studies_tags_and_notes_has_no_serious_violation(notes_server, chromium, viewport):
    url, _ = notes_server
    context, page = open_runs(chromium, url, viewport)
    try:
        assert page.locator(".st-key-runs_study").is_visible() and page.locator(".st-key-runs_tag").is_visible()
        assert not violations(page)
        if viewport is PHONE:   # nothing scrolls the page sideways on a phone (the table scrolls in itself)
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"runs-notes-{viewport['width']}.png"))
        page.get_by_role("textbox", name="Notes").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"runs-notes-editor-{viewport['width']}.png"))
    finally:
        context.close()


def test_ones_own_notes_are_saved_by_keyboard(notes_server, chromium):
    url, root = notes_server
    context, page = open_runs(chromium, url, DESKTOP)
    try:
        page.get_by_role("textbox", name="Notes").focus()
        page.keyboard.type("warmup 30 fixed the spike")
        for _ in range(4):   # past the Tags label's help button, to the Tags box
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.getAttribute('aria-label')") == "Tags":
                break
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Tags"
        page.keyboard.press("Control+A")
        page.keyboard.type("baseline, warmup")
        page.keyboard.press("Enter")   # Enter in a form's text input submits the form
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while time.monotonic() < deadline:
            meta = json.loads((root / "mine" / "meta.json").read_text())
            if meta.get("notes"):
                break
            time.sleep(0.3)
        assert meta["notes"] == "warmup 30 fixed the spike" and meta["tags"] == ["baseline", "warmup"]
        theirs = json.loads((root / "theirs" / "meta.json").read_text())
        assert theirs["notes"] == "Their notes: **not** markup"   # untouched
    finally:
        context.close()
