"""One headless Chromium kept alive for all of a process's image exports (kaleido), so only the first export
pays for the browser's start (bench/README.md, "Export and notebooks"): started by the first render, reused by
the later ones, restarted once if it died, closed at interpreter exit.

Not kaleido's own `start_sync_server`: its callers share one return queue, so two threads can get each other's
image, and it gives no handle on the browser, whose death makes the next call fail and every later one hang
(the dead tab is never put back). Here one lock serializes start, render and stop: with one tab (n=1) a second
caller waits for the first either way.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import signal
import threading

START_TIMEOUT = 120   # s: a start took 6-25 s under load (bench/README.md)
RENDER_TIMEOUT = 60   # s a figure: a render takes under a second; kaleido's own timeout per figure
CLOSE_TIMEOUT = 10    # s for a polite close before the browser's processes are killed


class BrowserFailed(RuntimeError):
    """The browser could not start or render; images.py turns it into an ImageExportError."""


class _Browser:
    """A kaleido browser on an event loop in a thread of its own; its processes form one session (pid)."""

    def __init__(self, path: str) -> None:
        self.path = path
        started: concurrent.futures.Future = concurrent.futures.Future()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main(path, started)),
                                        name="image-browser", daemon=True)
        self._thread.start()
        try:
            self._loop, self._kaleido, self._stop = started.result(START_TIMEOUT)
        except concurrent.futures.TimeoutError:
            started.cancel()   # a browser that opens after all finds it cancelled and closes itself
            raise BrowserFailed(f"the browser did not start within {START_TIMEOUT} s") from None
        self.pid = self._kaleido.subprocess.pid   # choreographer's wrapper, leader of Chromium's session

    async def _main(self, path: str, started: concurrent.futures.Future) -> None:
        import kaleido  # here: the app and the library load without it until an image is asked for

        try:
            async with kaleido.Kaleido(n=1, mathjax=False, path=path, timeout=RENDER_TIMEOUT) as k:
                stop = asyncio.Event()
                started.set_result((asyncio.get_running_loop(), k, stop))
                await stop.wait()
        except BaseException as e:  # a failed start is the caller's error; later ones are moot
            if not started.done():  # (done: the start was given up, or the browser died after it)
                started.set_exception(e)

    def alive(self) -> bool:
        return self._thread.is_alive() and self._kaleido.subprocess.poll() is None

    def render(self, jobs: list[tuple[object, dict]]) -> list[bytes]:
        """The bytes of each (figure, kaleido opts) in turn."""
        async def calc():
            return [await self._kaleido.calc_fig(fig, opts=opts) for fig, opts in jobs]

        future = asyncio.run_coroutine_threadsafe(calc(), self._loop)
        try:
            return future.result(RENDER_TIMEOUT * len(jobs) + 5)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise BrowserFailed(f"the render took over {RENDER_TIMEOUT} s a figure") from None

    def close(self, polite: bool = True) -> None:
        """Close the browser (politely: kaleido removes its temporary files), then kill what is left of it."""
        if polite and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(CLOSE_TIMEOUT)
        try:
            os.killpg(self.pid, signal.SIGKILL)   # Chromium's helpers too, if the close did not end them
        except ProcessLookupError:
            pass
        if self._thread.is_alive():   # the loop waits for a render the kill has just failed
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(CLOSE_TIMEOUT)
        self._kaleido.subprocess.poll()   # reap the wrapper: no zombie left


_lock = threading.Lock()
_browser: _Browser | None = None
_atexit_registered = False


def _start(path: str) -> None:
    global _browser, _atexit_registered
    _browser = _Browser(path)
    if not _atexit_registered:
        atexit.register(stop)
        _atexit_registered = True


def render(jobs: list[tuple[object, dict]], path: str) -> list[bytes]:
    """Render in the process's browser, started if there is none; if the browser has died or a render fails,
    a new browser gets one more try, then BrowserFailed says why."""
    with _lock:
        for _ in range(2):
            try:
                if _browser is None or not _browser.alive() or _browser.path != path:
                    _discard()
                    _start(path)
                return _browser.render(jobs)
            except Exception as e:  # any failure: discard this browser, try a fresh one once
                _discard()
                error = e
    raise BrowserFailed(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__) from error


def _discard() -> None:
    global _browser
    if _browser is not None:
        _browser.close(polite=False)
        _browser = None


def pid() -> int | None:
    """The running browser's process id (its processes' session), None before the first export and after stop."""
    with _lock:
        return _browser.pid if _browser is not None else None


def stop() -> None:
    """Close the browser, if one runs; the next render starts a new one. Registered with atexit."""
    global _browser
    with _lock:
        if _browser is not None:
            _browser.close()
            _browser = None


__all__ = ["BrowserFailed", "render", "pid", "stop"]
