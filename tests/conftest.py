"""Shared test setup: the repository root on sys.path, so `explorer` and `pages` import the same
way under `pytest` as under `python -m pytest` and `streamlit run`; and the one Chromium of a test
session (defined here once: a fixture imported into several modules is a fixture per module, and a
second sync Playwright started inside the first one's event loop fails)."""

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Every page a test opens stands for a student's own foreground tab: no timer throttling of the pages a
# headless browser considers in the background (the classroom test opens eight at once).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-background-timer-throttling",
                 "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"]


@pytest.fixture(scope="session")
def chromium():
    """Debian's Chromium through Playwright (named so as not to shadow pytest-playwright's `browser`)."""
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is not on PATH: the browser test drives Debian's Chromium "
                    "(`apt-get install chromium`, as .ci/run does); it is never skipped")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()
