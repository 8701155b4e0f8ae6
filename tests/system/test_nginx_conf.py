"""deploy/nginx.conf as shipped and as the browser tests render it: Debian's nginx accepts it, and it balances
by the route cookie (never the client's address: a class behind one NAT shares one IP) with a failover."""

import inspect
import re

import uvicorn
from streamlit.web.server.starlette.starlette_server import _get_uvicorn_config_kwargs

from tests.browser.cluster import NGINX_CONF, Nginx, render_nginx


def test_the_shipped_config_is_sticky_by_cookie_and_fails_over():
    text = NGINX_CONF.read_text()
    upstream = re.search(r"upstream explorer \{(.*?)\n    \}", text, re.S).group(1)
    assert "hash $explorer_route consistent;" in upstream
    assert "ip_hash" not in text and "$remote_addr consistent" not in text
    assert all("max_fails=" in line for line in upstream.splitlines() if line.strip().startswith("server "))
    assert "proxy_next_upstream error timeout" in text
    assert re.search(r"location ~ /_stcore/stream\$ \{[^}]*proxy_set_header Upgrade \$http_upgrade;", text)


def test_nginx_drops_an_idle_connection_before_the_app_server_does():
    """Else a request sent as the app server closes the connection counts as that server failing (max_fails=1):
    its routes move to another server for fail_timeout, and their WebSockets lose their sessions."""
    upstream = re.search(r"upstream explorer \{(.*?)\n    \}", NGINX_CONF.read_text(), re.S).group(1)
    nginx_s = int(re.search(r"^\s*keepalive_timeout (\d+)s;", upstream, re.M).group(1))
    kwargs = _get_uvicorn_config_kwargs()
    server_s = kwargs.get("timeout_keep_alive",
                          inspect.signature(uvicorn.Config).parameters["timeout_keep_alive"].default)
    assert 0 < nginx_s < server_s


def test_nginx_accepts_the_config_rendered_for_loopback_ports(tmp_path):
    rendered = render_nginx(18080, [18501, 18502])
    assert "listen 127.0.0.1:18080;" in rendered and rendered.count("server 127.0.0.1:185") == 2
    assert "8503" not in rendered
    check = Nginx(tmp_path, [18501, 18502]).syntax_check()
    assert check.returncode == 0, check.stderr
