"""The app as a class meets it: first paint after `streamlit run`, view changes, live training speed.

    python bench/app_timing.py [--repeats 5] [--steps 800]

1. First paint: seconds from starting `streamlit run app.py` to the Home page rendered in headless
   Chromium (script finished, content drawn, every chart's SVG present), and to its first title on screen
   (on a fresh server, the loading note app.py shows while PyTorch imports). Chromium is launched first.
2. View change: seconds from a click to the page settled again (script finished, charts drawn), for
   a few everyday clicks: the Attention page's attention kind, its head picker; the Positional page's
   d_model. Median over --repeats clicks each.
3. Live training: the Train page's default run (the fast reversal preset) trained through the browser,
   then, with the server and browser gone, the same configuration (read back from the saved run)
   trained headless in this process with
   the same TrainConfig. Steps/s of each and the ratio.

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
from tests.conftest import CHROMIUM_ARGS  # noqa: E402
from tests.test_browser import DRAWN, TIMEOUT_MS, WIDTH, streamlit_server  # noqa: E402
from tests.test_browser import _wait_rendered as settle  # noqa: E402

WATCH = """() => { const app = document.querySelector('[data-testid=stApp]'); window.__ran = false;
  window.__watch && window.__watch.disconnect();
  window.__watch = new MutationObserver(() => {
    if (app.getAttribute('data-test-script-state') === 'running') window.__ran = true; });
  window.__watch.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']}); }"""
PAINTED = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"  # a frame drawn
RAN = """() => window.__ran && document.querySelector('[data-testid=stApp]')
                  .getAttribute('data-test-script-state') === 'notRunning'"""


def click_and_settle(page, locator) -> float:
    """Seconds from a click until the rerun it caused has finished and drawn. A MutationObserver set
    before the click sees the script start however briefly it runs (polling for it could miss a fast
    rerun and then wait out its timeout)."""
    page.evaluate(WATCH)
    t0 = time.perf_counter()
    locator.click()
    page.wait_for_function(RAN, timeout=TIMEOUT_MS, polling="raf")
    page.wait_for_function(DRAWN, timeout=TIMEOUT_MS, polling="raf")
    page.evaluate(PAINTED)
    return time.perf_counter() - t0


def view_changes(page, url: str, repeats: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    page.goto(f"{url}/attention")
    settle(page)
    kinds = page.locator(".st-key-att_kind button")
    names = [kinds.nth(i).inner_text() for i in range(kinds.count())]
    times["attention: switch kind"] = [click_and_settle(page, kinds.nth(i % len(names))) for i in range(repeats)]
    heads = []
    for i in range(repeats):
        page.wait_for_timeout(500)
        settle(page)
        box = page.locator(".st-key-att_head").get_by_role("combobox")
        box.click()
        head = f"H{(i + 1) % 4}"
        box.press_sequentially(head)  # typing filters the list (a click alone may leave it closed)
        option = page.get_by_role("option", name=head, exact=True)
        option.wait_for(timeout=10_000)
        heads.append(click_and_settle(page, option))
    times["attention: pick a head"] = heads
    page.goto(f"{url}/positional")
    settle(page)
    box = page.locator(".st-key-pe_d_model input")
    pe = []
    for i in range(repeats):
        box.fill(str(32 + 16 * (i % 3)))
        pe.append(click_and_settle(page, page.locator("[data-testid=stMain] h1")))  # blur commits the value
    times["positional: change d_model"] = pe
    return times


def live_training(page, url: str, runs: Path, steps: int):
    """Train the Train page's default run through the browser; returns (its saved RunInfo, steps/s)."""
    from explorer import runs as runs_module

    page.goto(f"{url}/train?train_steps={steps}")
    settle(page)
    page.locator(".st-key-train_start button:visible").click()
    page.wait_for_selector("[data-testid=stAlertContentSuccess]:has-text('Finished')", timeout=600_000)
    os.environ["EXPLORER_RUNS_DIR"] = str(runs)
    (info,) = runs_module.list_runs()
    return info, info.steps / info.duration


def headless_training(info) -> float:
    """Steps/s of the very same configuration (read back from the run the app saved) trained in this
    process, with the server and the browser gone: the best of two runs."""
    from explorer.config import ModelConfig
    from explorer.model import build_model
    from explorer.tasks import TaskConfig, make_task
    from explorer.training import TrainConfig, train_steps

    task = make_task(TaskConfig.from_dict(info.task))
    cfg = TrainConfig.from_dict(info.train)
    rates = []
    for _ in range(2):
        model = build_model(ModelConfig.from_dict(info.model), seed=cfg.seed)
        t0 = time.perf_counter()
        for _ in train_steps(model, task, cfg):
            pass
        rates.append(cfg.steps / (time.perf_counter() - t0))
    return max(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=800)
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
                changes = view_changes(page, url, args.repeats)
                info, live = live_training(page, url, tmp / "runs", args.steps)
        finally:
            browser.close()
            shutil.rmtree(tmp, ignore_errors=True)
    headless, steps = headless_training(info), info.steps
    print(f"cores={os.cpu_count()} load={os.getloadavg()[0]:.2f}")
    print(f"first paint: {first_paint:.2f} s after `streamlit run` to Home complete; its title at {first_title:.2f} s "
          f"(server healthy at {healthy:.2f} s)")
    for name, ts in changes.items():
        print(f"view change, {name}: median {statistics.median(ts) * 1000:.0f} ms "
              f"(min {min(ts) * 1000:.0f}, max {max(ts) * 1000:.0f}, n={len(ts)})")
    print(f"live training ({steps} steps): {live:.1f} steps/s in the app, {headless:.1f} headless "
          f"-> live keeps {live / headless:.0%}")


if __name__ == "__main__":
    main()
