"""The invitation's link: EXPLORER_PUBLIC_URL, the page's own address, or this machine's LAN address
for a teacher on localhost, and plain words when no phone can reach the server."""

import ipaddress

import pytest

from explorer.rooms.invite import CLASS_COMMAND, PUBLIC_ENV, invite, is_loopback, lan_address

CODE = "ABCDEFG"


@pytest.mark.parametrize("public", ["http://10.0.0.5:8501", "http://10.0.0.5:8501/", "https://class.example.org/ml/"])
def test_the_public_url_wins_wherever_the_teacher_browses(public):
    for page in ("http://localhost:8501/lessons", "http://192.168.1.4:8501/lessons", None):
        card = invite(CODE, page, public, lan="192.168.1.4")
        assert card.link == f"{public.rstrip('/')}/lessons?room={CODE}" and card.reachable
        assert PUBLIC_ENV in card.note


@pytest.mark.parametrize("bad", ["10.0.0.5:8501", "ftp://x", "http://", "http://x/?a=1", "javascript:alert(1)"])
def test_a_malformed_public_url_is_named_and_ignored(bad):
    card = invite(CODE, "http://localhost:8501/lessons", bad, lan="192.168.1.4", port=8501)
    assert card.link == f"http://192.168.1.4:8501/lessons?room={CODE}" and card.reachable
    assert card.note.startswith(f"{PUBLIC_ENV}=") and "is ignored" in card.note


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "127.0.1.1"])
def test_on_localhost_the_link_is_this_machines_lan_address_and_the_servers_port(host):
    card = invite(CODE, f"http://{host}:9000/course/lessons", lan="192.168.1.4", port=8601)
    assert card.link == f"http://192.168.1.4:8601/course/lessons?room={CODE}" and card.reachable
    assert "192.168.1.4" in card.note and "same network" in card.note
    v6 = invite(CODE, f"http://{host}:9000/lessons", lan="fd00::5", port=8601)
    assert v6.link == f"http://[fd00::5]:8601/lessons?room={CODE}"


def test_a_server_bound_to_one_address_is_invited_at_that_address():
    card = invite(CODE, "http://localhost:8501/lessons", lan="192.168.1.4", port=8501, server_address="10.1.2.3")
    assert card.link == f"http://10.1.2.3:8501/lessons?room={CODE}" and card.reachable


@pytest.mark.parametrize("lan, bound, why", [(None, "", "this machine has no network address"),
                                             ("192.168.1.4", "127.0.0.1", "listens on 127.0.0.1 only"),
                                             ("192.168.1.4", "localhost", "listens on localhost only")])
def test_when_no_phone_can_reach_the_server_it_says_so_and_how_to_start_one_for_a_class(lan, bound, why):
    card = invite(CODE, "http://localhost:8501/lessons", lan=lan, port=8501, server_address=bound)
    assert not card.reachable and card.link == f"http://localhost:8501/lessons?room={CODE}"
    assert why in card.note and "Phones cannot open this link" in card.note and CLASS_COMMAND in card.note
    assert "--server.address 0.0.0.0" in CLASS_COMMAND and PUBLIC_ENV in card.note


def test_a_page_reached_by_its_network_name_invites_at_that_name():
    card = invite(CODE, "https://ml.school.example/lessons", lan="192.168.1.4", port=8501)
    assert card.link == f"https://ml.school.example/lessons?room={CODE}" and card.reachable and not card.note
    assert invite(CODE, None).link == f"lessons?room={CODE}"   # no address known (AppTest): relative


def test_loopback_names_and_this_machines_lan_address():
    assert all(is_loopback(h) for h in ("localhost", "127.0.0.1", "127.5.5.5", "::1", "[::1]", "LOCALHOST"))
    assert not any(is_loopback(h) for h in ("10.0.0.5", "example.org", "", None, "0.0.0.0"))
    found = lan_address()   # this machine's: an address another device can use, or None
    assert found is None or not ipaddress.ip_address(found).is_loopback and found != "0.0.0.0"
