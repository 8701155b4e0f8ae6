"""The kept-alive image browser's bookkeeping, with a stand-in for kaleido's browser (no Chromium): started
lazily, reused, replaced when dead, one retry in a new browser, then a message; callers serialized (the real
browser: tests/system/test_image_browser_chromium.py)."""

import threading
import time

import plotly.graph_objects as go
import pytest

from explorer.export import browser, images


class FakeBrowser:
    """Renders `fmt:height` as bytes; `fail` renders raise, `dead` makes the next alive() say no."""
    started: list["FakeBrowser"] = []
    fail = 0

    def __init__(self, path):
        self.path, self.pid, self.dead, self.closed, self.busy = path, 1000 + len(self.started), False, False, False
        FakeBrowser.started.append(self)

    def alive(self):
        return not self.dead and not self.closed

    def render(self, jobs):
        assert not any(b.busy for b in FakeBrowser.started), "two renders at once"
        self.busy = True
        try:
            time.sleep(0.01)
            if FakeBrowser.fail:
                FakeBrowser.fail -= 1
                raise ConnectionError("the pipe to the browser is closed")
            return [f"{opts['format']}:{opts['height']}".encode() for _, opts in jobs]
        finally:
            self.busy = False

    def close(self, polite=True):
        self.closed = True


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(browser, "_Browser", FakeBrowser)
    monkeypatch.setattr(browser, "_browser", None)
    monkeypatch.setattr(images, "browser_path", lambda: "/usr/bin/chromium")
    FakeBrowser.started, FakeBrowser.fail = [], 0
    yield FakeBrowser
    browser.stop()


FIG = go.Figure(layout=dict(height=300))


def test_the_first_export_starts_the_browser_and_later_ones_reuse_it(fake):
    assert browser.pid() is None                          # nothing started by importing
    assert images.image_bytes(FIG, "png") == b"png:300"
    assert images.render([FIG, go.Figure()], "svg") == [b"svg:300", b"svg:720"]
    assert len(fake.started) == 1 and browser.pid() == fake.started[0].pid
    browser.stop()
    assert fake.started[0].closed and browser.pid() is None
    images.image_bytes(FIG, "png")
    assert len(fake.started) == 2                               # stopped: the next export starts a new one


def test_a_dead_browser_is_replaced_before_the_next_export(fake):
    images.image_bytes(FIG, "png")
    fake.started[0].dead = True
    assert images.image_bytes(FIG, "png") == b"png:300"
    assert len(fake.started) == 2 and fake.started[0].closed and browser.pid() == fake.started[1].pid


def test_a_failed_render_is_tried_once_more_in_a_new_browser(fake):
    images.image_bytes(FIG, "png")
    fake.fail = 1
    assert images.image_bytes(FIG, "svg") == b"svg:300"
    assert len(fake.started) == 2 and fake.started[0].closed


def test_two_failures_give_a_message_naming_the_browser_and_the_cause(fake):
    fake.fail = 2
    with pytest.raises(images.ImageExportError, match=r"failed twice, the second time in a new browser "
                       r"\(/usr/bin/chromium\): ConnectionError: the pipe to the browser is closed"):
        images.image_bytes(FIG, "png")
    assert len(fake.started) == 2 and all(b.closed for b in fake.started) and browser.pid() is None
    assert images.image_bytes(FIG, "png") == b"png:300"         # the next click starts afresh


def test_concurrent_exports_are_serialized_and_each_caller_gets_its_own_image(fake):
    got, figs = {}, {h: go.Figure(layout=dict(height=h)) for h in (200, 300, 400, 500)}

    def export(h):
        got[h] = [images.image_bytes(figs[h], "png" if h % 200 else "svg") for _ in range(5)]

    threads = [threading.Thread(target=export, args=(h,)) for h in figs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == {h: [f"{'png' if h % 200 else 'svg'}:{h}".encode()] * 5 for h in figs}
    assert len(fake.started) == 1                                # one browser for all four callers
