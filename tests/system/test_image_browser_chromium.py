"""The one Chromium kept alive for image exports (explorer.export.browser), the real one: reused by a second
export, restarted after it was killed, gone after stop, and two threads exporting at once each get their
own image (kaleido's own sync server can swap them)."""

import os
import signal
import struct
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import plotly.graph_objects as go
import pytest

from explorer.export import browser
from explorer.export.images import PNG_SCALE, WIDTH, image_bytes


def _processes() -> dict[int, tuple[str, str, int, int]]:
    """pid -> (name, state, parent pid, session id) of every process, from /proc."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue                                     # ended while we looked
        name, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
        out[int(stat.parent.name)] = (name, rest[0], int(rest[1]), int(rest[3]))
    return out


def session(sid: int, settle: float = 0) -> list[int]:
    """The live processes of a browser's session (choreographer's wrapper leads it, Chromium's are in it),
    waiting up to `settle` seconds for them to end (a SIGKILL is delivered asynchronously)."""
    deadline = time.monotonic() + settle
    while True:
        live = [pid for pid, (_, state, _, s) in _processes().items() if s == sid and state != "Z"]
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(0.1)


def chromiums_under_this_process() -> list[int]:
    procs, me = _processes(), os.getpid()

    def ours(pid):
        while pid > 1 and pid in procs:
            pid = procs[pid][2]
            if pid == me:
                return True
        return False
    return [pid for pid, (name, state, _, _) in procs.items() if "chrom" in name and state != "Z" and ours(pid)]


@pytest.fixture
def one_browser():
    browser.stop()                                 # a browser left by another test: start afresh
    yield
    browser.stop()


FIG = go.Figure(go.Heatmap(z=[[0, 1], [2, 3]]), layout=dict(height=300))


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_two_exports_in_a_row_share_one_browser_and_stop_leaves_no_chromium(one_browser):
    assert browser.pid() is None
    before = set(chromiums_under_this_process())   # other tiers' browsers (Playwright's) may still run
    png = image_bytes(FIG, "png")
    pid = browser.pid()
    assert pid is not None and len(session(pid)) >= 2 and set(chromiums_under_this_process()) - before
    svg = ET.fromstring(image_bytes(FIG, "svg"))
    assert browser.pid() == pid                                     # the same browser
    assert _png_size(png) == (WIDTH * PNG_SCALE, 300 * PNG_SCALE)
    assert svg.tag.endswith("svg") and (svg.get("width"), svg.get("height")) == (str(WIDTH), "300")
    browser.stop()
    assert browser.pid() is None and session(pid, settle=5) == []
    deadline = time.monotonic() + 5                                       # a close ends its helpers soon after
    while not set(chromiums_under_this_process()) <= before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(chromiums_under_this_process()) <= before                  # none of the export's is left


def test_a_killed_browser_is_restarted_by_the_next_export(one_browser):
    image_bytes(FIG, "svg")
    pid = browser.pid()
    os.killpg(pid, signal.SIGKILL)                                        # Chromium and its wrapper
    assert _png_size(image_bytes(FIG, "png")) == (WIDTH * PNG_SCALE, 300 * PNG_SCALE)
    assert browser.pid() not in (None, pid) and session(pid, settle=5) == []


def test_two_threads_exporting_at_once_each_get_their_own_image(one_browser):
    got = {}

    def export(fmt):
        got[fmt] = [image_bytes(FIG, fmt)[:4] for _ in range(3)]

    threads = [threading.Thread(target=export, args=(fmt,)) for fmt in ("png", "svg")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == {"png": [b"\x89PNG"] * 3, "svg": [b"<svg"] * 3}
