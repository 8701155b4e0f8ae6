"""Helpers the browser tier's tests share: the app server, Chromium waits, the classroom and training
scenarios' steps."""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[2]


SHOTS = ROOT / "tests" / "screenshots"


READY = "[data-testid=stApp][data-test-connection-state=CONNECTED][data-test-script-state=notRunning]"


WIDTH = 1440


TIMEOUT_MS = 90_000  # the first page of a fresh server imports torch and builds a task


# True once no element waits for its code (skeletons) and every Plotly chart has drawn its SVG.
DRAWN = """() => !document.querySelector('[data-testid=stSkeleton]')
                 && [...document.querySelectorAll('[data-testid=stPlotlyChart]')]
                    .every(el => el.querySelector('.main-svg'))"""


# Charts whose margins Plotly grew past the figure's own (by more than the 1 px it ignores), as
# (title, given l/r/t/b, drawn l/r/t/b).
GROWN = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => [gd.layout.title?.text ?? '',
    ['l', 'r', 't', 'b'].map(s => gd._fullLayout.margin[s]), ['l', 'r', 't', 'b'].map(s => gd._fullLayout._size[s])])
  .filter(([, given, drawn]) => given.some((m, i) => drawn[i] - m > 1))"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, log: Path, seconds: float = 90) -> None:
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
def streamlit_server(tmp: Path, port: int | None = None, env: dict[str, str] | None = None):
    """`streamlit run app.py` on `port` (a free one by default), runs saved under tmp; yields its URL.
    Started again with the same tmp and port, it is the same server restarted (its pages reconnect).
    `env` overrides the process's environment (several servers share one EXPLORER_RUNS_DIR, or a database)."""
    port, log = port or free_port(), tmp / "streamlit.log"
    env = {**os.environ, "EXPLORER_RUNS_DIR": str(tmp / "runs"), **(env or {})}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false"]
    with open(log, "a") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_rendered(page) -> None:
    page.wait_for_selector(READY, timeout=TIMEOUT_MS)
    page.wait_for_selector("[data-testid=stMain] h1", timeout=TIMEOUT_MS)  # content, not just the shell
    page.wait_for_selector(READY, timeout=TIMEOUT_MS)
    page.wait_for_function(DRAWN, timeout=TIMEOUT_MS)


# True once the main element's height is the one the previous animation frame saw, and no script runs.
STEADY = """() => { const h = document.querySelector('[data-testid=stMain]').scrollHeight;
  const steady = window.__fitHeight === h; window.__fitHeight = h;
  return steady && !!document.querySelector('[data-testid=stApp][data-test-script-state=notRunning]'); }"""


SETTLE_MS = 700  # at most, as the fixed wait this replaces; heights measured on all 12 pages settled at once


def fit_viewport(page) -> None:
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


# The page coordinates of tile i's name in the mosaic: its invisible click target (customdata i).
TILE_NAME_AT = """i => { const gd = document.querySelector('.st-key-att_mosaic .js-plotly-plot');
  const tiles = gd._fullData.find(t => t.name === 'tiles'), j = tiles.customdata.indexOf(i);
  const box = gd.getBoundingClientRect(), xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  return [box.left + xa._offset + xa.l2p(tiles.x[j]), box.top + ya._offset + ya.l2p(tiles.y[j])]; }"""


SLOTS = 2                 # EXPLORER_MAX_JOBS: the server trains this many runs at once, the rest wait


TINY = "cfg_d_model=16&cfg_d_ff=32&cfg_n_encoder_layers=1&cfg_n_decoder_layers=1&train_warmup=10"


RUN_TIMEOUT_MS = 240_000  # eight runs on two slots of a busy 2-core machine


# Chromium would otherwise hand the Runs table's "Download as CSV" to a save dialog that never opens
# headless; without the File System Access API it falls back to an ordinary download.
PLAIN_DOWNLOADS = "delete Window.prototype.showSaveFilePicker; delete window.showSaveFilePicker;"


# Keeps the page's websockets reachable, so a test can drop the connection as a network blip would.
KEEP_SOCKETS = """(() => { const Native = window.WebSocket; window.__sockets = [];
  window.WebSocket = class extends Native { constructor(...a) { super(...a); window.__sockets.push(this); } }; })();"""


def run_name(seed: int) -> str:
    return f"reversal-fast-preLN-d16-seed{seed}"  # ui.training_job.run_name for the default task


# ------------------------------------------------------------------------------- the server's process
def server_pid(url: str) -> int:
    port = url.rsplit(":", 1)[1].encode()
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(args) and port in args:
            return int(proc.name)
    raise AssertionError(f"no streamlit process listens on {url}")


def process_family(pid: int) -> list[int]:
    """pid and its descendants."""
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(proc.name))
    out, todo = [], [pid]
    while todo:
        out.append(todo.pop())
        todo += children.get(out[-1], [])
    return out


def usage(pid: int) -> tuple[int, int]:
    """(threads, resident MB) of the server and its children."""
    threads = rss_kb = 0
    for p in process_family(pid):
        try:
            status = dict(line.split(":", 1) for line in Path(f"/proc/{p}/status").read_text().splitlines())
        except OSError:
            continue
        threads += int(status["Threads"])
        rss_kb += int(status.get("VmRSS", "0 kB").split()[0])
    return threads, rss_kb // 1024


class Peak:
    """Samples usage(pid) a few times a second in a thread (reads /proc only, never Playwright)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.threads, self.rss_mb = pid, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.25):
            threads, rss = usage(self.pid)
            self.threads, self.rss_mb = max(self.threads, threads), max(self.rss_mb, rss)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


# ------------------------------------------------------------------------------------------ pages
def open_sessions(chromium, url: str, paths: list[str]):
    """One browser context (a separate Streamlit session) per path, loaded together."""
    contexts = [chromium.new_context(viewport={"width": WIDTH, "height": 900}) for _ in paths]
    for context in contexts:
        context.add_init_script(PLAIN_DOWNLOADS)
        context.add_init_script(KEEP_SOCKETS)
    try:
        pages = [context.new_page() for context in contexts]
        for page in pages:  # a renderer that dies closes the session's connection: say so if it happens
            page.on("crash", lambda page=page: setattr(page, "crashed", True))
            page.errors = []  # the page's uncaught errors and console errors, for a failure's message
            page.on("pageerror", lambda err, page=page: page.errors.append(f"uncaught: {err}"))
            page.on("console", lambda msg, page=page: msg.type == "error" and page.errors.append(
                f"console: {msg.text[:500]}"))
        for page, path in zip(pages, paths):
            page.goto(f"{url}/{path}", wait_until="commit")
        for page in pages:
            wait_rendered(page)
    except BaseException:
        for context in contexts:
            context.close()
        raise
    return contexts, pages


def runs_table(page) -> list[dict]:
    """The Runs page's table, as its "Download as CSV" button hands it out."""
    grid = page.locator("[data-testid=stDataFrame]").first
    grid.hover()  # the toolbar shows on hover
    with page.expect_download(timeout=30_000) as download:
        grid.locator("button[aria-label='Download as CSV']").click()
    with open(download.value.path(), encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def saved_runs(runs_dir: Path) -> dict[str, dict]:
    """Complete runs on disk (meta.json is written last), by folder name."""
    out = {}
    for meta in runs_dir.glob("*/meta.json"):
        try:
            out[meta.parent.name] = json.loads(meta.read_text())
        except (OSError, ValueError):
            continue  # being written
    return out


PROJECTOR = {"width": 1280, "height": 720}


# What a viewer sees: the smallest body paragraph (widget labels aside), caption and tick label, the
# modebars shown, the sidebar's width, the first chart's top, labels cut to an ellipsis.
MEASURE = """() => {
  const sizes = (sel, skip = null) => [...document.querySelectorAll(sel)]
    .filter(e => e.getClientRects().length && !(skip && e.closest(skip)))
    .map(e => parseFloat(getComputedStyle(e).fontSize));
  const shown = e => e && getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().width > 0;
  const chart = document.querySelector('[data-testid=stPlotlyChart]');
  return {
    body: Math.min(...sizes('[data-testid=stMain] [data-testid=stMarkdown] p', '[data-testid=stCaptionContainer]')),
    caption: Math.min(...sizes('[data-testid=stMain] [data-testid=stCaptionContainer]')),
    ticks: Math.min(...sizes('.xtick text, .ytick text')),
    modebars: [...document.querySelectorAll('.modebar')].filter(shown).length,
    sidebar: shown(document.querySelector('[data-testid=stSidebar]')),
    chartTop: chart.getBoundingClientRect().top,
    cut: [...document.querySelectorAll('[data-testid=stMain] *')].filter(e => e.scrollWidth > e.clientWidth + 1
      && getComputedStyle(e).textOverflow === 'ellipsis').map(e => e.innerText),
    background: getComputedStyle(document.documentElement).filter,
  }; }"""


LOSS = "document.querySelector('.st-key-train_loss_chart .js-plotly-plot')"


LAST_STEP = f"""() => {{ const el = {LOSS}; if (!el || !el._fullData || !el._fullData.length) return 0;
                        const t = el._fullData[0]; return t.x[t._length - 1]; }}"""


def press(page, key: str) -> None:
    page.locator(f".st-key-{key} button:visible").click()  # :visible skips Streamlit's hidden twin


def assert_no_exception(page) -> None:
    errors = page.locator("[data-testid=stException]")
    assert errors.count() == 0, errors.first.inner_text()
