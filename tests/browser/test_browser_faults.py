"""Faults a classroom server meets, in a real browser against a real `streamlit run` server: a network
blip keeps a run training, a closed tab stops its worker within 5 s, and a restarted server lists and
loads every saved run. (Kills during a save and the slot pool's waiters are in test_faults.py.)"""

import time
from datetime import UTC, datetime

import pytest

from tests.browser.test_browser import SHOTS, _fit_viewport, _wait_rendered, streamlit_server
from tests.browser.test_browser_classroom import (
    RUN_TIMEOUT_MS,
    SLOTS,
    TINY,
    open_sessions,
    run_name,
    runs_table,
    saved_runs,
)
from tests.browser.test_browser_training import LAST_STEP, assert_no_exception, press
from ui import session_jobs

pytestmark = pytest.mark.browser


def test_a_blip_keeps_the_run_a_closed_tab_stops_it_a_restart_keeps_it(tmp_path, chromium, monkeypatch):
    """(a) A dropped connection that comes back (a network blip) keeps the run training; closing the tab
    stops its worker within 5 s: the session's on_release stops the job after a grace for reconnects,
    and the job saves its run as "stopped". (b) A new server on the same runs folder lists that run and
    loads it as the sidebar's model."""
    monkeypatch.setenv("EXPLORER_MAX_JOBS", str(SLOTS))
    runs_dir, steps = tmp_path / "runs", 20_000
    with streamlit_server(tmp_path) as url:
        paths = [f"train?{TINY}&train_steps={steps}", f"train?{TINY}&train_seed=1"]
        contexts, (page, other) = open_sessions(chromium, url, paths)
        try:
            press(page, "train_start")
            page.wait_for_function(f"({LAST_STEP})() > 0", timeout=RUN_TIMEOUT_MS)  # training for real

            dropped = time.monotonic()
            page.evaluate("window.__sockets.forEach(s => s.close())")  # Streamlit reconnects the same session
            page.wait_for_selector("[data-testid=stApp][data-test-connection-state=CONNECTED]", timeout=30_000)
            shown = page.evaluate(LAST_STEP)
            page.wait_for_function(f"({LAST_STEP})() > {shown}", timeout=RUN_TIMEOUT_MS)  # still polled
            time.sleep(max(0.0, dropped + session_jobs.RECONNECT_GRACE_S + 1.0 - time.monotonic()))
            assert not saved_runs(runs_dir), "the blip stopped the run (a stopped run is saved)"
            assert page.locator("[data-testid=stMain] [data-testid=stProgress]").count() == 1

            closed, closed_at = time.monotonic(), datetime.now(UTC)
            contexts[0].close()
            # The run is saved once the worker has stopped; waiting for the save allows a second more.
            while not saved_runs(runs_dir) and time.monotonic() - closed < 6.0:
                time.sleep(0.05)
            saved_after = time.monotonic() - closed
            saved = saved_runs(runs_dir)
            assert list(saved) == [run_name(0)], f"no run saved {saved_after:.1f} s after the tab closed"
            meta = saved[run_name(0)]
            assert meta["status"] == "stopped" and 0 < meta["steps"] < steps
            # meta["created"] is stamped when the save begins, i.e. when the worker has left its loop.
            stopped_after = (datetime.fromisoformat(meta["created"]) - closed_at).total_seconds()
            assert stopped_after < 5.0
            other.reload()  # a fresh rerun of the other session reads the pool
            _wait_rendered(other)
            assert "Server: 0 training, 0 waiting" in other.locator("[data-testid=stMain]").inner_text()
        finally:
            for context in contexts:
                context.close()
    print(f"\nclosed tab: worker stopped {stopped_after:.2f} s and its run saved {saved_after:.2f} s after the "
          f"tab closed (grace {session_jobs.RECONNECT_GRACE_S:.1f} s; step {saved[run_name(0)]['steps']} of {steps})")

    with streamlit_server(tmp_path) as url:  # the same EXPLORER_RUNS_DIR
        name = run_name(0)
        contexts, (runs_page, model_page) = open_sessions(
            chromium, url, ["runs", f"attention?model_source=Trained+run&model_run={name}"])
        try:
            table = {row["Run"]: row for row in runs_table(runs_page)}
            assert list(table) == [name] and table[name]["Saved"] == "disk"
            assert int(table[name]["Steps"]) == saved[name]["steps"]
            assert_no_exception(model_page)
            sidebar = model_page.locator("[data-testid=stSidebar]").inner_text()
            assert f"{name} · Encoder–decoder · d_model 16" in sidebar
            _fit_viewport(model_page)
            model_page.screenshot(path=str(SHOTS / "restart-attention.png"), full_page=True)
        finally:
            for context in contexts:
                context.close()
