"""The run report offline: opened from disk in Chromium with every request outside the file aborted, it
draws every chart, and the time-lapse plays in Plotly alone."""

import pytest

from explorer.export.report import build_report
from explorer.store.subject import open_subject
from tests.export_run import SNAPSHOT_STEPS, save_tiny_run

pytestmark = pytest.mark.browser
# Charts whose SVG holds drawn traces: lines and bars (.trace) or heatmap images (.hm).
DRAWN = ("Array.from(document.querySelectorAll('.js-plotly-plot'))"
         ".filter(d => d.querySelector('.main-svg .trace, .main-svg .hm')).length")


def test_report_draws_every_chart_with_the_network_blocked(chromium, tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    save_tiny_run()
    text = build_report(open_subject("tiny-lapse"))
    path = tmp_path / "report.html"
    path.write_text(text, encoding="utf-8")
    charts = text.count('class="figure"')
    assert charts == 8
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    blocked = []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(path.as_uri())
        page.wait_for_function(f"{DRAWN} >= {charts}", timeout=60_000)
        assert page.evaluate("document.querySelectorAll('.js-plotly-plot').length") == charts
        assert blocked == [] and errors == []
        # Play: the time-lapse walks its snapshots from the first (its title names each step) back to the last.
        lapse = page.locator(".js-plotly-plot", has=page.locator("text=▶ Play"))
        title = lapse.locator(".gtitle")
        assert title.text_content().endswith(f"step {SNAPSHOT_STEPS[-1]}")
        lapse.locator("text=▶ Play").click()
        page.wait_for_function(f"t => t.textContent.endsWith('step {SNAPSHOT_STEPS[0]}')",
                               arg=title.element_handle(), timeout=10_000)
        page.wait_for_function(f"t => t.textContent.endsWith('step {SNAPSHOT_STEPS[-1]}')",
                               arg=title.element_handle(), timeout=10_000)
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    finally:
        page.close()
