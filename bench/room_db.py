"""The rooms' database alone: what a lock (`Rooms.predict`), a student's poll (`Rooms.version`) and a state
read cost on SQLite and on PostgreSQL, from 1 and from 8 threads (a server's sessions) at once.

    python bench/room_db.py [--students 60] [--backends sqlite,postgresql]

PostgreSQL is the tests' own (tests/postgres.py: Debian's PostgreSQL 15 on a loopback port, fsync off), so
its figures are the database's and the driver's, not a network's or a disk's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explorer.rooms import Rooms  # noqa: E402

TEACHER = "bench-teacher-owner-id-01"


def _timed(calls, threads: int) -> list[float]:
    """Each call's milliseconds, `threads` of them running at once."""
    out, parts = [], [calls[i::threads] for i in range(threads)]

    def work(part):
        for call in part:
            t = time.perf_counter()
            call()
            out.append((time.perf_counter() - t) * 1000)

    workers = [threading.Thread(target=work, args=(p,)) for p in parts]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return out


def measure(where, students: int) -> dict[str, str]:
    rooms, figures = Rooms(where), {}
    for threads in (1, 8):
        code = rooms.create("ch2", 0, TEACHER)
        seats = [f"bench-seat-{threads}-{n:05d}" for n in range(students)]
        for seat in seats:
            rooms.join(code, seat)
        for name, calls in (("lock", [lambda c=code, s=s: rooms.predict(c, s, "ch2", 0, 1) for s in seats]),
                            ("poll", [lambda c=code: rooms.version(c)] * students * 5),
                            ("state", [lambda c=code: rooms.state(c)] * students * 2)):
            ms = sorted(_timed(calls, threads))
            figures[f"{name} x{threads}"] = f"{statistics.median(ms):.2f} / {ms[int(0.95 * len(ms))]:.2f}"
    rooms.close()
    return figures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=60)
    p.add_argument("--backends", default="sqlite,postgresql")
    args = p.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend in args.backends.split(","):
            if backend == "sqlite":
                rows[backend] = measure(Path(tmp) / "rooms.sqlite", args.students)
            else:
                from tests.postgres import Postgres
                server = Postgres.start()
                try:
                    rows[backend] = measure(server.fresh_database(), args.students)
                finally:
                    server.stop()
    names = list(next(iter(rows.values())))
    print("ms p50 / p95 | " + " | ".join(names))
    for backend, figures in rows.items():
        print(f"{backend} | " + " | ".join(figures[n] for n in names))


if __name__ == "__main__":
    main()
