"""Training in a real headless Chromium: press Train, watch the loss curve grow, Stop, Resume, finish.
Buttons are addressed by key (`.st-key-KEY button`): Streamlit's own toolbar has a "Stop" too.
Screenshots of the running and finished page land in tests/screenshots/ for a human to review."""

import re

import pytest

from tests.browser.helpers import (
    GROWN,
    LAST_STEP,
    LOSS,
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

# A small model, so the run takes seconds even on a busy machine, but long enough to stop midway (800 steps
# took 5 s on a fast machine, and a run could end before the test pressed Stop).
STEPS = 2000
QUERY = (f"train_steps={STEPS}&train_warmup=20&cfg_d_model=32&cfg_d_ff=64&cfg_n_encoder_layers=1"
         "&cfg_n_decoder_layers=1")
LOSS_POINTS = f"""() => {{ const el = {LOSS};
                          return el && el._fullData && el._fullData.length ? el._fullData[0]._length : 0; }}"""


def step_shown(page) -> int:
    match = re.search(r"Step\s+([\d,]+) /", page.locator("[data-testid=stMain]").inner_text())
    assert match, "no step counter on the page"
    return int(match.group(1).replace(",", ""))


@pytest.fixture
def train_page(tmp_path, chromium):  # noqa: F811 (the imported fixture)
    with streamlit_server(tmp_path) as url:
        page = chromium.new_page(viewport={"width": WIDTH, "height": 1000})
        try:
            page.goto(f"{url}/train?{QUERY}")
            wait_rendered(page)
            yield page
        finally:
            page.close()  # the session ends: its worker stops


def test_train_watch_the_curve_grow_stop_resume_and_finish(train_page):
    page = train_page
    assert_no_exception(page)
    press(page, "train_start")
    page.wait_for_function(f"({LOSS_POINTS})() > 0", timeout=RUN_TIMEOUT_MS)
    first = page.evaluate(LAST_STEP)
    # the curve grows live (its last step; its points are thinned to a few hundred, so their count may not)
    page.wait_for_function(f"({LAST_STEP})() > {first}", timeout=RUN_TIMEOUT_MS)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "train-running.png"), full_page=True)

    press(page, "train_stop")
    page.wait_for_selector("[data-testid=stAlertContentInfo]:has-text('Resume continues')", timeout=RUN_TIMEOUT_MS)
    stopped_at = step_shown(page)
    assert 0 < stopped_at < STEPS
    page.wait_for_timeout(1500)
    assert step_shown(page) == stopped_at  # stopped means stopped

    press(page, "train_resume")
    page.wait_for_selector(f"[data-testid=stAlertContentSuccess]:has-text('Finished {STEPS} steps')",
                           timeout=RUN_TIMEOUT_MS)
    wait_rendered(page)
    assert step_shown(page) == STEPS
    assert_no_exception(page)
    page.wait_for_function(f"({LAST_STEP})() === {STEPS}", timeout=RUN_TIMEOUT_MS)  # the curve reaches the end
    assert "Run finished" in page.locator("[data-testid=stSidebar]").inner_text()
    assert_no_exception(page)
    assert not page.evaluate(GROWN)  # every chart drawn once (see test_page_loads_in_chromium)
    fit_viewport(page)
    page.screenshot(path=str(SHOTS / "train-finished.png"), full_page=True)

    # The time-lapse replays in the browser: Play starts over from the first snapshot and walks the
    # chart's slider to the last one, with no rerun of the page.
    title = "document.querySelector('.st-key-train_attention_chart .gtitle').textContent"
    last = page.evaluate(f"() => {title}")
    page.evaluate("""() => { const app = document.querySelector('[data-testid=stApp]'); window.__reruns = 0;
        new MutationObserver(() => { if (app.getAttribute('data-test-script-state') === 'running') window.__reruns++; })
        .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']}); }""")
    button = page.locator(".st-key-train_attention_chart .updatemenu-button").first
    button.scroll_into_view_if_needed()
    box = button.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function(f"() => {title} !== {last!r}", timeout=RUN_TIMEOUT_MS)  # back to the start
    page.wait_for_function(f"() => {title} === {last!r}", timeout=RUN_TIMEOUT_MS)  # played to the end
    assert page.evaluate("window.__reruns") == 0
