"""How fast a room's students follow the teacher, the server alone: no browser on the bench machine.

    python bench/room_follow.py [--students 30] [--moves 8] [--training 2] [--nice 10,0] [--pairs 2]

One `streamlit run app.py` per setting of EXPLORER_JOB_NICE (the training jobs' CPU priority,
explorer/jobs/slots.py), in turn, `--pairs` times (A B A B: a shared machine's load drifts). Each server gets
`--training` protocol tabs that start a run on the Train page, then `--students` protocol students
(bench/room_client.py) on `lessons?room=CODE`; the teacher moves the room through the library
(`Rooms.move`, what the teacher's Next writes) every 3 s through module6's steps 2-4. Measured per
student and move: from the move to the new step's title received by the student (a browser paints
it some tens of ms later), and the server's CPU seconds (training included). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.room_client import Student, now_ms  # noqa: E402
from bench.room_load import cpu_s, load, summary  # noqa: E402
from tests.browser.helpers import (  # noqa: E402
    process_family,
    server_pid,
    streamlit_server,  # noqa: E402
)

LESSON, STEPS = "module6", (1, 2, 3)   # 0-based: steps 2-4, a question and two views
TRAIN_QUERY = "train_steps={steps}&train_seed={seed}"


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


def one_server(nice: int, args, titles: list[str]) -> dict:
    from explorer.rooms import Rooms

    os.environ["EXPLORER_JOB_NICE"] = str(nice)
    tmp = Path(tempfile.mkdtemp(prefix="explorer-follow-bench-"))
    with streamlit_server(tmp) as url:
        pid = server_pid(url)
        (tmp / "runs").mkdir(exist_ok=True)
        rooms = Rooms(tmp / "runs" / "rooms.sqlite")
        teacher = "bench-teacher-owner-id"   # the teacher browser's owner id: the room knows it by its hash
        code = rooms.create(LESSON, 0, teacher)
        trainers = start_training(url, args.training, args.train_steps)
        students = [Student(url, f"bench-follow-{code}-{i:04d}-xxxxx", f"room={code}") for i in range(args.students)]
        for s in students:
            s.start()
        seated = sum(s.wait_rendered(90) for s in students)
        time.sleep(3)   # at rest: the class waits for the teacher
        follow, cpus = [], []
        for m in range(args.moves):
            step = STEPS[m % len(STEPS)]
            for s in students:
                s.titles.pop(titles[step], None)
            before, moved = cpu_s(process_family(pid)), now_ms()
            rooms.move(code, teacher, LESSON, step)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not all(titles[step] in s.titles for s in students):
                time.sleep(0.02)
            follow += [None if titles[step] not in s.titles else (s.titles[titles[step]] - moved) / 1000
                       for s in students]
            cpus.append(cpu_s(process_family(pid)) - before)
            time.sleep(3)
        errors = [e for s in [*students, *trainers] for e in s.errors]
        training = [t.runs for t in trainers]   # a training tab's poll reruns about once a second while it trains
        for s in [*students, *trainers]:
            s.close()
    return dict(nice=nice, follow=follow, cpu=statistics.median(cpus), seated=seated, errors=errors,
                load=load(), training=training)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--moves", type=int, default=8)
    ap.add_argument("--training", type=int, default=2, help="training jobs on the server (the two slots)")
    ap.add_argument("--train-steps", type=int, default=4000, help="within the Train page's 10-minute limit")
    ap.add_argument("--nice", default="10,0", help="EXPLORER_JOB_NICE values to compare, in turn")
    ap.add_argument("--pairs", type=int, default=2)
    args = ap.parse_args()
    from explorer.lessons import LESSONS

    titles = [s.title for s in LESSONS[LESSON].steps]
    nices = [int(v) for v in args.nice.split(",")]
    print(f"cores={os.cpu_count()} load {load()}; {args.students} students, {args.moves} moves, "
          f"{args.training} training jobs, nice {nices} x {args.pairs}", flush=True)
    results = []
    for _ in range(args.pairs):
        for nice in nices:
            got = one_server(nice, args, titles)
            results.append(got)
            print(f"nice {nice}: follow {summary(got['follow'])}; server CPU-s per move {got['cpu']:.2f}; "
                  f"seated {got['seated']}; training tabs' reruns {got['training']}; load {got['load']}; "
                  f"errors {got['errors'][:3]}", flush=True)
    for nice in nices:
        mine = [r for r in results if r["nice"] == nice]
        print(f"\nnice {nice}, all servers: follow {summary([t for r in mine for t in r['follow']])}")


if __name__ == "__main__":
    main()
