"""Trials as Ray tasks on an existing cluster: `RayExecutor("10.0.0.5:6379")` (or `ray://host:10001`).

Ray is the one extra package a cluster needs (`pip install -r requirements-dev.txt`, or ray alone); it is
imported only here and only when asked for, so the app and the CLI work without it. Each trial is a
task of one CPU that trains with one torch thread; the `explorer` package travels with the job (Ray's
`py_modules`), the nodes need only the packages of requirements.txt. The driver samples and records.
"""

from __future__ import annotations

import socket
import threading
from concurrent.futures import Future
from pathlib import Path

CONNECT_TIMEOUT_S = 10.0   # nothing listening at the address: refused within this
INIT_TIMEOUT_S = 60.0      # something listens: Ray's handshake and the code upload may take this long
ENV_ADDRESS = "EXPLORER_RAY_ADDRESS"   # the app's cluster, if any
PACKAGE = Path(__file__).resolve().parent.parent   # explorer/


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster at the address did not answer: the message says which."""


def _host_port(address: str) -> tuple[str, int] | None:
    rest = address.split("://", 1)[-1]
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]") or "127.0.0.1", int(port)


def _probe(address: str, timeout: float) -> None:
    """Fail fast when nothing listens at the address (ray.init would retry for a minute or more)."""
    hp = _host_port(address)
    if hp is None:
        raise RayUnavailable(f"Ray address {address!r} must read HOST:PORT (e.g. 127.0.0.1:6379) or "
                             "ray://HOST:PORT")
    try:
        with socket.create_connection(hp, timeout=timeout):
            pass
    except OSError as err:
        raise RayUnavailable(f"no Ray cluster answered at {address} within {timeout:g} s ({err.strerror or err}); "
                             "start one with `ray start --head` or check the address") from None


def connect(address: str, timeout: float = CONNECT_TIMEOUT_S):
    """The ray module, connected to the cluster at `address` within `timeout` seconds, or RayUnavailable."""
    try:
        import ray  # optional: only a search on a cluster needs it
    except ImportError:
        raise RayUnavailable("running trials on a Ray cluster needs the ray package: "
                             "pip install ray==2.60.0 (see README.md, 'A cluster')") from None
    if ray.is_initialized():
        return ray  # this process is connected already (another search of the app's)
    _probe(address, timeout)
    done, error = threading.Event(), []

    def init() -> None:
        try:
            ray.init(address=address, runtime_env={"py_modules": [str(PACKAGE)],
                                                   "excludes": ["__pycache__", "*.pyc"]},
                     logging_level="ERROR", log_to_driver=False)
        except Exception as exc:
            error.append(exc)
        finally:
            done.set()

    threading.Thread(target=init, name="ray-connect", daemon=True).start()
    if not done.wait(INIT_TIMEOUT_S):
        raise RayUnavailable(f"{address} accepts connections but no Ray cluster answered there within "
                             f"{INIT_TIMEOUT_S:g} s")
    if error:
        raise RayUnavailable(f"could not connect to the Ray cluster at {address}: {error[0]}")
    return ray


_USERS = [0]                 # users of the connection in this process (executors, runs): the last one disconnects
_USERS_LOCK = threading.Lock()


def acquire(address: str, timeout: float = CONNECT_TIMEOUT_S):
    """`connect`, counted: the connection stays until every `acquire` has had its `release`."""
    with _USERS_LOCK:
        ray = connect(address, timeout)
        _USERS[0] += 1
    return ray


def release(ray) -> None:
    with _USERS_LOCK:
        _USERS[0] -= 1
        if _USERS[0] == 0:  # nobody else in this process uses the connection
            ray.shutdown()


class RayExecutor:
    """Each submitted call a Ray task of one CPU; `workers` is the cluster's CPU count."""

    def __init__(self, address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
        self.address = address
        self.ray = acquire(address, timeout)
        self._open = True
        self.workers = max(1, int(self.ray.cluster_resources().get("CPU", 1)))
        self._remote = {}
        self._refs: dict[int, object] = {}

    def ready(self) -> bool:
        return True

    def submit(self, fn, arg) -> Future:
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self.ray.remote(num_cpus=1, max_retries=0)(fn)
        ref = remote.remote(arg)
        future = ref.future()
        self._refs[id(future)] = ref
        future.add_done_callback(lambda f: self._refs.pop(id(f), None))
        return future

    def cancel(self, future: Future) -> None:
        ref = self._refs.pop(id(future), None)
        if ref is not None:
            self.ray.cancel(ref, force=True)

    def close(self) -> None:
        for ref in list(self._refs.values()):
            self.ray.cancel(ref, force=True)
        self._refs.clear()
        if self._open:
            self._open = False
            release(self.ray)


__all__ = ["CONNECT_TIMEOUT_S", "ENV_ADDRESS", "RayUnavailable", "RayExecutor", "acquire", "connect", "release"]
