"""axe-core in a page (from the axe-playwright-python wheel: nothing fetched): its WCAG 2.0/2.1/2.2 A and AA
rules, and the serious or critical violations they find; and every chart named and described (ui/a11y.py)."""

from pathlib import Path

import axe_playwright_python

from tests.browser.helpers import TIMEOUT_MS

AXE = (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text()
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
RUN = """async (tags) => { const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
  return r.violations.filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ')}`); }"""

# Every chart: a name, and words that say what it shows (what its aria-describedby points at).
CHARTS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(p => ({
  name: p.getAttribute('aria-label'), role: p.getAttribute('role'),
  words: document.getElementById(p.getAttribute('aria-describedby'))?.textContent?.trim() ?? ''}))"""


def violations(page) -> list[str]:
    if not page.evaluate("() => !!window.axe"):
        page.evaluate(AXE)
    return page.evaluate(RUN, TAGS)


def charts_described(page) -> None:
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')].every(p => "
                           "p.getAttribute('aria-describedby'))", timeout=TIMEOUT_MS)
    for chart in page.evaluate(CHARTS):
        assert chart["role"] == "figure" and chart["name"], chart
        assert len(chart["words"]) > len(chart["name"]) + 10, chart   # the title and what the data show
