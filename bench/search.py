"""Hyperparameter search that scales: the same study on 1 and 2 local worker processes, on a local Ray
cluster against local processes, and TPE against random search on one budget.

    python bench/search.py [--part workers|ray|samplers|all] [--steps 150] [--trials 8] [--seeds 3]

workers   8 trials on ProcessExecutor(1) and ProcessExecutor(2), workers warmed first: the wall-clock ratio
ray       the same 8 trials as Ray tasks on a `ray start --head` cluster of 2 CPUs (started here, stopped by
          its pid) against ProcessExecutor(2), run before and after it
samplers  a 12-point grid (lr x d_model) run once; then TPE and random search over the same 12 choices,
          3 sampler seeds each, a budget of 12 trials: how many trials each needs to reach the grid's best
          val_token_acc. Every point trains with seed 0, so a point's value is the grid's (looked up, not
          retrained): the count measures the sampler, not training noise.

Nothing is asserted: it prints figures for bench/README.md with the load average beside them (the
machine may be shared). Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("EXPLORER_RUNS_DIR", tempfile.mkdtemp(prefix="bench-search-"))

from explorer.search import ProcessExecutor, SearchSpec, run_search  # noqa: E402
from explorer.search.executors import Executor, warm  # noqa: E402

SPACE = ("lr=1e-3:1e-2:log", "d_model=16,32,64")
GRID = ("lr=0.001,0.002,0.005,0.01", "d_model=16,32,64", "seed=0")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def warmed(executor):
    """Every worker started and its imports done, so the timing is of trials."""
    assert len(set(warm(executor))) == executor.workers
    return executor


def timed(spec: SearchSpec, executor, trials: list | None = None) -> float:
    start = time.perf_counter()
    out = run_search(spec, executor)
    assert sum(t["state"] == "COMPLETE" for t in out["trials"]) == spec.trials, out["trials"]
    if trials is not None:
        trials.extend(out["trials"])
    return time.perf_counter() - start


def best_split(trials: list, workers: int) -> float:
    """The speed-up `workers` could give these trials at most, handed out in order as the driver does
    (each to the first free worker), with every trial taking the time it took alone."""
    free = [0.0] * workers
    for t in sorted(trials, key=lambda t: t["number"]):
        free[free.index(min(free))] += t["seconds"]
    return sum(t["seconds"] for t in trials) / max(free)


def workers(args) -> None:
    spec = SearchSpec(task=args.task, space=SPACE, trials=args.trials, steps=args.steps, sampler="random",
                      storage="memory", keep_runs=False)
    alone: list = []
    one = timed(spec, warmed(ProcessExecutor(1)), alone)
    two = timed(spec, warmed(ProcessExecutor(2)))
    trained = sum(t["seconds"] for t in alone)
    print(f"workers: {args.trials} trials x {args.steps} steps: 1 worker {one:.1f} s ({trained:.1f} s of it in "
          f"trials), 2 workers {two:.1f} s, speed-up {one / two:.2f}x; at most {best_split(alone, 2):.2f}x with "
          f"these trial times handed out in order  ({load()})")


def _ray_head(temp: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    head = subprocess.Popen([shutil.which("ray") or "ray", "start", "--head", "--block", "--port", str(port),
                             "--node-ip-address", "127.0.0.1", "--num-cpus", "2", "--include-dashboard", "false",
                             "--disable-usage-stats", "--temp-dir", str(temp)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return head, f"127.0.0.1:{port}"
        except OSError:
            time.sleep(0.5)
    head.kill()
    raise RuntimeError("the Ray head did not start")


def ray(args) -> None:
    from explorer.search.ray_cluster import RayExecutor

    spec = SearchSpec(task=args.task, space=SPACE, trials=args.trials, steps=args.steps, sampler="random",
                      storage="memory", keep_runs=False)
    before = timed(spec, warmed(ProcessExecutor(2)))   # local before and after Ray: drift shows as a gap
    temp = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    head, address = _ray_head(temp)
    try:
        connect = time.perf_counter()
        executor = RayExecutor(address)
        connect = time.perf_counter() - connect
        warm = time.perf_counter()
        warmed(executor)
        warm = time.perf_counter() - warm
        on_ray = timed(spec, executor)
    finally:
        os.kill(head.pid, signal.SIGTERM)
        head.wait(60)
        shutil.rmtree(temp, ignore_errors=True)
    after = timed(spec, warmed(ProcessExecutor(2)))
    local = (before + after) / 2
    print(f"ray: {args.trials} trials x {args.steps} steps: Ray (2 CPUs, local head) {on_ray:.1f} s, local processes "
          f"(2) {before:.1f} s before and {after:.1f} s after, Ray / local {on_ray / local:.2f}; connect "
          f"{connect:.1f} s, first tasks {warm:.1f} s ({load()})")


class Lookup(Executor):
    """A trial's result looked up in the grid's: a point's value depends only on its params (seed fixed)."""

    def __init__(self, grid_rows) -> None:
        self.seen = {tuple(sorted(t["params"].items())): {"value": t["value"], "state": t["state"], "reports": [],
                                                          "rungs": {}, "error": "", "worker": t["worker"],
                                                          "seconds": t["seconds"]} for t in grid_rows}

    def submit(self, fn, arg) -> Future:
        key = tuple(sorted(arg["params"].items()))
        future: Future = Future()
        future.set_result({**self.seen[key], "number": arg["number"]})
        return future


def samplers(args) -> None:
    grid = SearchSpec(task=args.task, space=GRID, trials=12, steps=args.steps, sampler="grid", storage="memory",
                      keep_runs=False, metric="val_token_acc")
    start = time.perf_counter()
    top = run_search(grid, ProcessExecutor(2))
    lookup = Lookup(top["trials"])
    best = top["best"]["value"]
    print(f"samplers: grid of 12 x {args.steps} steps in {time.perf_counter() - start:.0f} s; best val_token_acc "
          f"{best:.3f} at {top['best']['params']}  ({load()})")
    for sampler in ("tpe", "random"):
        needed = []
        for seed in range(args.seeds):
            spec = grid.replace(sampler=sampler, seed=seed, study=f"{sampler}-{seed}")
            rows = sorted(run_search(spec, lookup)["trials"], key=lambda t: t["number"])
            hit = next((i + 1 for i, t in enumerate(rows) if t["value"] is not None and t["value"] >= best), None)
            needed.append(hit)
        shown = ", ".join("not reached" if n is None else str(n) for n in needed)
        print(f"samplers: {sampler:6s} trials to reach the grid's best (budget 12), seeds 0-{args.seeds - 1}: {shown}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", default="all", choices=("workers", "ray", "samplers", "all"))
    ap.add_argument("--task", default="reversal-fast")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    print(f"task={args.task} cores={os.cpu_count()} torch threads per worker=1  ({load()})")
    for part in (("workers", "ray", "samplers") if args.part == "all" else (args.part,)):
        globals()[part](args)


if __name__ == "__main__":
    main()
