"""How fast a room's students follow the teacher, the server alone: no browser on the bench machine.

    python bench/room_follow.py [--students 30] [--moves 8] [--training 2] [--nice 10,0] [--pairs 2]
                                [--reveals 0] [--servers 1] [--postgres]

One `streamlit run app.py` per setting of EXPLORER_JOB_NICE (the training jobs' CPU priority,
explorer/jobs/slots.py), in turn, `--pairs` times (A B A B: a shared machine's load drifts); with `--servers K`,
K of them sharing one runs folder (the rooms' SQLite database; with `--postgres`, a PostgreSQL server started
for the run, tests/postgres.py, in EXPLORER_DATABASE_URL) behind Debian's nginx with deploy/nginx.conf, each
student with a route cookie of its own. Each setting gets `--training` protocol tabs that start a run on the
Train page (on the first server), then `--students` protocol students (bench/room_client.py) on
`lessons?room=CODE`; the teacher moves the room through the library (`Rooms.move`, what the teacher's Next
writes) every 3 s through module6's steps 2-4, then reveals step 2's question `--reveals` times (`Rooms.reveal`,
then `ask_again` to clear it for the next). Measured per student: from the move to the new step's title
received by the student (a browser paints it some tens of ms later), from the reveal to the answer's block;
per event, the servers' CPU seconds (training included) and their reruns (full and fragment). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.room_client import Student, now_ms  # noqa: E402
from bench.room_load import cpu_s, load, summary  # noqa: E402
from tests.browser.cluster import ROUTE, AppServer, Nginx  # noqa: E402
from tests.browser.helpers import process_family  # noqa: E402

LESSON, STEPS, QUESTION = "module6", (1, 2, 3), 1   # 0-based: steps 2-4, a question and two views
TRAIN_QUERY = "train_steps={steps}&train_seed={seed}"
TEACHER = "bench-teacher-owner-id"   # the teacher browser's owner id: the room knows it by its hash


def start_training(url: str, n: int, steps: int) -> list[Student]:
    trainers = []
    for i in range(n):
        tab = Student(url, f"bench-follow-trainer-{i:04d}-xxxxxx", TRAIN_QUERY.format(steps=steps, seed=i + 1),
                      page="train")
        tab.start()
        tab.wait_rendered(90)
        tab.click("train_start")
        trainers.append(tab)
    return trainers


def servers(stack: ExitStack, tmp: Path, n: int, env: dict[str, str]) -> tuple[str, list[int]]:
    """n app servers on one runs folder (behind nginx when n > 1): the students' URL and the servers' pids."""
    apps = [AppServer(tmp / f"app{i}", {"EXPLORER_RUNS_DIR": str(tmp / "runs"), **env}) for i in range(n)]
    for app in apps:
        app.tmp.mkdir(parents=True)
        stack.callback(app.stop)
        app.start()
    if n == 1:
        return apps[0].url, [apps[0].pid]
    proxy = Nginx(tmp / "nginx", [app.port for app in apps]).start()
    stack.callback(proxy.stop)
    return proxy.url, [app.pid for app in apps]


def servers_cpu(pids: list[int]) -> float:
    """The app servers' CPU seconds so far, their children included."""
    return sum(cpu_s(process_family(p)) for p in pids)


class Meter:
    """The servers' CPU seconds and the students' reruns over one event."""

    def __init__(self, pids: list[int], students: list[Student]) -> None:
        self.pids, self.students = pids, students

    def _cpu(self) -> float:
        return servers_cpu(self.pids)

    def __enter__(self):
        self.cpu = self.start = self._cpu()
        self.runs = sum(s.runs for s in self.students), sum(s.full_runs for s in self.students)
        self._each = [s.runs for s in self.students]
        return self

    def arrived(self) -> None:
        """The CPU seconds until every student had it (the issue's measure; the reruns' tail comes after)."""
        self.until_arrival = self._cpu() - self.start

    def __exit__(self, *exc) -> None:
        self.cpu = self._cpu() - self.cpu
        self.runs = (sum(s.runs for s in self.students) - self.runs[0],
                     sum(s.full_runs for s in self.students) - self.runs[1],
                     sum(s.runs - before > 1 for s, before in zip(self.students, self._each)))


def wait_all(students: list[Student], arrived, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not all(arrived(s) for s in students):
        time.sleep(0.02)


def settle(students: list[Student], pids: list[int], quiet_s: float = 1.0, seconds: float = 60) -> None:
    """Until no student has run anything and the servers spent under a tenth of a core, both for `quiet_s`: the
    last event's reruns are over before the next event's window opens. Runs finishing is not enough alone: a
    class's reruns share the GIL, so they all end late and together, after a second with none finished."""
    deadline, last, since, busy = time.monotonic() + seconds, None, time.monotonic(), servers_cpu(pids)
    while time.monotonic() < deadline:
        runs = sum(s.runs for s in students)
        if runs != last:
            last, since, busy = runs, time.monotonic(), servers_cpu(pids)
        elif time.monotonic() - since >= quiet_s:
            if servers_cpu(pids) - busy < 0.1 * quiet_s:
                return
            since, busy = time.monotonic(), servers_cpu(pids)
        time.sleep(0.05)


def one_server(nice: int, args, titles: list[str]) -> dict:
    from explorer.rooms import Rooms

    os.environ["EXPLORER_JOB_NICE"] = str(nice)
    tmp = Path(tempfile.mkdtemp(prefix="explorer-follow-bench-"))
    with ExitStack() as stack:
        database = tmp / "runs" / "rooms.sqlite"
        if args.postgres:
            from tests.postgres import Postgres

            server = Postgres.start()
            stack.callback(server.stop)
            database = server.fresh_database()
        url, pids = servers(stack, tmp, args.servers, {"EXPLORER_DATABASE_URL": str(database)} if args.postgres else {})
        (tmp / "runs").mkdir(exist_ok=True)
        rooms = Rooms(database)
        code = rooms.create(LESSON, 0, TEACHER)
        trainers = start_training(url, args.training, args.train_steps)
        students = [Student(url, f"bench-follow-{code}-{i:04d}-xxxxx", f"room={code}",
                            cookies=f"{ROUTE}=bench-{i:04d}" if args.servers > 1 else "")
                    for i in range(args.students)]
        for s in students:
            s.start()
        seated = sum(s.wait_rendered(90) for s in students)
        time.sleep(2)
        with Meter(pids, students) as rest:   # at rest: the class waits for the teacher
            time.sleep(5)
        follow, reveal, events = [], [], {"move": [], "reveal": []}
        for m in range(args.moves + args.reveals):
            step = STEPS[m % len(STEPS)] if m < args.moves else QUESTION
            if m >= args.moves and rooms.state(code).step != QUESTION:
                rooms.move(code, TEACHER, LESSON, QUESTION)
                wait_all(students, lambda s: titles[QUESTION] in s.titles)
                time.sleep(2)
                settle(students, pids)   # a title arrives before its rerun ends
            for s in students:
                s.titles.pop(titles[step], None)
                s.result = None
            with Meter(pids, students) as meter:
                start = now_ms()
                if m < args.moves:
                    rooms.move(code, TEACHER, LESSON, step)
                    wait_all(students, lambda s, want=titles[step]: want in s.titles)
                    meter.arrived()
                    follow += [None if titles[step] not in s.titles else (s.titles[titles[step]] - start) / 1000
                               for s in students]
                else:
                    rooms.reveal(code, TEACHER, LESSON, QUESTION)
                    wait_all(students, lambda s: s.result is not None)
                    meter.arrived()
                    reveal += [None if s.result is None else (s.result - start) / 1000 for s in students]
                time.sleep(1.5)   # the reruns' tail, and one more poll each, inside the window
            events["move" if m < args.moves else "reveal"].append((meter.until_arrival, meter.cpu, *meter.runs))
            if m >= args.moves:
                rooms.ask_again(code, TEACHER, LESSON, QUESTION)
            time.sleep(1.5)
            settle(students, pids)
        errors = [e for s in [*students, *trainers] for e in s.errors]
        training = [t.runs for t in trainers]   # a training tab's poll reruns about once a second while it trains
        for s in [*students, *trainers]:
            s.close()
    return dict(nice=nice, follow=follow, reveal=reveal, events=events, seated=seated, errors=errors,
                load=load(), training=training, rest=(rest.cpu / 5, rest.runs[0] / 5))


def per_event(events: list[tuple[float, float, int, int, int]], n: int) -> str:
    """Medians over the events: CPU until every student had it, CPU with the 1.5 s after, the reruns."""
    if not events:
        return "none"
    upto, cpu = (statistics.median(e[i] for e in events) for i in (0, 1))
    runs, full, twice = (statistics.median(e[i] for e in events) for i in (2, 3, 4))
    return (f"server CPU-s {upto:.2f} until all had it ({1000 * upto / max(n, 1):.1f} ms a student), {cpu:.2f} "
            f"with the 1.5 s after; reruns {runs:.0f}, of them full {full:.0f}; students who ran more than once "
            f"{twice:.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--moves", type=int, default=8)
    ap.add_argument("--reveals", type=int, default=0, help="reveals of step 2's question after the moves")
    ap.add_argument("--servers", type=int, default=1, help="app servers behind nginx (deploy/nginx.conf)")
    ap.add_argument("--postgres", action="store_true", help="the rooms on a PostgreSQL server started for the run")
    ap.add_argument("--training", type=int, default=2, help="training jobs on the server (the two slots)")
    ap.add_argument("--train-steps", type=int, default=4000, help="within the Train page's 10-minute limit")
    ap.add_argument("--nice", default="10,0", help="EXPLORER_JOB_NICE values to compare, in turn")
    ap.add_argument("--pairs", type=int, default=2)
    args = ap.parse_args()
    from explorer.lessons import LESSONS

    titles = [s.title for s in LESSONS[LESSON].steps]
    nices = [int(v) for v in args.nice.split(",")]
    print(f"cores={os.cpu_count()} load {load()}; {args.students} students, {args.moves} moves, {args.reveals} "
          f"reveals, {args.servers} server(s){' on PostgreSQL' if args.postgres else ''}, {args.training} training "
          f"jobs, nice {nices} x {args.pairs}", flush=True)
    results = []
    for _ in range(args.pairs):
        for nice in nices:
            got = one_server(nice, args, titles)
            results.append(got)
            print(f"nice {nice}: follow {summary(got['follow'])}; a move: "
                  f"{per_event(got['events']['move'], args.students)}"
                  f"\n  reveal {summary(got['reveal']) if got['reveal'] else '-'}; a reveal: "
                  f"{per_event(got['events']['reveal'], args.students)}\n  seated {got['seated']}; training tabs' "
                  f"reruns {got['training']}; at rest {got['rest'][0]:.3f} CPU-s/s, {got['rest'][1]:.1f} reruns/s; "
                  f"load {got['load']}; errors {got['errors'][:3]}", flush=True)
    for nice in nices:
        mine = [r for r in results if r["nice"] == nice]
        print(f"\nnice {nice}, all servers: follow {summary([t for r in mine for t in r['follow']])}")


if __name__ == "__main__":
    main()
