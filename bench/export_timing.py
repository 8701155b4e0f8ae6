"""What exporting costs: the run report, PNG / SVG / GIF through kaleido, and the chart's download
buttons on every rerun.

    python bench/export_timing.py [--repeats 3]

1. Report: seconds to build the HTML of a shipped model (reversal-fast) and of a run with attention
   snapshots, and its size (plotly.js inline is most of it).
2. Images: kaleido's browser start, then one PNG (2x) and one SVG of the attention mosaic, rendered in
   that browser; the first and the second PNG export of a process through the app's path (one browser kept
   alive, explorer.export.browser) against the one-shot path (a browser started for each export, as before
   issue 26), interleaved in each repeat; a GIF of the tests' 3-snapshot time-lapse; and
   `python -m explorer figure attention ... .png` end to end (a fresh process: imports, model, browser).
3. Buttons: a rerun of the Attention page under AppTest with the PNG / SVG buttons under its charts,
   against the same rerun with them switched off (their cost on every click in the app).

Nothing is asserted: this prints figures for bench/README.md ("Export and notebooks"). Run it on an
otherwise idle machine; it prints the 1-minute load average beside its figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _median(fn, repeats: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def report(repeats: int) -> None:
    from explorer.export.report import build_report
    from explorer.store.subject import open_subject
    from tests.export_run import save_tiny_run

    save_tiny_run("bench-lapse")
    for name in ("reversal-fast", "bench-lapse"):
        s = open_subject(name)
        med, times = _median(lambda s=s: build_report(s), repeats)
        size = len(build_report(s).encode())
        spread = f"{min(times):.2f}-{max(times):.2f}"
        print(f"report {name:14s} {med:6.2f} s (n={repeats}, {spread})  {size / 2**20:.1f} MiB")


def images(repeats: int) -> None:
    import kaleido

    from explorer.export import browser
    from explorer.export.images import browser_path, gif_bytes, size
    from explorer.export.kinds import build_figure
    from explorer.store.subject import open_subject

    fig = build_figure("attention", open_subject("reversal-fast"))
    width, height = size(fig)

    async def once():
        t0 = time.perf_counter()
        async with kaleido.Kaleido(n=1, mathjax=False, path=browser_path()) as k:
            t1 = time.perf_counter()
            await k.calc_fig(fig, opts=dict(format="png", width=width, height=height, scale=2))
            t2 = time.perf_counter()
            await k.calc_fig(fig, opts=dict(format="svg", width=width, height=height, scale=1))
            t3 = time.perf_counter()
        return t1 - t0, t2 - t1, t3 - t2

    rows = [asyncio.run(once()) for _ in range(repeats)]
    for i, what in enumerate(("browser start", "PNG (2x)", "SVG")):
        print(f"kaleido {what:14s} {statistics.median(r[i] for r in rows):6.2f} s (n={repeats})")
    kept_vs_oneshot(fig, repeats)
    lapse = build_figure("timelapse", open_subject("bench-lapse"))
    browser.stop()                                   # the GIF's figure includes the browser's start
    med, _ = _median(lambda: gif_bytes(lapse), 1)
    print(f"GIF of {len(lapse.layout.sliders[0].steps)} snapshots   {med:6.2f} s (browser start included)")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "explorer", "figure", "attention", "--model", "reversal-fast", "--out",
               f"{tmp}/a.png"]
        med, _ = _median(lambda: subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True), repeats)
    print(f"CLI figure .png      {med:6.2f} s (n={repeats}, a fresh process)")


def kept_vs_oneshot(fig, repeats: int) -> None:
    """Seconds of a process's first and second PNG export: the kept browser (the app's path) against a browser
    started for each export (the one-shot path before issue 26), the two interleaved in every repeat."""
    import kaleido

    from explorer.export import browser
    from explorer.export.images import PNG_SCALE, browser_path, image_bytes, size

    width, height = size(fig)

    async def oneshot():
        async with kaleido.Kaleido(n=1, mathjax=False, path=browser_path()) as k:
            return await k.calc_fig(fig, opts=dict(format="png", width=width, height=height, scale=PNG_SCALE))

    def timed(fn):
        start = time.perf_counter()
        assert fn()[:4] == b"\x89PNG"
        return time.perf_counter() - start

    rows = {"one-shot": [], "kept": []}
    for _ in range(repeats):
        rows["one-shot"].append((timed(lambda: asyncio.run(oneshot())), timed(lambda: asyncio.run(oneshot()))))
        browser.stop()                                   # a process's first export: no browser yet
        rows["kept"].append((timed(lambda: image_bytes(fig, "png")), timed(lambda: image_bytes(fig, "png"))))
    browser.stop()
    for path, times in rows.items():
        first, second = (statistics.median(t[i] for t in times) for i in (0, 1))
        spread = ", ".join(f"{a:.2f}/{b:.2f}" for a, b in times)
        print(f"PNG export, {path:8s} 1st {first:6.2f} s  2nd {second:6.2f} s (n={repeats}; 1st/2nd: {spread})")


def buttons(repeats: int) -> None:
    from streamlit.testing.v1 import AppTest

    import ui.exports

    def rerun_time(enabled: bool) -> float:
        real = ui.exports.image_buttons
        if not enabled:
            ui.exports.image_buttons = lambda *a, **k: None
        try:
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
            at.switch_page("pages/attention.py").run()
            med, _ = _median(lambda: at.run(), repeats)
            n = sum(1 for _ in at.get("download_button"))
            print(f"Attention page rerun, buttons {'on ' if enabled else 'off'} {med * 1000:7.0f} ms "
                  f"(n={repeats}, {n} download buttons)")
            return med
        finally:
            ui.exports.image_buttons = real

    off, on = rerun_time(False), rerun_time(True)
    print(f"buttons' cost per rerun: {(on - off) * 1000:+.0f} ms")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as runs:
        os.environ["EXPLORER_RUNS_DIR"] = runs
        print(f"load average at start: {os.getloadavg()[0]:.2f}")
        report(args.repeats)
        images(args.repeats)
        buttons(args.repeats * 2)
        print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
