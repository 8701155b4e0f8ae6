"""Drivers started together on a fresh SQLite study file: each one opens the same study (their race to
create the storage's tables and stamp its schema made some fail with "table already exists" or
"UNIQUE constraint failed: alembic_version", 5 of 5 tries with four drivers)."""

import multiprocessing

from explorer.search.study import SearchSpec, open_study

DRIVERS, TRIES = 3, 5


def _open_each(urls: list[str], barrier, results) -> None:
    for url in urls:
        barrier.wait()  # all at once, as `explorer search` started in several terminals
        try:
            study = open_study(SearchSpec(task="reversal-fast", space=("lr=1e-4:1e-2:log",), steps=20, storage=url))
            results.put((url, study.study_name))
        except Exception as exc:  # reported to the test, which names it
            results.put((url, f"{type(exc).__name__}: {exc}".splitlines()[0]))


def test_drivers_started_together_on_a_fresh_storage_all_open_the_one_study(tmp_path):
    ctx = multiprocessing.get_context("fork")   # the drivers start with the library imported: no torch import each
    urls = [f"sqlite:///{tmp_path}/search-{n}.db" for n in range(TRIES)]  # a fresh file per try
    barrier, results = ctx.Barrier(DRIVERS), ctx.Queue()
    drivers = [ctx.Process(target=_open_each, args=(urls, barrier, results)) for _ in range(DRIVERS)]
    for p in drivers:
        p.start()
    opened = [results.get(timeout=120) for _ in range(DRIVERS * TRIES)]
    for p in drivers:
        p.join(30)
    for url in urls:
        names = [name for u, name in opened if u == url]
        assert len(names) == DRIVERS and len(set(names)) == 1 and names[0].startswith("reversal-fast"), names
