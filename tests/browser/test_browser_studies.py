"""The Studies page in a real Chromium: a study the CLI ran loads with its plots; a click on a trial in the
optimisation history selects it (its box, its row ticked) and its link opens the trial's run on the Attention
page; axe-core finds no serious violation with a study open and two compared, at 1280x720 and on a phone.
Screenshots of the list, a study's plots and a comparison at both sizes land in tests/screenshots/."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import axe_playwright_python
import pytest

from explorer.search.studies import list_studies
from tests.browser.helpers import (
    READY,
    ROOT,
    SHOTS,
    TIMEOUT_MS,
    assert_no_exception,
    press,
    streamlit_server,
    wait_rendered,
)
from tests.browser.rooms import DESKTOP, PHONE
from tests.unit.search.samples import pareto, single

pytestmark = pytest.mark.browser

AXE = (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text()
SERIOUS = """async () => { const r = await axe.run(document, {runOnly: {type: 'tag',
  values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}});
  return r.violations.filter(v => ['serious', 'critical'].includes(v.impact)).map(v => v.id); }"""
# The page coordinates of point i of trace `curve` in the chart under `.st-key-KEY`.
POINT = """([key, curve, i]) => { const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const t = gd._fullData[curve], box = gd.getBoundingClientRect();
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  return [box.left + xa._offset + xa.l2p(xa.d2l(t.x[i])), box.top + ya._offset + ya.l2p(ya.d2l(t.y[i]))]; }"""
TRIALS_CURVE = """key => document.querySelector(`.st-key-${key} .js-plotly-plot`)._fullData
  .findIndex(t => t.name === 'trials')"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A server whose storage holds a study the CLI ran (2 tiny trials, saved as runs) and two made with
    Optuna directly (one objective; two objectives, another visitor's)."""
    tmp = tmp_path_factory.mktemp("studies")
    runs = tmp / "runs"
    env = {**os.environ, "EXPLORER_RUNS_DIR": str(runs)}
    subprocess.run([sys.executable, "-m", "explorer", "search", "--task", "reversal-fast", "--trials", "2",
                    "--steps", "3", "--space", "lr=1e-4:1e-2:log", "--space", "d_model=16,32", "--workers", "1",
                    "--study", "cli-study"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=600)
    url = f"sqlite:///{runs / 'search.db'}"
    single(url, "lr-study", trials=10)
    pareto(url, "two-objectives", trials=8).set_user_attr("owner", "another visitor")
    assert {s.name for s in list_studies(storage=url)} == {"cli-study", "lr-study", "two-objectives"}
    with streamlit_server(tmp) as address:
        yield address


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    page.screenshot(path=str(SHOTS / f"studies-{name}-{size['width']}x{size['height']}.png"))


def _open(page, site: str, query: str) -> None:
    page.goto(f"{site}/studies?{query}")
    wait_rendered(page)
    assert_no_exception(page)


def test_a_click_on_a_plotted_trial_selects_it_and_opens_its_run(site, chromium):
    page = chromium.new_page(viewport={"width": 1280, "height": 1400})
    try:
        _open(page, site, "study=cli-study")
        assert page.locator(".st-key-studies_history .js-plotly-plot").count() == 1
        curve = page.evaluate(TRIALS_CURVE, "studies_history")
        x, y = page.evaluate(POINT, ["studies_history", curve, 1])
        page.mouse.click(x, y)
        box = page.locator(".st-key-studies_selected")
        box.wait_for(timeout=TIMEOUT_MS)
        assert "Trial 1" in box.inner_text()
        page.wait_for_selector(READY, timeout=TIMEOUT_MS)
        assert page.locator(".st-key-studies_trials-1").count() == 1   # the table drawn with trial 1's row ticked
        press(page, "studies_open_run")
        page.wait_for_url("**/attention*", timeout=TIMEOUT_MS)
        wait_rendered(page)
        assert_no_exception(page)
        assert "cli-study-t1" in page.locator("[data-testid=stSidebar]").inner_text()
    finally:
        page.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x720", "390x844"])
def test_the_list_a_study_and_a_comparison_pass_axe_and_are_shot(site, chromium, viewport):
    page = chromium.new_page(viewport=viewport)
    found = {}
    try:
        _open(page, site, "study=lr-study")
        _shot(page, "list")
        page.locator("[data-testid=stTabs]").first.scroll_into_view_if_needed()
        _shot(page, "plots-history")
        page.get_by_role("tab", name="Parallel coordinates").click()
        page.wait_for_timeout(700)
        page.locator(".st-key-studies_parallel").scroll_into_view_if_needed()
        _shot(page, "plots-parallel")
        page.evaluate(AXE)
        found["study"] = page.evaluate(SERIOUS)
        _open(page, site, "study=two-objectives&compare=lr-study")
        page.locator(".st-key-studies_compare_b_history").scroll_into_view_if_needed()
        _shot(page, "comparison")
        page.evaluate(AXE)
        found["comparison"] = page.evaluate(SERIOUS)
    finally:
        page.close()
    assert not any(found.values()), found
