"""The search's spawned worker processes. Spawn re-runs the parent's __main__ by its path: under Streamlit
that is app.py (its script runner installs each run's script as __main__ and leaves it there), so a worker
started while another session's run holds it re-runs the app, which must draw nothing. And a worker that
dies breaks its whole pool: the server's shared one is replaced, not handed broken to every later search."""

import multiprocessing
import os
import signal
import sys
import types
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from explorer.search import executors

APP = Path(__file__).resolve().parents[2] / "app.py"
SPAWN = multiprocessing.get_context("spawn")


def test_a_process_spawned_while_the_app_is_main_starts_and_runs_its_target(monkeypatch):
    main = types.ModuleType("__main__")   # what Streamlit's script runner leaves in sys.modules
    main.__file__ = str(APP)
    monkeypatch.setitem(sys.modules, "__main__", main)
    child = SPAWN.Process(target=os.getpid)
    child.start()
    child.join(60)
    assert child.exitcode == 0   # 1 when app.py drew its page at import (bare mode: Page has no _title)


def test_the_servers_workers_are_replaced_once_one_of_them_died(monkeypatch):
    # real spawned pools, without the torch-loading initializer (only the pool's own bookkeeping is tested)
    monkeypatch.setattr(executors, "_SHARED", {})
    monkeypatch.setattr(executors, "_spawn_pool", lambda n: ProcessPoolExecutor(n, mp_context=SPAWN))
    pool = executors.server_processes(1)
    assert executors.server_processes(1) is pool   # kept while it works
    os.kill(pool.submit(os.getpid).result(60), signal.SIGKILL)
    with pytest.raises(BrokenProcessPool):
        pool.submit(os.getpid).result(60)
    fresh = executors.server_processes(1)
    try:
        assert fresh is not pool and fresh.submit(os.getpid).result(60) > 0
    finally:
        fresh.shutdown()
