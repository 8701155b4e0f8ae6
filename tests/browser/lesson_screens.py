"""Walking the lessons in Chromium, shared by tests/browser/test_browser_lesson_screens.py and
bench/lesson_screens.py: where a step's question widgets are drawn, and how far the page is scrolled."""

from __future__ import annotations

from tests.browser.helpers import GROWN, MEASURE, SHOTS, TIMEOUT_MS, wait_rendered

PROJECTOR = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
QUESTION_KEYS = ("lesson_choice", "lesson_lock", "lesson_reveal", "room_dist", "lesson_result")
STEP_LABEL = "[data-testid=stMain] .st-key-lesson_nav b"   # "Step X of N"

# Each keyed element's top and bottom in the page (not the viewport: the scroll is added back), and the
# page's own scroll; the class's chart is found by its Plotly key.
BOXES = """(keys) => {
  const main = document.querySelector('[data-testid=stMain]');
  const scroll = Math.max(window.scrollY, main ? main.scrollTop : 0);
  const box = e => { const r = e.getBoundingClientRect();
    return r.height ? [Math.round(r.top + scroll), Math.round(r.bottom + scroll)] : null; };
  const out = {scroll};
  for (const key of keys) {
    const e = key === 'room_dist' ? document.querySelector('[class*="st-key-room_dist_"]')
                                  : document.querySelector('.st-key-' + key);
    out[key] = e ? box(e) : null;
  }
  return out; }"""


# Each diagram on the page (explorer/figures/diagram.py, drawn in a `drawing_` container): its height, its width and
# its container's, its smallest text, and how far any text reaches past the box it sits in (px, < 0 inside).
DRAWINGS = """() => [...document.querySelectorAll('[class*="st-key-drawing_"]')].map(box => {
  const gd = box.querySelector('.js-plotly-plot');
  if (!gd || !gd._fullLayout) return null;
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, at = gd.getBoundingClientRect();
  const rects = gd._fullLayout.shapes.filter(s => s.type === 'rect' && !(s.name || '').startsWith('block:'))
    .map(s => [xa.l2p(s.x0) + xa._offset, xa.l2p(s.x1) + xa._offset, ya.l2p(s.y1) + ya._offset,
               ya.l2p(s.y0) + ya._offset]);
  let smallest = 1e9, past = -1e9, worst = '';
  for (const t of gd.querySelectorAll('.annotation text, .gtitle')) {
    const r = t.getBoundingClientRect();
    if (!r.width) continue;
    smallest = Math.min(smallest, parseFloat(getComputedStyle(t).fontSize));
    const x0 = r.left - at.left, x1 = r.right - at.left, y0 = r.top - at.top, y1 = r.bottom - at.top;
    const was = past; past = Math.max(past, -x0, x1 - at.width);   // inside the figure
    const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
    for (const [b0, b1, c0, c1] of rects)
      if (b0 < cx && cx < b1 && c0 < cy && cy < c1) past = Math.max(past, b0 - x0, x1 - b1, c0 - y0, y1 - c1);
    if (past > was) worst = t.textContent;
  }
  return {height: at.height, width: at.width, room: box.clientWidth, smallest, past, worst}; })"""


# Each chart's title that reaches past its chart's left or right edge: [its text, by how many px].
TITLES_PAST = """() => [...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')].flatMap(gd => {
  const at = gd.getBoundingClientRect();
  return [...gd.querySelectorAll('.gtitle')].map(t => [t.textContent, t.getBoundingClientRect()])
    .map(([text, r]) => [text, Math.round(Math.max(at.left - r.left, r.right - at.right))])
    .filter(([, past]) => past > 0); })"""


def titles_past(page) -> list:
    return page.evaluate(TITLES_PAST)


# DRAWINGS once it reads the same twice, 250 ms apart: Plotly relays a figure out after its container changes
# width (a phone's page settling), and one measure taken meanwhile saw a label 27 px past its box.
STEADY_DRAWINGS = f"""() => {{ const now = JSON.stringify(({DRAWINGS})());
  const same = window.__drawings === now; window.__drawings = now; return same; }}"""


def drawings(page) -> list[dict]:
    page.evaluate("() => { window.__drawings = undefined; }")
    page.wait_for_function(STEADY_DRAWINGS, polling=250, timeout=TIMEOUT_MS)
    return page.evaluate(DRAWINGS)


def step_shown(page, title: str) -> None:
    """Wait until the page's title is `title` and the page has finished its run."""
    page.wait_for_function("""t => [...document.querySelectorAll('[data-testid=stMain] h1')]
        .some(h => h.innerText.trim() === t)""", arg=title, timeout=TIMEOUT_MS)
    wait_rendered(page)


def says_step(page, k: int, n: int) -> bool:
    return page.evaluate(f"""() => [...document.querySelectorAll('{STEP_LABEL}')]
        .some(b => b.innerText.includes('Step {k} of {n}'))""")


def boxes(page, keys=QUESTION_KEYS) -> dict:
    return page.evaluate(BOXES, list(keys))


def scrolled(page) -> float:
    return page.evaluate(BOXES, [])["scroll"]


def pick_first(page) -> None:
    """Predict: the first choice of a radio, or a number typed in."""
    radio = page.locator(".st-key-lesson_choice [data-testid=stRadioOption]")
    if radio.count():
        radio.first.click()
    else:
        field = page.locator(".st-key-lesson_choice input")
        field.fill("1")
        field.press("Enter")
    wait_rendered(page)


def click(page, key: str) -> None:
    page.locator(f".st-key-{key} button").click()
    wait_rendered(page)


# The smallest tick label or bar label drawn inside the elements `sel` finds (px).
TEXT_PX = """sel => Math.min(...[...document.querySelectorAll(
  [' .xtick text', ' .ytick text', ' .barlayer text'].map(t => sel + t).join(', '))]
  .filter(t => t.getBoundingClientRect().width).map(t => parseFloat(getComputedStyle(t).fontSize)))"""


def smallest_text(page, selector: str) -> float:
    return page.evaluate(TEXT_PX, selector)


# A few steps on the projector: a heatmap, a line chart, a diagram, a bar chart with a question.
PRESENTED = [("ch2", 2), ("ch2", 3), ("module6", 3), ("lesson46", 5)]


def fits_the_projector_in_large_type(page, lesson_id: str, k: int) -> None:
    """Presenter view at 1280x720, the step opened at its top: large text, no modebar nor sidebar, nothing
    cut, the first chart whole on the screen, no margin grown; its screenshot kept."""
    assert scrolled(page) == 0, f"{lesson_id} step {k}"   # as a fresh load of its link shows it
    page.wait_for_timeout(500)
    got = page.evaluate(MEASURE)
    assert got["body"] >= 20 and got["modebars"] == 0 and not got["sidebar"] and not got["cut"], got
    chart = page.locator("[data-testid=stPlotlyChart]").first.bounding_box()
    assert chart["y"] + chart["height"] <= PROJECTOR["height"] + 1, chart   # the whole figure, unscrolled
    if page.locator(".xtick text").count():   # a diagram has no ticks: its text is sized to its boxes
        assert got["ticks"] >= 14, got
    assert not page.evaluate(GROWN)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"presenter-lesson-{lesson_id}-{k}-1280x720.png"))
