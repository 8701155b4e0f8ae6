"""axe-core in a page (from the axe-playwright-python wheel: nothing fetched): its WCAG 2.0/2.1/2.2 A and AA
rules, and the serious or critical violations they find."""

from pathlib import Path

import axe_playwright_python

AXE = (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text()
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
RUN = """async (tags) => { const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
  return r.violations.filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ')}`); }"""

def violations(page) -> list[str]:
    if not page.evaluate("() => !!window.axe"):
        page.evaluate(AXE)
    return page.evaluate(RUN, TAGS)
