"""Several app servers behind Debian's nginx, for the tests of a course on several servers: `deploy/nginx.conf`
rendered for loopback ports and run as a non-daemon process under a prefix of its own, stopped by its pid.

Each app server's environment is a parameter (`AppServer(tmp, env)`): today two servers share state by sharing
one EXPLORER_RUNS_DIR (the rooms' SQLite file lives there); with a database URL they get runs folders of their
own and one EXPLORER_DATABASE_URL."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.browser.helpers import ROOT, free_port, server_pid, streamlit_server

NGINX_CONF = ROOT / "deploy" / "nginx.conf"
ROUTE = "explorer_route"            # the sticky cookie deploy/nginx.conf hands out
UPSTREAM = "X-Explorer-Upstream"    # the header naming the app server that answered
_SERVERS = re.compile(r"(# BEGIN app servers\n).*?(\s*# END app servers)", re.S)
_LISTEN = re.compile(r"^(\s*)listen [^;]+;", re.M)
# A line of the `explorer` log format; upstream lists every server tried ("A:1, B:2" after a failover).
_LOG = re.compile(r'"(?P<request>[^"]*)" (?P<status>\d+) route=(?P<route>\S+) upstream=(?P<upstream>.*?) '
                  r'upstream_status=(?P<upstream_status>.*)$')


def render_nginx(listen: int, ports: list[int], text: str | None = None) -> str:
    """deploy/nginx.conf listening on 127.0.0.1:`listen`, balancing the app servers on `ports`."""
    text = NGINX_CONF.read_text() if text is None else text
    servers = "".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=15s;\n" for p in ports)
    text, n = _SERVERS.subn(lambda m: m.group(1) + servers.rstrip("\n") + m.group(2), text)
    text, k = _LISTEN.subn(lambda m: f"{m.group(1)}listen 127.0.0.1:{listen};", text)
    assert n == 1 and k == 1, "deploy/nginx.conf lost its BEGIN/END app servers lines or its listen line"
    return text


class AppServer:
    """One `streamlit run app.py` on a free port with `env` over this process's environment; `kill()` ends it
    at once by its pid (SIGKILL: a crash, no clean-up), as a server dying mid-lesson."""

    def __init__(self, tmp: Path, env: dict[str, str]) -> None:
        self.tmp, self.env, self.port = tmp, env, free_port()
        self.url: str | None = None
        self._stack = ExitStack()

    def start(self) -> AppServer:
        self.url = self._stack.enter_context(streamlit_server(self.tmp, self.port, self.env))
        self.pid = server_pid(self.url)
        return self

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)

    def stop(self) -> None:
        self._stack.close()   # terminates the process if it still runs, and waits for it

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


class Nginx:
    """nginx in front of `ports`, with deploy/nginx.conf under its own prefix; `url` is what students open."""

    def __init__(self, prefix: Path, ports: list[int]) -> None:
        executable = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(executable).exists():
            pytest.fail("nginx is not installed: the servers' tests run Debian's nginx (`apt-get install nginx`)")
        self.prefix, self.port = prefix, free_port()
        (prefix / "logs").mkdir(parents=True, exist_ok=True)
        (prefix / "temp").mkdir(exist_ok=True)
        self.conf = prefix / "nginx.conf"
        self.conf.write_text(render_nginx(self.port, ports))
        self.url = f"http://127.0.0.1:{self.port}"
        self._cmd = [executable, "-p", str(prefix), "-c", str(self.conf), "-g", "daemon off;"]
        self.proc: subprocess.Popen | None = None

    def syntax_check(self) -> subprocess.CompletedProcess:
        """`nginx -t` on the rendered config (it opens the logs under the prefix, listens nowhere)."""
        return subprocess.run([*self._cmd[:5], "-t"], capture_output=True, text=True)

    def start(self) -> Nginx:
        check = self.syntax_check()
        assert check.returncode == 0, f"nginx -t refused deploy/nginx.conf:\n{check.stderr}"
        self.proc = subprocess.Popen(self._cmd, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"nginx exited with {self.proc.returncode}: {self.proc.stderr.read()}")
            try:
                if self.upstream() is not None:
                    return self
            except OSError:
                time.sleep(0.2)
        pytest.fail(f"nginx did not answer on {self.url} within 20 s")

    def upstream(self, route: str | None = None) -> str | None:
        """The app server (host:port) that answers /_stcore/health for a browser with this route cookie."""
        request = urllib.request.Request(f"{self.url}/_stcore/health",
                                         headers={"Cookie": f"{ROUTE}={route}"} if route else {})
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.headers.get(UPSTREAM)

    def routes_to(self, address: str, n: int, avoid: set[str] = frozenset()) -> list[str]:
        """n route cookies that nginx sends to the app server at `address` while it is up."""
        found = []
        for i in range(400):
            route = f"route-{i:04d}"
            if route not in avoid and self.upstream(route) == address:
                found.append(route)
                if len(found) == n:
                    return found
        raise AssertionError(f"fewer than {n} of 400 routes hash to {address}")

    def access_log(self) -> list[dict[str, str]]:
        """The access log's lines as {request, route, upstream, ...} (deploy/nginx.conf's `explorer` format)."""
        return [match.groupdict() for line in (self.prefix / "logs" / "access.log").read_text().splitlines()
                if (match := _LOG.search(line))]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()   # SIGTERM to the master, by its pid: a fast shutdown
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
