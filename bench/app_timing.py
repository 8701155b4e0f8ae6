"""The app as a class meets it: first paint after `streamlit run`, view changes, live training speed.

    python bench/app_timing.py [--repeats 5] [--steps 800] [--live-runs 1] [--no-live] [--no-views]

1. First paint: seconds from starting `streamlit run app.py` to the Home page rendered in headless
   Chromium (script finished, content drawn, every chart's SVG present), and to its first title on screen
   (on a fresh server, the loading note app.py shows while PyTorch imports). Chromium is launched first.
2. View change: seconds from a click to the new view painted (script finished, charts drawn), timed
   in the page from the click event, for a few everyday clicks: the
   Attention page's attention kind, a head picked on its close-up's slider or on the mosaic (the
   head shown, no rerun; then the rerun that follows done); the Positional page's d_model; a lesson's
   Next and Back in the presenter view, and a reveal whose experiment result is stored. Median over
   --repeats clicks each; also the time as Playwright sees it (its click's own checks and polling added),
   and for a rerun the time of the last change to any chart's drawing (a second draw would show there).
3. Live training: the Train page's default run (the fast reversal preset) trained through the browser,
   then at once the same configuration (read back from the saved run) trained headless in this
   process, with the same TrainConfig, the browser on a blank page and the server idle; --live-runs
   such pairs. Steps/s of each and the ratio of each pair, and their median: this VM's speed drifts by
   up to a third from one minute to the next, so only a run and its own reference, back to back, compare.

Nothing is asserted: this prints figures for bench/README.md. Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The browser tests' harness: the same server launch, readiness checks and Chromium flags.
from tests.browser.conftest import CHROMIUM_ARGS  # noqa: E402
from tests.browser.helpers import DRAWN, TILE_NAME_AT, TIMEOUT_MS, WIDTH, streamlit_server  # noqa: E402
from tests.browser.helpers import wait_rendered as settle  # noqa: E402

# Set before an action: the time of the first press, click or focus change (the user's act: a Plotly
# slider moves on the press, a button acts on the click, a blur commits a typed number), whether the
# script has run since, and the time of the first frame after the one that painted the finished view (a
# check every animation frame, in the page: no round trip to this script in it).
WATCH = """() => { const app = document.querySelector('[data-testid=stApp]');
  window.__t0 = null; window.__ran = false;
  const mark = () => { window.__t0 = window.__t0 ?? performance.now(); };
  for (const type of ['pointerdown', 'click', 'focusout'])
    document.addEventListener(type, mark, {capture: true, once: true});
  window.__watch && window.__watch.disconnect();
  window.__watch = new MutationObserver(() => {
    if (app.getAttribute('data-test-script-state') === 'running') window.__ran = true; });
  window.__watch.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  window.__last = null; window.__charts && window.__charts.disconnect();
  window.__charts = new MutationObserver(records => { if (records.some(r => r.target.closest?.('.js-plotly-plot')))
    window.__last = performance.now(); });
  window.__charts.observe(app, {childList: true, subtree: true, attributes: true});
  window.__painted = null; const drawn = DRAWN_FN;
  const tick = () => { if (window.__ran && app.getAttribute('data-test-script-state') === 'notRunning' && drawn())
      requestAnimationFrame(() => { window.__painted = performance.now(); });  // after that frame's paint
    else requestAnimationFrame(tick); };
  requestAnimationFrame(tick); }""".replace("DRAWN_FN", DRAWN)
# Seconds from the act to the last change of any chart's drawing, read once the charts have been still for
# QUIET_MS: Streamlit hands Plotly a copy of each new chart just after its first draw, which can redraw it.
QUIET_MS = 700
SETTLED = """() => window.__last === null ? null : (window.__last - window.__t0) / 1000"""
RAN = """() => window.__ran && document.querySelector('[data-testid=stApp]')
                  .getAttribute('data-test-script-state') === 'notRunning'"""
# Seconds from the act to the second animation frame after: the frame with the settled view is painted.
PAINTED = """() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(
                  () => done((performance.now() - window.__t0) / 1000))))"""
DONE_PAINTED = """() => window.__painted === null ? null : (window.__painted - window.__t0) / 1000"""


def painted_in_page(page) -> float:
    """Seconds from the act to the frame after the finished view was painted, as WATCH records it."""
    page.wait_for_function("() => window.__painted !== null", timeout=TIMEOUT_MS, polling="raf")
    return page.evaluate(DONE_PAINTED)


def click_and_settle(page, locator) -> tuple[float, float, float, float]:
    """Seconds from the user's act until the rerun it caused has finished and its view is painted:
    (in the page, as Playwright sees it, last chart change, in the page with Playwright's round trips).

    In the page: from the click event (or the blur that commits a typed value) to the frame after the
    first one painted with the script finished and every chart's SVG in place, checked every frame in
    the page. As Playwright sees it: from before `locator.click()`, which first checks that the target
    is visible, stable and enabled (~0.1 s), to the end of its own waits for the same. Last chart
    change: when the drawing of any chart last changed (a redraw after the first, if any), read after
    QUIET_MS of stillness. With round trips: session 9's figure, from the click to two frames after
    this script saw the view finished (its polls' round trips and a frame or two more)."""
    page.evaluate(WATCH)
    t0 = time.perf_counter()
    locator.click()
    page.wait_for_function(RAN, timeout=TIMEOUT_MS, polling="raf")
    page.wait_for_function(DRAWN, timeout=TIMEOUT_MS, polling="raf")
    tripped, seen = page.evaluate(PAINTED), time.perf_counter() - t0
    in_page = painted_in_page(page)
    page.wait_for_timeout(QUIET_MS)
    return in_page, seen, page.evaluate(SETTLED), tripped


def pick_head(page, label: str, on_mosaic: bool) -> tuple[tuple[float, float], tuple[float, float]]:
    """Show head `label` ("L1 H2") in the Attention close-up, by a click on its step of the close-up's
    slider or on its tile's name in the mosaic: seconds until the close-up shows that head (painted; no
    rerun involved), then until the rerun that follows has finished and drawn (the mosaic's outline
    moved), each (in the page, as Playwright sees it): the first from two frames after Playwright saw the
    head shown, the second as `click_and_settle` times it."""
    labels = page.locator(".st-key-att_closeup .slider-label")
    index = labels.all_text_contents().index(label)
    if on_mosaic:
        page.locator(".st-key-att_mosaic").scroll_into_view_if_needed()
        x, y = page.evaluate(TILE_NAME_AT, index)
    else:
        labels.first.scroll_into_view_if_needed()
        box = labels.nth(index).bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2  # the label sits under the rail
    page.evaluate(WATCH)
    t0 = time.perf_counter()
    page.mouse.click(x, y)
    page.wait_for_function(f"() => document.querySelector('.st-key-att_closeup .gtitle')"
                           f"?.textContent.startsWith('{label} ')", timeout=TIMEOUT_MS, polling="raf")
    shown = page.evaluate(PAINTED), time.perf_counter() - t0
    page.wait_for_function(RAN, timeout=TIMEOUT_MS, polling="raf")
    page.wait_for_function(DRAWN, timeout=TIMEOUT_MS, polling="raf")
    seen = time.perf_counter() - t0
    return shown, (painted_in_page(page), seen)


def at_rest(page) -> None:
    """A view change starts from a page at rest, as a person clicks: the last rerun ended a second ago."""
    settle(page)
    page.wait_for_timeout(1000)


def view_changes(page, url: str, repeats: int) -> dict[str, list[tuple[float, float]]]:
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in (
        "attention: switch kind", "attention: pick a head on the slider, close-up shown",
        "attention: pick a head on the mosaic, close-up shown", "attention: pick a head, the rerun after it done",
        "positional: change d_model", "lessons (presenter): Next", "lessons (presenter): Back",
        "lessons: reveal a stored result")}
    page.goto(f"{url}/attention")
    kinds = page.locator(".st-key-att_kind button")
    for i in range(repeats):
        at_rest(page)
        times["attention: switch kind"].append(click_and_settle(page, kinds.nth(i % kinds.count())))
    for i in range(2 * repeats):
        at_rest(page)
        title = page.locator(".st-key-att_closeup .gtitle").text_content()
        others = [t for t in page.locator(".st-key-att_closeup .slider-label").all_text_contents()
                  if not title.startswith(f"{t} ")]
        where = "mosaic" if i % 2 else "slider"
        shown, settled = pick_head(page, others[(3 * i) % len(others)], on_mosaic=where == "mosaic")
        times[f"attention: pick a head on the {where}, close-up shown"].append(shown)
        times["attention: pick a head, the rerun after it done"].append(settled)
    page.goto(f"{url}/positional")
    box = page.locator(".st-key-pe_d_model input")
    for i in range(repeats):
        at_rest(page)
        box.fill(str(32 + 16 * (i % 3)))
        blur = page.locator("[data-testid=stMain] h1")  # a click elsewhere commits the typed value
        times["positional: change d_model"].append(click_and_settle(page, blur))
    lesson_steps(page, url, repeats, times)
    return times


def lesson_steps(page, url: str, repeats: int, times: dict) -> None:
    """Next and Back through a lesson in the presenter view, and a reveal whose experiment is stored."""
    from explorer.lessons import LESSONS

    page.goto(f"{url}/lessons?lesson=ch2&step=1&present=1")
    for _ in range(repeats):
        for name, key in (("Next", "lesson_next"), ("Back", "lesson_prev")):
            at_rest(page)
            times[f"lessons (presenter): {name}"].append(
                click_and_settle(page, page.locator(f".st-key-{key} button:visible").first))
    stored = [(lesson.id, k) for lesson in LESSONS.values() for k, s in enumerate(lesson.steps, 1)
              if s.question is not None and s.question.experiment and s.question.choices and s.question.stored()]
    for i in range(min(repeats, len(stored))):
        lesson_id, k = stored[i]
        page.goto(f"{url}/lessons?lesson={lesson_id}&step={k}")
        at_rest(page)
        page.locator(".st-key-lesson_choice [role=radiogroup] label").first.click()
        at_rest(page)
        page.locator(".st-key-lesson_lock button:visible").first.click()
        at_rest(page)
        times["lessons: reveal a stored result"].append(click_and_settle(page, page.locator(
            ".st-key-lesson_reveal button:visible").first))


def live_training(page, url: str, runs: Path, steps: int):
    """Train the Train page's default run through the browser; returns (its saved RunInfo, steps/s)."""
    from explorer.store import runs as runs_module

    os.environ["EXPLORER_RUNS_DIR"] = str(runs)
    before = len(runs_module.list_runs())
    page.goto(f"{url}/train?train_steps={steps}")
    settle(page)
    page.locator(".st-key-train_start button:visible").click()
    page.wait_for_selector("[data-testid=stAlertContentSuccess]:has-text('Finished')", timeout=600_000)
    while len(runs_module.list_runs()) == before:  # saved as it finishes
        page.wait_for_timeout(200)
    info = runs_module.list_runs()[0]  # newest first
    return info, info.steps / info.duration


def headless_training(info) -> float:
    """Steps/s of the very same configuration (read back from the run the app saved) trained in this
    process."""
    from explorer.config import ModelConfig
    from explorer.model import build_model
    from explorer.tasks import TaskConfig, make_task
    from explorer.train_config import TrainConfig
    from explorer.training import train_steps

    task = make_task(TaskConfig.from_dict(info.task))
    cfg = TrainConfig.from_dict(info.train)
    model = build_model(ModelConfig.from_dict(info.model), seed=cfg.seed)
    t0 = time.perf_counter()
    for _ in train_steps(model, task, cfg):
        pass
    return cfg.steps / (time.perf_counter() - t0)


def live_pairs(page, url: str, runs: Path, steps: int, n: int) -> list[tuple[float, float]]:
    """n times: a live run in the app, then its headless reference at once (browser blank, server idle)."""
    pairs = []
    for _ in range(n):
        info, live = live_training(page, url, runs, steps)
        page.goto("about:blank")
        pairs.append((live, headless_training(info)))
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=800)
    ap.add_argument("--live-runs", type=int, default=1, help="live runs, each with its headless reference")
    ap.add_argument("--no-live", action="store_true", help="skip the live training measure (~1.5 minutes a run)")
    ap.add_argument("--no-views", action="store_true", help="skip the view changes")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="explorer-bench-"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
        t0 = time.perf_counter()
        try:
            with streamlit_server(tmp) as url:
                healthy = time.perf_counter() - t0
                page.goto(url)
                page.wait_for_selector("[data-testid=stMain] h1", timeout=TIMEOUT_MS)
                first_title = time.perf_counter() - t0  # the page's title, or the first visit's loading note
                settle(page)
                first_paint = time.perf_counter() - t0
                changes = {} if args.no_views else view_changes(page, url, args.repeats)
                pairs = [] if args.no_live else live_pairs(page, url, tmp / "runs", args.steps, args.live_runs)
        finally:
            browser.close()
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"cores={os.cpu_count()} load={os.getloadavg()[0]:.2f}")
    print(f"first paint: {first_paint:.2f} s after `streamlit run` to Home complete; its title at {first_title:.2f} s "
          f"(server healthy at {healthy:.2f} s)")
    for name, clicks in changes.items():
        ts, seen = [c[0] for c in clicks], [c[1] for c in clicks]
        print(f"view change, {name}: median {statistics.median(ts) * 1000:.0f} ms from the click to the view painted "
              f"(min {min(ts) * 1000:.0f}, max {max(ts) * 1000:.0f}, n={len(ts)}); "
              f"as Playwright sees it {statistics.median(seen) * 1000:.0f} ms"
              + (f"; last chart change {statistics.median(last) * 1000:.0f} ms"
                 if (last := [c[2] for c in clicks if len(c) > 2 and c[2] is not None]) else "")
              + (f"; with Playwright's round trips (session 9's measure) {statistics.median(trips) * 1000:.0f} ms"
                 if (trips := [c[3] for c in clicks if len(c) > 3]) else ""))
    for live, headless in pairs:
        print(f"live training ({args.steps} steps): {live:.1f} steps/s in the app, {headless:.1f} headless right after "
              f"-> live keeps {live / headless:.0%}")
    if len(pairs) > 1:
        print(f"live training: median of {len(pairs)} pairs {statistics.median(a / b for a, b in pairs):.0%}")


if __name__ == "__main__":
    main()
