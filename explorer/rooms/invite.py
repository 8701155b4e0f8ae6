"""A room's invitation: the link students open (and its QR code), an address their phones can reach.

`invite` is pure: given the page's own URL, `EXPLORER_PUBLIC_URL`, this machine's LAN address and the
server's port and bind address, it says which link to hand out, or plainly why phones cannot reach it.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from explorer.rooms.input import normalise_code

PUBLIC_ENV = "EXPLORER_PUBLIC_URL"
CLASS_COMMAND = "streamlit run app.py --server.address 0.0.0.0"
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
_ANY = {"", "0.0.0.0", "::"}


@dataclass(frozen=True)
class Invite:
    link: str          # what students open: absolute when the page's address is known
    reachable: bool    # a phone on the class's network can open it (as far as this server can tell)
    note: str = ""     # where the address came from, or (not reachable) why and what to do


def student_path(code: str) -> str:
    """The student's link, relative to the app (the same for everyone: no URL carries authority)."""
    return f"lessons?room={normalise_code(code)}"


def qr_svg(text: str) -> str:
    """An inline SVG of the QR code of `text` (e.g. the student link), drawn with segno, offline."""
    import segno  # only the teacher's screen needs it
    return segno.make(text, error="m").svg_inline(scale=4, border=2)


def is_loopback(host: str | None) -> bool:
    """'localhost', '127.0.0.1', '::1' and the like: an address only this machine reaches."""
    host = (host or "").strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def lan_address() -> str | None:
    """This machine's address on its network (the one its default route leaves from); None without one."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))   # TEST-NET-1: a UDP connect sends nothing, it only picks a route
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address in _ANY or is_loopback(address) else address


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def _public(url: str) -> tuple[str | None, str]:
    """EXPLORER_PUBLIC_URL as a base without a trailing slash, or (None, why it cannot be one)."""
    parts = urlsplit(url.strip())
    if parts.scheme in ("http", "https") and parts.hostname and not (parts.query or parts.fragment):
        return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}", ""
    return None, (f"{PUBLIC_ENV}={url.strip()[:80]!r} is not an address like http://10.0.0.5:8501 "
                  "(http or https, a host, an optional port and path): it is ignored.")


def invite(code: str, page_url: str | None, public_url: str | None = None, lan: str | None = None,
           port: int = 8501, server_address: str = "") -> Invite:
    """The link students open for room `code`.

    `page_url`: the teacher's page as the browser sees it (`http://localhost:8501/lessons`); `public_url`:
    EXPLORER_PUBLIC_URL, which wins when set; `lan`: this machine's LAN address (`lan_address()`); `port`
    and `server_address`: the server's `server.port` and `server.address` (empty: every interface)."""
    path = student_path(code)
    if public_url:
        base, why = _public(public_url)
        if base is not None:
            return Invite(f"{base}/{path}", True, f"The link uses {PUBLIC_ENV}.")
        fallback = invite(code, page_url, None, lan, port, server_address)
        return Invite(fallback.link, fallback.reachable, f"{why} {fallback.note}".strip())
    if not page_url:
        return Invite(path, True)
    parts = urlsplit(page_url)
    base_path = parts.path.rsplit("/", 1)[0]   # the app's base path, without the page
    if not is_loopback(parts.hostname):
        return Invite(f"{parts.scheme}://{parts.netloc}{base_path}/{path}", True)
    here = f"{parts.scheme}://{parts.netloc}{base_path}/{path}"
    how = f"For a class, start it with `{CLASS_COMMAND}` (or set {PUBLIC_ENV}), then open a room again."
    if is_loopback(server_address):
        return Invite(here, False, f"Phones cannot open this link: the server listens on {server_address} only. {how}")
    address = server_address if server_address not in _ANY else lan
    if address is None:
        return Invite(here, False, f"Phones cannot open this link: this machine has no network address. {how}")
    link = f"{parts.scheme}://{_host(address)}:{port}{base_path}/{path}"
    return Invite(link, True, f"The link uses this machine's network address ({address}): phones must be on "
                              "the same network.")
