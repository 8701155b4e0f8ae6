"""The app in a real headless Chromium: every page in menu.PAGES loads, draws its figures and shows
no exception; a full-page screenshot of each lands in tests/screenshots/ for a human to review."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from ui import menu

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "tests" / "screenshots"
READY = "[data-testid=stApp][data-test-connection-state=CONNECTED][data-test-script-state=notRunning]"
WIDTH = 1440
TIMEOUT_MS = 90_000  # the first page of a fresh server imports torch and builds a task
# True once no element waits for its code (skeletons) and every Plotly chart has drawn its SVG.
DRAWN = """() => !document.querySelector('[data-testid=stSkeleton]')
                 && [...document.querySelectorAll('[data-testid=stPlotlyChart]')]
                    .every(el => el.querySelector('.main-svg'))"""
# Streamlit's chart draws a new figure, then hands Plotly a copy of it (Plotly.react). Recorded per chart:
# whether each react kept the chart's calculated data; a recalculated copy is drawn in full a second time
# (explorer/figures/layout.py HOUSE says what causes it).
REACTS = """document.addEventListener('DOMContentLoaded', () => { window.__reacts = new Map();
  const hook = gd => { if (window.__reacts.has(gd) || !gd.on) return; let calc = gd.calcdata;
    window.__reacts.set(gd, []);
    gd.on('plotly_react', () => { window.__reacts.get(gd).push(gd.calcdata === calc); calc = gd.calcdata; }); };
  new MutationObserver(() => document.querySelectorAll('.js-plotly-plot').forEach(hook)).observe(
    document.documentElement, {childList: true, subtree: true, attributes: true, attributeFilter: ['class']}); })"""

# Charts whose margins Plotly grew past the figure's own (by more than the 1 px it ignores), as
# (title, given l/r/t/b, drawn l/r/t/b).
GROWN = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => [gd.layout.title?.text ?? '',
    ['l', 'r', 't', 'b'].map(s => gd._fullLayout.margin[s]), ['l', 'r', 't', 'b'].map(s => gd._fullLayout._size[s])])
  .filter(([, given, drawn]) => given.some((m, i) => drawn[i] - m > 1))"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"streamlit exited with code {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"streamlit did not answer /_stcore/health within {seconds} s:\n{log.read_text()[-3000:]}")


@contextmanager
def streamlit_server(tmp: Path, port: int | None = None):
    """`streamlit run app.py` on `port` (a free one by default), runs saved under tmp; yields its URL.
    Started again with the same tmp and port, it is the same server restarted (its pages reconnect)."""
    port, log = port or _free_port(), tmp / "streamlit.log"
    env = {**os.environ, "EXPLORER_RUNS_DIR": str(tmp / "runs")}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false"]
    with open(log, "a") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_rendered(page) -> None:
    page.wait_for_selector(READY, timeout=TIMEOUT_MS)
    page.wait_for_selector("[data-testid=stMain] h1", timeout=TIMEOUT_MS)  # content, not just the shell
    page.wait_for_selector(READY, timeout=TIMEOUT_MS)
    page.wait_for_function(DRAWN, timeout=TIMEOUT_MS)


# True once the main element's height is the one the previous animation frame saw, and no script runs.
STEADY = """() => { const h = document.querySelector('[data-testid=stMain]').scrollHeight;
  const steady = window.__fitHeight === h; window.__fitHeight = h;
  return steady && !!document.querySelector('[data-testid=stApp][data-test-script-state=notRunning]'); }"""
SETTLE_MS = 700  # at most, as the fixed wait this replaces; heights measured on all 12 pages settled at once


def _fit_viewport(page) -> None:
    """Streamlit scrolls inside its main element, so a full-page shot needs a viewport that tall;
    content can grow as the window does (charts re-lay out), hence a few rounds."""
    for _ in range(5):
        height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
        target = min(max(height, 1000), 10_000)
        if target == page.viewport_size["height"]:
            return
        page.set_viewport_size({"width": WIDTH, "height": target})
        page.evaluate("window.__fitHeight = undefined")
        try:  # still moving after SETTLE_MS: measure again, as after the fixed wait
            page.wait_for_function(STEADY, polling="raf", timeout=SETTLE_MS)
        except PlaywrightTimeout:
            pass
        page.wait_for_function(DRAWN, timeout=TIMEOUT_MS)


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
        _wait_rendered(page)
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
        assert title in page.locator("[data-testid=stSidebarNav]").inner_text()
        _fit_viewport(page)
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
        '[data-testid=stSidebarNav] a').length); }}).observe(document, {{childList: true, subtree: true}});"""
    with streamlit_server(tmp_path) as url:
        page = chromium.new_page(viewport={"width": WIDTH, "height": 1000})
        try:
            page.add_init_script(seen)
            page.goto(url)
            _wait_rendered(page)
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
            _wait_rendered(page)
            assert page.locator("[data-testid=stSidebar] [data-testid=stRadio]").count() >= 1
            nav = page.locator("[data-testid=stSidebarNav]").inner_text()
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


# The page coordinates of tile i's name in the mosaic: its invisible click target (customdata i).
TILE_NAME_AT = """i => { const gd = document.querySelector('.st-key-att_mosaic .js-plotly-plot');
  const tiles = gd._fullData.find(t => t.name === 'tiles'), j = tiles.customdata.indexOf(i);
  const box = gd.getBoundingClientRect(), xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  return [box.left + xa._offset + xa.l2p(tiles.x[j]), box.top + ya._offset + ya.l2p(tiles.y[j])]; }"""


def _closeup_title(page) -> str:
    return page.locator(f"{CLOSEUP} .gtitle").text_content()


def test_attention_slider_flips_heads_in_the_browser_and_the_server_follows(server, chromium):
    """The close-up's slider shows another head before any rerun starts; the rerun that follows keeps
    it, names it in the page's address, and a new input stays on that head. A click on a tile's name
    in the mosaic and the arrow keys move the slider too."""
    page = chromium.new_page(viewport={"width": WIDTH, "height": 1000})
    try:
        page.goto(f"{server}/attention")
        _wait_rendered(page)
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
        _wait_rendered(page)
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
        _wait_rendered(page)
        assert _closeup_title(page).startswith(f"{other} ")  # a new input keeps the head
        names = labels.all_text_contents()
        tile = names[(names.index(other) + 2) % len(names)]  # a click on a tile's name in the mosaic
        page.locator(".st-key-att_mosaic").scroll_into_view_if_needed()
        page.evaluate(TITLE_AT_RERUN)
        page.mouse.click(*page.evaluate(TILE_NAME_AT, names.index(tile)))
        page.wait_for_function("() => window.__titleAtRerun !== null", timeout=TIMEOUT_MS)
        assert page.evaluate("window.__titleAtRerun").startswith(f"{tile} ")  # shown before the server ran
        page.wait_for_timeout(300)
        _wait_rendered(page)
        assert f"att_layer={tile.split()[0]}" in page.url and f"att_head={tile.split()[1]}" in page.url
        other = tile
        page.locator(CLOSEUP).focus()
        page.keyboard.press("ArrowLeft" if other == names[-1] else "ArrowRight")  # keys move it a step too
        nearby = names[names.index(other) + (-1 if other == names[-1] else 1)]
        page.wait_for_function(f"() => document.querySelector('{CLOSEUP} .gtitle').textContent"
                               f".startsWith('{nearby} ')", timeout=TIMEOUT_MS)
        page.wait_for_timeout(300)
        _wait_rendered(page)
        for title in ("Outputs", "Attention"):  # a page left and come back to shows the head it left on
            page.locator("[data-testid=stSidebarNav] a", has_text=title).click()
            page.wait_for_selector(f"[data-testid=stMain] h1:has-text('{title}')", timeout=TIMEOUT_MS)
            _wait_rendered(page)
        assert _closeup_title(page).startswith(f"{nearby} ")
    finally:
        page.close()
