"""Presenter view and dark theme in a real Chromium at a projector's 1280 x 720: text and chart labels
measured as drawn, the modebar and the sidebar gone, the first chart on the first screen, nothing cut
off; screenshots in tests/screenshots/ (presenter-*.png) for a human to look at."""

import pytest

from tests.browser.helpers import GROWN, MEASURE, PROJECTOR, SHOTS, TIMEOUT_MS, wait_rendered

pytestmark = pytest.mark.browser


PHONE = {"width": 390, "height": 844}


def _open(chromium, url, viewport):
    page = chromium.new_page(viewport=viewport)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    wait_rendered(page)
    page.wait_for_timeout(500)
    return page, errors


@pytest.mark.parametrize("url_path, dark", [("attention", False), ("positional", True)])
def test_presenter_view_at_1280x720(server, chromium, url_path, dark):
    query = "present=1" + ("&dark=1" if dark else "")
    page, errors = _open(chromium, f"{server}/{url_path}?{query}", PROJECTOR)
    try:
        got = page.evaluate(MEASURE)
        assert got["body"] >= 20 and got["caption"] >= 17, got
        assert got["ticks"] >= 14, got
        assert got["modebars"] == 0 and not got["sidebar"], got
        assert got["chartTop"] < PROJECTOR["height"], got  # a chart on the first screen
        assert not got["cut"], got
        assert ("invert" in got["background"]) == dark, got
        grown = page.evaluate(GROWN)
        assert not grown, f"charts whose margins Plotly grew (title, given, drawn): {grown}"
        assert not errors, errors
        assert page.locator(".st-key-present_menu").is_visible()  # the way out stays on the page
        SHOTS.mkdir(parents=True, exist_ok=True)
        name = f"presenter-{'dark-' if dark else ''}{url_path}"
        page.screenshot(path=str(SHOTS / f"{name}-1280x720.png"))
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(700)
        page.screenshot(path=str(SHOTS / f"{name}-phone.png"))
    finally:
        page.close()


def test_the_corner_menu_turns_presenter_mode_off(server, chromium):
    page, errors = _open(chromium, f"{server}/positional?present=1", PROJECTOR)
    try:
        page.locator(".st-key-present_menu button").first.click()
        page.locator(".st-key-present_toggle label").click()
        page.wait_for_function("() => !location.search.includes('present=1')", timeout=TIMEOUT_MS)
        wait_rendered(page)
        page.wait_for_selector("[data-testid=stSidebar] [data-testid=stRadio]", state="visible", timeout=TIMEOUT_MS)
        assert page.evaluate(MEASURE)["ticks"] < 14  # the figures as built again
        assert not errors, errors
    finally:
        page.close()


def test_attention_at_1280x720_shows_a_chart_on_the_first_screen_and_cuts_no_label(server, chromium):
    page, _ = _open(chromium, f"{server}/attention", PROJECTOR)
    try:
        got = page.evaluate(MEASURE)
        assert got["chartTop"] < PROJECTOR["height"] and not got["cut"], got
        assert got["ticks"] >= 12, got
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "attention-1280x720.png"))
    finally:
        page.close()


# Every animation frame until the page settles: the smallest body paragraph's font size, as it is painted.
FRAMES = """(() => { window.__paints = [];
  const tick = () => {
    const ps = [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMarkdown] p')]
      .filter(e => e.getClientRects().length && !e.closest('[data-testid=stCaptionContainer]'));
    if (ps.length) window.__paints.push(Math.min(...ps.map(e => parseFloat(getComputedStyle(e).fontSize))));
    if (window.__paints.length < 3000) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick); })();"""


@pytest.mark.parametrize("path", ["lessons?lesson=ch2&step=1&present=1", "attention?present=1"])
def test_presenter_fonts_are_there_from_the_first_paint(server, chromium, path):
    """A projector opened on a presenter link never shows its text at the ordinary 16 px first: every frame
    that draws a paragraph draws it at the presenter's 20 px or more (the first run waits for its CSS)."""
    context = chromium.new_context(viewport=PROJECTOR)   # a browser that never ran this app: a first session
    context.add_init_script(FRAMES)
    page = context.new_page()
    try:
        page.goto(f"{server}/{path}")
        wait_rendered(page)
        page.wait_for_timeout(300)
        paints = page.evaluate("window.__paints")
        assert paints, "no frame drew a paragraph"
        assert min(paints) >= 20, f"{sum(p < 20 for p in paints)} of {len(paints)} frames drew text at {min(paints)} px"
    finally:
        context.close()
