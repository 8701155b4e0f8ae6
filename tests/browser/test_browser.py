"""The app in a real headless Chromium: every page in menu.PAGES loads, draws its figures and shows
no exception, and at a laptop's 1440 px axe-core finds no serious violation and every chart is named and
described (the phone and 320 px walks are in test_browser_accessibility.py); a full-page screenshot of each
lands in tests/screenshots/ for a human to review."""


import pytest

from tests.browser.axe import charts_described, violations
from tests.browser.helpers import (
    GROWN,
    SHOTS,
    TILE_NAME_AT,
    TIMEOUT_MS,
    WIDTH,
    fit_viewport,
    streamlit_server,
    wait_rendered,
)
from ui import menu

pytestmark = pytest.mark.browser

# Streamlit's chart draws a new figure, then hands Plotly a copy of it (Plotly.react). Recorded per chart:
# whether each react kept the chart's calculated data; a recalculated copy is drawn in full a second time
# (explorer/figures/layout.py HOUSE says what causes it).
REACTS = """document.addEventListener('DOMContentLoaded', () => { window.__reacts = new Map();
  const hook = gd => { if (window.__reacts.has(gd) || !gd.on) return; let calc = gd.calcdata;
    window.__reacts.set(gd, []);
    gd.on('plotly_react', () => { window.__reacts.get(gd).push(gd.calcdata === calc); calc = gd.calcdata; }); };
  new MutationObserver(() => document.querySelectorAll('.js-plotly-plot').forEach(hook)).observe(
    document.documentElement, {childList: true, subtree: true, attributes: true, attributeFilter: ['class']}); })"""


@pytest.mark.parametrize("file, title, url_path", [spec[:3] for spec in menu.PAGES],
                         ids=[spec[2] for spec in menu.PAGES])
def test_page_loads_in_chromium(server, chromium, file, title, url_path):
    page = chromium.new_page(viewport={"width": WIDTH, "height": 1000})
    outside, errors = [], []  # the app loads nothing from the internet; a page error would blank the app
    # blob: URLs of the app's origin are memory, not network: Streamlit loads a component's inline JS from one.
    page.on("request", lambda request: request.url.startswith((server, f"blob:{server}"))
            or outside.append(request.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(REACTS)
    try:
        first = url_path == menu.PAGES[0][2]
        page.goto(f"{server}/{'' if first else url_path}")
        wait_rendered(page)
        # Each chart drawn once: its first draw and Streamlit's copy (two reacts), the copy's data kept.
        page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')]"
                               ".every(gd => window.__reacts.get(gd)?.length >= 2)", timeout=TIMEOUT_MS)
        assert page.evaluate("[...window.__reacts.values()].flat().every(kept => kept)")
        # ...and once only: no margin had to grow for a colorbar, legend or label (Plotly then draws it all
        # again; explorer/figures/layout.py make_room).
        grown = page.evaluate(GROWN)
        assert not grown, f"charts whose margins Plotly grew (title, given, drawn): {grown}"
        assert not outside, f"requests beyond the app's server: {outside}"
        assert not errors, errors
        assert page.locator("[data-testid=stException]").count() == 0, page.locator(
            "[data-testid=stException]").first.inner_text()
        assert page.locator("[data-testid=stSidebar] [data-testid=stRadio]").count() >= 1  # the model picker
        assert title in page.locator(".st-key-menu").inner_text()
        assert page.evaluate("document.documentElement.lang") == "en"
        charts_described(page)
        found = violations(page)
        assert not found, f"{url_path}: {found}"
        fit_viewport(page)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{url_path}.png"), full_page=True)
    finally:
        page.close()


def test_first_visit_of_a_fresh_server_shows_the_menu_while_pytorch_starts(tmp_path, chromium):
    """The first visitor waits seconds for PyTorch to import: the menu and a note come first, and the
    note is gone once the page is drawn."""
    note = "PyTorch is starting"
    # The most menu links seen beside the note: the navigation and the note are separate messages, and
    # on a loaded machine the browser may draw the note a frame before the menu fills in.
    seen = f"""new MutationObserver(() => {{ if (document.body && document.body.innerText.includes('{note}'))
        window.__note = Math.max(window.__note || 0, document.querySelectorAll(
        '.st-key-menu a').length); }}).observe(document, {{childList: true, subtree: true}});"""
    with streamlit_server(tmp_path) as url:
        page = chromium.new_page(viewport={"width": WIDTH, "height": 1000})
        try:
            page.add_init_script(seen)
            page.goto(url)
            wait_rendered(page)
            assert page.evaluate("window.__note") == len(menu.PAGES)  # the note, with the whole menu beside it
            assert note not in page.locator("[data-testid=stMain]").inner_text()
            assert page.locator("[data-testid=stMain] h1").all_inner_texts() == ["Transformer Explorer"]
        finally:
            page.close()


def test_deep_link_on_a_fresh_server_runs_through_app(tmp_path, chromium):
    """A teacher's link to an inner page is the first request a new server sees: the page must still
    get app.py's frame (navigation and the sidebar's model picker), not Streamlit's legacy pages/ mode."""
    file, title, url_path, _ = menu.PAGES[-1]
    with streamlit_server(tmp_path) as url:
        page = chromium.new_page(viewport={"width": WIDTH, "height": 1000})
        try:
            page.goto(f"{url}/{url_path}")
            wait_rendered(page)
            assert page.locator("[data-testid=stSidebar] [data-testid=stRadio]").count() >= 1
            nav = page.locator(".st-key-menu").inner_text()
            assert title in nav and "frame" not in nav and "widgets" not in nav
        finally:
            page.close()


# Set before a slider click: the close-up's title at the moment the rerun the click causes starts.
TITLE_AT_RERUN = """() => { const app = document.querySelector('[data-testid=stApp]');
  window.__titleAtRerun = null;
  new MutationObserver((_, watch) => {
    if (app.getAttribute('data-test-script-state') !== 'running') return;
    window.__titleAtRerun = document.querySelector('.st-key-att_closeup .gtitle').textContent;
    watch.disconnect(); }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']}); }"""


CLOSEUP = ".st-key-att_closeup"


def _closeup_title(page) -> str:
    return page.locator(f"{CLOSEUP} .gtitle").text_content()


def test_attention_slider_flips_heads_in_the_browser_and_the_server_follows(server, chromium):
    """The close-up's slider shows another head before any rerun starts; the rerun that follows keeps
    it, names it in the page's address, and a new input stays on that head. A click on a tile's name
    in the mosaic and the arrow keys move the slider too."""
    page = chromium.new_page(viewport={"width": WIDTH, "height": 1000})
    try:
        page.goto(f"{server}/attention")
        wait_rendered(page)
        before = _closeup_title(page)
        labels = page.locator(".st-key-att_closeup .slider-label")
        other = next(t for t in labels.all_text_contents() if not before.startswith(f"{t} "))
        labels.first.scroll_into_view_if_needed()  # a mouse click lands only inside the viewport
        box = labels.filter(has_text=other).first.bounding_box()
        page.evaluate(TITLE_AT_RERUN)
        page.evaluate(f"() => document.querySelector('{CLOSEUP} .js-plotly-plot').__before = true")
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # the label sits under the rail
        page.wait_for_function("() => window.__titleAtRerun !== null", timeout=TIMEOUT_MS)
        assert page.evaluate("window.__titleAtRerun").startswith(f"{other} ")  # shown before the server ran
        page.wait_for_timeout(300)
        wait_rendered(page)
        layer, head = other.split()
        assert f"att_layer={layer}" in page.url and f"att_head={head}" in page.url
        assert _closeup_title(page).startswith(f"{other} ")  # the rerun did not put the old head back
        assert page.evaluate(f"() => document.querySelector('{CLOSEUP} .js-plotly-plot').__before")  # nor redraw it
        example = page.locator("[data-testid=stMarkdown]", has_text="correct output").first.inner_text()
        page.locator(".st-key-inspect_index input").fill("2")
        page.locator(".st-key-inspect_index input").press("Enter")
        page.wait_for_function("""old => [...document.querySelectorAll('[data-testid=stMarkdown]')]
            .some(e => e.innerText.includes('correct output') && e.innerText !== old)""", arg=example,
                               timeout=TIMEOUT_MS)  # the new example is on the page
        wait_rendered(page)
        assert _closeup_title(page).startswith(f"{other} ")  # a new input keeps the head
        names = labels.all_text_contents()
        tile = names[(names.index(other) + 2) % len(names)]  # a click on a tile's name in the mosaic
        page.locator(".st-key-att_mosaic").scroll_into_view_if_needed()
        page.evaluate(TITLE_AT_RERUN)
        page.mouse.click(*page.evaluate(TILE_NAME_AT, names.index(tile)))
        page.wait_for_function("() => window.__titleAtRerun !== null", timeout=TIMEOUT_MS)
        assert page.evaluate("window.__titleAtRerun").startswith(f"{tile} ")  # shown before the server ran
        page.wait_for_timeout(300)
        wait_rendered(page)
        assert f"att_layer={tile.split()[0]}" in page.url and f"att_head={tile.split()[1]}" in page.url
        other = tile
        page.locator(CLOSEUP).focus()
        page.keyboard.press("ArrowLeft" if other == names[-1] else "ArrowRight")  # keys move it a step too
        nearby = names[names.index(other) + (-1 if other == names[-1] else 1)]
        page.wait_for_function(f"() => document.querySelector('{CLOSEUP} .gtitle').textContent"
                               f".startsWith('{nearby} ')", timeout=TIMEOUT_MS)
        page.wait_for_timeout(300)
        wait_rendered(page)
        for title in ("Outputs", "Attention"):  # a page left and come back to shows the head it left on
            page.locator(".st-key-menu a", has_text=title).click()
            page.wait_for_selector(f"[data-testid=stMain] h1:has-text('{title}')", timeout=TIMEOUT_MS)
            wait_rendered(page)
        assert _closeup_title(page).startswith(f"{nearby} ")
    finally:
        page.close()
