"""Runs belong to the browser that trained them, in a real `streamlit run` server and two Chromium
contexts (two browsers: two cookie jars, two visitors). The second can tick and open the first one's
run but not delete it; the first, after a reload, still owns it, and its link names it; once the first
deletes it, the second's tab keeps the copy it had open and the link says the run was deleted.
Screenshots of the second visitor's Runs page land in tests/screenshots/ at 1440 px and at 1280x720."""

import re

import pytest

from tests.browser.helpers import (
    RUN_TIMEOUT_MS,
    SHOTS,
    WIDTH,
    assert_no_exception,
    fit_viewport,
    press,
    streamlit_server,
    wait_rendered,
)

pytestmark = pytest.mark.browser

STEPS = 30
QUERY = (f"train_steps={STEPS}&train_warmup=5&cfg_d_model=16&cfg_d_ff=32&cfg_n_encoder_layers=1"
         "&cfg_n_decoder_layers=1")
SIDEBAR, MAIN = "[data-testid=stSidebar]", "[data-testid=stMain]"


def goto(page, url: str) -> None:
    page.goto(url)
    wait_rendered(page)
    assert_no_exception(page)


def settle(page) -> None:
    """Wait for the rerun an action started to end (the app state flips to running, then back)."""
    page.wait_for_timeout(400)
    wait_rendered(page)


def nav(page, title: str) -> None:
    """Another page of the app in the same session (a reload would start a new one)."""
    page.locator(f".st-key-menu a:has-text('{title}')").click()
    settle(page)
    assert_no_exception(page)


def screenshots(page, name: str) -> None:
    """The whole page at 1440 px, and what a 1280x720 screen shows of it."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    fit_viewport(page)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.wait_for_timeout(700)
    page.screenshot(path=str(SHOTS / f"{name}-1280x720.png"))
    page.set_viewport_size(size)


def owner_shown(page, name: str) -> str:
    """The Owner cell of run `name` in the Runs table (the grid is a canvas; the DOM holds a hidden
    accessible copy of its cells)."""
    row = page.locator(f"{MAIN} [data-testid=stDataFrame] tr:has(td:text-is('{name}'))").first
    row.wait_for(state="attached", timeout=30_000)
    text = row.text_content()
    return next(whose for whose in ("yours", "another visitor's", "no owner") if whose in text)


def tick_first_row(page) -> None:
    """Tick the Runs table's first row: a click on its row marker (the grid is a canvas)."""
    box = page.locator(f"{MAIN} [data-testid=stDataFrame]").first.bounding_box()
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)  # the marker column, under the 35 px header
    page.locator(f"{MAIN}:has-text('Showing the newest run')").wait_for(state="detached", timeout=RUN_TIMEOUT_MS)
    settle(page)


def try_to_delete(page) -> None:
    """What a visitor does to delete the run the Runs page shows: Delete…, then Yes, if they can."""
    delete = page.locator(".st-key-runs_delete button:visible")
    if delete.is_enabled():
        delete.click()
        page.locator(".st-key-runs_delete_yes button:visible").click(timeout=RUN_TIMEOUT_MS)
        settle(page)


def test_a_second_session_cannot_delete_the_first_ones_run(tmp_path, chromium):
    runs = tmp_path / "runs"
    with streamlit_server(tmp_path) as url:
        first = chromium.new_context(viewport={"width": WIDTH, "height": 1000})
        second = chromium.new_context(viewport={"width": WIDTH, "height": 1000})
        try:
            # the first visitor trains a run
            a = first.new_page()
            goto(a, f"{url}/train?{QUERY}")
            press(a, "train_start")
            a.wait_for_selector("[data-testid=stAlertContentSuccess]:has-text('saved as run')", timeout=RUN_TIMEOUT_MS)
            (name,) = [p.name for p in runs.iterdir() if p.is_dir()]

            # the second visitor ticks it on the Runs page and tries to delete it
            b = second.new_page()
            goto(b, f"{url}/runs")
            tick_first_row(b)
            try_to_delete(b)
            assert (runs / name).is_dir(), "the second visitor deleted the first one's run"
            assert owner_shown(b, name) == "another visitor's"
            assert b.locator(f"{MAIN} [data-testid=stCaptionContainer]:has-text('only they can delete it')").count()
            screenshots(b, "runs-another-visitors-run")

            # a reload of the first browser is the same visitor: still theirs; the sidebar's link names it
            goto(a, f"{url}/runs")
            assert owner_shown(a, name) == "yours"
            a.locator(f"{SIDEBAR} label:has-text('Trained run')").click()
            settle(a)
            a.wait_for_url(re.compile(rf"model_run={re.escape(name)}(&|$)"), timeout=RUN_TIMEOUT_MS)
            link = a.url

            # the second visitor opens the link; the first deletes the run: the second's tab keeps its copy,
            # and the link, opened afresh, says the run is gone rather than showing another
            goto(b, link)
            assert f"{name} ·" in b.locator(SIDEBAR).inner_text()
            try_to_delete(a)
            assert not (runs / name).exists()
            nav(b, "Attention")
            sidebar = b.locator(SIDEBAR).inner_text()
            assert "deleted from the server since this tab opened it" in sidebar and f"{name} ·" in sidebar
            goto(b, link)
            assert f"Run {name} was deleted" in b.locator(f"{SIDEBAR} [data-testid=stAlertContentWarning]").inner_text()
        finally:
            first.close()
            second.close()
