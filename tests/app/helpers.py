"""Helpers the app tier's tests share: opening a page under AppTest, the checks every page passes, arrays of a chart."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from explorer.store import checkpoints
from ui import menu, owner

ROOT = Path(__file__).resolve().parents[2]


SHIPPED = checkpoints.PRETRAINED_DIR  # before the runs_dir fixture (tests/app/conftest.py) empties it


PAGES = [page.file for page in menu.PAGES]


def open_app(page: str | None = None, query: dict | None = None, state: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.query_params.update(query or {})
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.run()
    if page is not None:
        at.switch_page(page).run()
    assert_ok(at)
    return at


def wait_ended(job, seconds: float = 300) -> None:
    """Wait for a background job to end (AppTest never fires the page's polling), failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while not job.ended:
        assert time.monotonic() < deadline, "the job did not end in time"
        time.sleep(0.2)


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def array(value) -> np.ndarray:
    """A Plotly array from a spec: plotly 7 ships numeric arrays base64-encoded."""
    if isinstance(value, dict) and "bdata" in value:
        a = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        return a.reshape([int(s) for s in str(value["shape"]).split(",")]) if "shape" in value else a
    return np.asarray(value)


def _as_read(spec: dict) -> dict:
    """A chart's spec with its titles as a reader reads them: the lines a long one is broken into
    (explorer.figures.layout.fit_title) joined again."""
    title = spec.get("layout", {}).get("title") or {}
    if "text" in title:
        title["text"] = title["text"].replace("<br>", " ")
    for slider in spec.get("layout", {}).get("sliders", ()):
        for step in slider.get("steps", ()):
            args = step.get("args") or []
            if len(args) > 1 and isinstance(args[1], dict) and "title.text" in args[1]:
                args[1]["title.text"] = args[1]["title.text"].replace("<br>", " ")
    return spec


def figures(at: AppTest) -> list[dict]:
    return [_as_read(json.loads(el.proto.spec)) for el in at.get("plotly_chart")]


def open_lesson(query: dict, token: str | None = None) -> AppTest:
    """A tab on the Lessons page with `query` in its link; `token` is the browser's owner cookie (the same
    student in a reopened tab)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if token is not None:
        at.session_state[owner.TOKEN] = token
    at.run()
    at.switch_page("pages/lessons.py")
    at.query_params.update(query)
    at.run()
    assert_ok(at)
    return at
