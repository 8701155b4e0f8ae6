"""The Train page with `EXPLORER_RAY_ADDRESS` set, against a real local Ray cluster (one `ray start --head` for
the module, tests/ray_head.py) and a real `streamlit run`: a run trains on a Ray worker, its curve streams to
the page and Stop stops it; a server killed mid-run and started again finds the run by the owner cookie, still
training, and shows it finishing. A browser, not AppTest: the restart is a real process dying under a live
page, and only a real browser keeps the owner cookie across it."""

import os
import signal
import time

import pytest

from explorer.store.resume import can_resume
from tests.browser.helpers import (
    LAST_STEP,
    RUN_TIMEOUT_MS,
    SHOTS,
    TINY,
    WIDTH,
    assert_no_exception,
    fit_viewport,
    free_port,
    press,
    saved_runs,
    server_pid,
    streamlit_server,
    wait_rendered,
)
from tests.ray_head import ray_head
from ui.owner import COOKIE, id_of

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("heavy")]   # one Ray head at a time

RUNNING = "[data-testid=stMain] [data-testid=stProgress]"
STEPS = 6000
ON_RAY = "[data-testid=stMain] [data-testid=stCaptionContainer]:has-text('Training on the Ray cluster, worker')"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The module's Ray head, and the app's folder and port (a server started again there is a restart)."""
    pytest.importorskip("ray", reason="ray is in requirements-dev.txt")
    tmp = tmp_path_factory.mktemp("ray-app")
    with ray_head(tmp_path_factory.mktemp("ray")) as address:
        before = os.environ.get("EXPLORER_RAY_ADDRESS")
        os.environ["EXPLORER_RAY_ADDRESS"] = address   # the app servers' environment (streamlit_server)
        try:
            yield tmp, free_port()
        finally:
            os.environ.pop("EXPLORER_RAY_ADDRESS") if before is None else os.environ.update(
                EXPLORER_RAY_ADDRESS=before)


@pytest.fixture
def context(chromium):
    context = chromium.new_context(viewport={"width": WIDTH, "height": 1000})
    try:
        yield context
    finally:
        context.close()


def step_of(page) -> float:
    return page.evaluate(LAST_STEP)


def start_run(context, url: str, steps: int, seed: int):
    """A page of the context's browser with its run started on the cluster and its curve drawn."""
    page = context.new_page()
    page.goto(f"{url}/train?{TINY}&train_steps={steps}&train_seed={seed}")
    wait_rendered(page)
    press(page, "train_start")
    page.wait_for_function(f"({LAST_STEP})() > 0", timeout=RUN_TIMEOUT_MS)
    return page


def test_a_run_on_ray_streams_its_curve_and_stops_on_stop(cluster, context):
    tmp, port = cluster
    with streamlit_server(tmp, port) as url:
        # long enough to be stopped midway; short enough that a probe timed on a busy machine never puts it over
        # the 10-minute budget (20,000 steps were refused at 30 ms a step: Train stayed disabled)
        page = start_run(context, url, STEPS, 5)
        first = step_of(page)
        page.wait_for_function(f"({LAST_STEP})() > {first}", timeout=RUN_TIMEOUT_MS)  # it streams
        caption = page.locator(ON_RAY).inner_text()
        worker_pid = int(caption.rstrip(".").rpartition(":")[2])
        assert worker_pid != server_pid(url)   # not the app server's process
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "train-ray-running.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})   # a phone: the worker's line wraps, nothing cut
        page.locator(ON_RAY).scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "train-ray-phone.png"))
        page.set_viewport_size({"width": WIDTH, "height": 1000})

        clicked = time.monotonic()
        press(page, "train_stop")
        page.wait_for_selector("[data-testid=stAlertContentInfo]:has-text('Resume continues')", timeout=60_000)
        stopped_s = time.monotonic() - clicked
        wait_rendered(page)
        shown = step_of(page)
        page.wait_for_timeout(1500)
        assert step_of(page) == shown   # stopped means stopped
        assert_no_exception(page)
        runs = saved_runs(tmp / "runs")
        (name, meta), = runs.items()
        assert meta["status"] == "stopped" and 0 < meta["steps"] < STEPS and meta["worker"].endswith(f":{worker_pid}")
        assert can_resume(tmp / "runs" / name)
    print(f"\nStop on the page to the stopped run shown: {stopped_s:.2f} s")


def test_a_restarted_server_finds_the_run_still_training_and_shows_it_finishing(cluster, context):
    tmp, port = cluster
    steps = 3000
    with streamlit_server(tmp, port) as url:
        page = start_run(context, url, steps, 6)
        page.wait_for_selector(ON_RAY, timeout=RUN_TIMEOUT_MS)
        os.kill(server_pid(url), signal.SIGKILL)   # the app server dies mid-run, its jobs with it
    killed = time.monotonic()
    with streamlit_server(tmp, port) as url:
        page.reload(wait_until="commit")   # the same browser: its owner cookie, nothing else
        wait_rendered(page)
        page.wait_for_selector(RUNNING, timeout=RUN_TIMEOUT_MS)
        page.wait_for_selector(ON_RAY, timeout=RUN_TIMEOUT_MS)
        followed_s = time.monotonic() - killed
        shown = step_of(page)
        assert 0 < shown < steps
        page.wait_for_function(f"({LAST_STEP})() > {shown}", timeout=RUN_TIMEOUT_MS)   # still training
        page.wait_for_selector(f"[data-testid=stAlertContentSuccess]:has-text('Finished {steps} steps')",
                               timeout=RUN_TIMEOUT_MS)
        wait_rendered(page)
        assert_no_exception(page)
        fit_viewport(page)
        page.screenshot(path=str(SHOTS / "train-ray-followed.png"), full_page=True)
    owner = id_of(next(c["value"] for c in context.cookies() if c["name"] == COOKIE))
    finished = {n: m for n, m in saved_runs(tmp / "runs").items() if m.get("train", {}).get("seed") == 6}
    (name, meta), = finished.items()
    assert meta["status"] == "finished" and meta["steps"] == steps and meta["owner"] == owner
    assert can_resume(tmp / "runs" / name)
    print(f"\nserver killed mid-run to the run followed on the new server: {followed_s:.1f} s")
