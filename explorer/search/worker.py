"""The first code a spawned worker process runs (ProcessPoolExecutor's initializer): one thread for every
pool a trial could touch, the way Ray starts its task workers.

This module imports nothing heavy at its top: a spawned child unpickles the initializer before anything
else, so importing this module costs nothing and `init` sets the environment before torch, numpy or a
BLAS library load (OpenMP and MKL read their thread counts once, when they start). Without it each
worker inherits the shell's environment and its libraries size their pools to every core, which on a
machine with as many workers as cores oversubscribes it (bench/README.md, "Hyperparameter search that
scales").
"""

from __future__ import annotations

import os
import signal
import socket

ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                     "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")}


def worker_id() -> str:
    """`host:pid` of the process running this (a trial's or a run's worker, as its JSON and the page say)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def init() -> None:
    """Single-threaded from here on: the environment first, then torch's intra- and inter-op pools."""
    os.environ.update(ONE_THREAD)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's: it stops the trials by their file
    import torch  # after the environment: torch reads its thread settings when it loads

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # the pool had started already (torch imported by something before us): keep it
        pass


def threads(_=None) -> dict:
    """What this process runs with: the environment and torch's pools (a worker reports it, tests read it)."""
    import torch  # loaded by init() already; here only to read it

    return {**{k: os.environ.get(k) for k in ONE_THREAD}, "torch": torch.get_num_threads(),
            "interop": torch.get_num_interop_threads(), "pid": os.getpid()}


__all__ = ["ONE_THREAD", "worker_id", "init", "threads"]
