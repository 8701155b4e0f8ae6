"""A classroom on one real `streamlit run` server: eight browser sessions train at once, the slot pool
queues the rest, each session keeps its own run (the faults are in test_browser_faults.py).

What is whose: a session's job, live numbers, curves and sidebar status belong to it alone; runs saved on
disk (EXPLORER_RUNS_DIR) are the class's shared gallery, listed to everyone on the Runs page, where a
session's own run says "disk + session" and the others' say "disk".

The server's threads and memory are read from /proc (the server and any children); the figures are
printed: run with `-s` to see them.
"""

import re
import time

import pytest

from tests.browser.helpers import (
    LAST_STEP,
    RUN_TIMEOUT_MS,
    SHOTS,
    SLOTS,
    TINY,
    Peak,
    assert_no_exception,
    fit_viewport,
    open_sessions,
    press,
    run_name,
    runs_table,
    server_pid,
    streamlit_server,
    usage,
    wait_rendered,
)

pytestmark = pytest.mark.browser

SESSIONS = 8
MAX_RSS_MB = 2048
# Streamlit 1.67 serves static files from AnyIO's thread pool, capped at 28 threads (its
# ANYIO_STATIC_FILE_THREAD_TOKENS); a pool thread idle for 10 s exits.
STATIC_POOL, STATIC_IDLE_S = 28, 10
REGISTERED = ("[data-testid=stAlertContentInfo]:has-text('Waiting: position'), [data-testid=stMain] "
              "[data-testid=stProgress], [data-testid=stAlertContentSuccess]:has-text('Finished')")


def settled(pid: int, below: int, seconds: float) -> tuple[int, int]:
    """usage(pid) once its threads drop below `below`, or after `seconds`."""
    deadline = time.monotonic() + seconds
    while (now := usage(pid))[0] >= below and time.monotonic() < deadline:
        time.sleep(0.5)
    return now


def open_runs(page) -> list[dict]:
    """Switch to the Runs page inside the same session (a fresh URL would start a new one)."""
    page.locator(".st-key-menu a:has-text('Runs')").click()
    page.wait_for_selector("[data-testid=stMain] h1:has-text('Runs')", timeout=RUN_TIMEOUT_MS)
    wait_rendered(page)
    assert_no_exception(page)
    return runs_table(page)


def wait_shown(page, selector: str, shot: str) -> None:
    """Wait for selector; on a timeout keep a screenshot and say what the page shows instead."""
    try:
        page.wait_for_selector(selector, timeout=RUN_TIMEOUT_MS)
    except Exception:
        page.screenshot(path=str(SHOTS / f"classroom-timeout-{shot}.png"))
        print(f"\n{shot}: the page's errors: {page.errors[-20:]}\nits body: "
              f"{page.evaluate('document.body.innerHTML.slice(0, 3000)')}")
        shown = page.locator("[data-testid=stMain]").locator(
            "[data-testid=stAlert], [data-testid=stProgress], .st-key-train_start button, "
            "[data-testid=stCaptionContainer], h3")
        state = page.evaluate("[...['connection', 'script']].map(a => document.querySelector("
                              "'[data-testid=stApp]')?.getAttribute(`data-test-${a}-state`))")
        if getattr(page, "crashed", False):
            pytest.fail(f"{shot}: Chromium's renderer for this page crashed (the browser, not the app); the "
                        "server then stopped the session's run as for a closed tab")
        pytest.fail(f"{shot} never showed {selector!r}; it shows {shown.all_inner_texts()}, connection "
                    f"{state[0]}, script {state[1]}")


# ------------------------------------------------------------------------------------------ tests
def test_a_class_of_eight_trains_at_once(tmp_path, chromium, monkeypatch):
    monkeypatch.setenv("EXPLORER_MAX_JOBS", str(SLOTS))
    steps = [20 + 5 * i for i in range(SESSIONS)]  # distinct seeds and lengths: whose curve is whose shows
    names = [run_name(i) for i in range(SESSIONS)]
    with streamlit_server(tmp_path) as url:
        pid = server_pid(url)
        paths = [f"train?{TINY}&train_seed={i}&train_steps={steps[i]}" for i in range(SESSIONS)]
        contexts, pages = open_sessions(chromium, url, paths[:1])  # the first page imports torch
        try:
            baseline, started = usage(pid), time.monotonic()
            more_contexts, more_pages = open_sessions(chromium, url, paths[1:])
            contexts, pages = contexts + more_contexts, pages + more_pages
            all_open, loaded = usage(pid), time.monotonic()
            queued: dict[int, int] = {}  # session -> the queue position it showed
            with Peak(pid) as peak:
                for page in pages:  # the whole class presses Train within a second or two
                    press(page, "train_start")
                for i, page in reversed(list(enumerate(pages))):  # the last in line waits longest
                    wait_shown(page, REGISTERED, f"registered-{i}")
                    # One snapshot, no waiting: the notice goes when the run gets its slot, so a
                    # count() then inner_text() pair can find it and then wait 30 s for it in vain.
                    waiting = page.locator("[data-testid=stAlertContentInfo]:has-text('Waiting: position')")
                    texts = waiting.all_inner_texts()
                    if texts:
                        queued[i] = int(re.search(r"position (\d+)", texts[0]).group(1))
                        if len(queued) == 1:
                            SHOTS.mkdir(parents=True, exist_ok=True)
                            page.screenshot(path=str(SHOTS / "classroom-queued.png"))
                for i, page in enumerate(pages):
                    wait_shown(page, "[data-testid=stAlertContentSuccess]:has-text('Finished "
                               f"{steps[i]} steps; saved as run \\'{names[i]}\\'')", f"session-{i}")
            trained = time.monotonic()
            # Sessions past the slots waited their turn, each told its place in the queue.
            assert queued, "no session was ever queued: the slot pool let every run train at once"
            assert all(0 < position <= SESSIONS - SLOTS for position in queued.values()), queued

            for i, page in enumerate(pages):  # each session shows its own run, nobody else's
                wait_rendered(page)
                assert_no_exception(page)
                page.wait_for_function(f"({LAST_STEP})() === {steps[i]}", timeout=RUN_TIMEOUT_MS)
                sidebar = page.locator("[data-testid=stSidebar]").inner_text()
                assert f"Run finished at step {steps[i]}" in sidebar and names[i] in sidebar
                assert not [n for n in names if n != names[i] and n in sidebar]
                wait_shown(page, ".st-key-train_head input", f"head-{i}")
                assert page.locator(".st-key-train_head input").first.input_value() == "Best match (follows the run)"
            fit_viewport(pages[-1])
            pages[-1].screenshot(path=str(SHOTS / "classroom-finished.png"), full_page=True)
            for i in (0, SESSIONS // 2, SESSIONS - 1):  # the shared gallery lists all, only its own as this session's
                page = pages[i]
                table = {row["Run"]: row for row in open_runs(page)}
                assert set(table) == set(names)
                assert {n: row["Saved"] for n, row in table.items()} == {
                    n: "disk + session" if n == names[i] else "disk" for n in names}
                assert int(table[names[i]]["Steps"]) == steps[i]
            uncaught = {i: [e for e in page.errors if e.startswith("uncaught")] for i, page in enumerate(pages)}
            assert not any(uncaught.values()), f"errors thrown in the pages: {uncaught}"
            took = time.monotonic() - started
            for context in contexts[1:]:  # the class leaves; the first session stays, as at the baseline
                context.close()
            contexts = contexts[:1]
            after = settled(pid, below=baseline[0] + SESSIONS // 2, seconds=STATIC_IDLE_S + 10)
        finally:
            for context in contexts:
                context.close()
    print(f"\nclassroom: {SESSIONS} sessions on {SLOTS} slots, all finished; queue positions shown {queued}; "
          f"{took:.0f} s from the second page load to the last Runs check ({loaded - started:.0f} s loading, "
          f"{trained - loaded:.0f} s training, {took - trained + started:.0f} s checking). Server threads: "
          f"{baseline[0]} with one session, {all_open[0]} with {SESSIONS} open, peak {peak.threads} while "
          f"training, {after[0]} once the others left. RSS MB: {baseline[1]}, {all_open[1]}, peak {peak.rss_mb}, "
          f"{after[1]} after")
    assert peak.rss_mb < MAX_RSS_MB
    # Per session at most one worker thread (while its run waits or trains) and one script thread (a
    # rerun in flight), on top of the static-file pool. Nothing outlives the runs: a thread leaked per
    # session would leave SESSIONS more than with one session, once the others have left (measured with the
    # class still open, a rerun or two in flight left 5 more once in CI).
    assert peak.threads <= baseline[0] + STATIC_POOL + 2 * SESSIONS
    assert after[0] < baseline[0] + SESSIONS // 2

