"""A real Ray cluster for the tests that need one: `ray start --head --block` on a loopback port with 2 CPUs,
started and stopped by its pid (SIGTERM: its raylet, GCS and workers go with it). A module shares one head
(`with ray_head(tmp) as address:` in a module-scoped fixture): starting one takes seconds."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def ray_head(temp: Path, cpus: int = 2):
    """Yields the head's address, "127.0.0.1:PORT"; its log is temp/head.log."""
    ray_bin = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
    port = free_port()
    log = open(temp / "head.log", "w")  # noqa: SIM115 - open for the head's whole life
    head = subprocess.Popen([ray_bin, "start", "--head", "--block", "--port", str(port), "--node-ip-address",
                             "127.0.0.1", "--num-cpus", str(cpus), "--include-dashboard", "false",
                             "--disable-usage-stats", "--temp-dir", str(temp)], stdout=log, stderr=subprocess.STDOUT,
                            # no workers started ahead for the driver: the tasks and actors start their own
                            # (with them, 4 worker processes started for 2 CPUs); no drain on SIGTERM: with
                            # a detached actor alive (the Train page's runs) the head waited out its 30 s
                            env={**os.environ, "RAY_prestart_worker_first_driver": "0",
                                 "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"})
    try:
        deadline = time.monotonic() + 90
        while not answers(port):
            assert head.poll() is None and time.monotonic() < deadline, (temp / "head.log").read_text()[-2000:]
            time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        os.kill(head.pid, signal.SIGTERM)
        try:
            head.wait(30)
        except subprocess.TimeoutExpired:
            os.kill(head.pid, signal.SIGKILL)
            head.wait(10)
        log.close()
