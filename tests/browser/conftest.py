"""The browser tier: a real `streamlit run` server and Debian's Chromium. The one Chromium and the one
shared server of a test session are defined here once (a fixture imported into several modules is a
fixture per module, and a second sync Playwright started inside the first one's event loop fails)."""

import shutil

import pytest

from tests.browser.helpers import streamlit_server

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


@pytest.fixture(scope="session")
def server_dir(tmp_path_factory):
    """The shared server's folder: its runs are under runs/ (a private run added there stays its owner's)."""
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="session")
def server(server_dir):
    """One server for the tests that only read (pages, lessons, presenter): each start imports PyTorch.
    A test that writes runs, restarts or loads a server starts its own with `streamlit_server`."""
    with streamlit_server(server_dir) as url:
        yield url
