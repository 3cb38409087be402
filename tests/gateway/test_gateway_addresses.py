"""Where a call comes from, and the limits kept per address (issue 27): X-Forwarded-For is believed only
for as many proxies as FORWARDED_HOPS says (the entry the last trusted proxy added; anything a browser
put in front of it is ignored, and with no trusted proxy the header is ignored entirely), the
per-address call limit and the sign-in limit are kept per such address, and the token's network
signal is made from it. Real gateway processes; the limits refill so slowly (one call per 1,000 s,
one sign-in per 600 s) that no test depends on the machine's speed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest

from poker.gateway.v1 import gateway_pb2
from service_runtime.auth import verify_token
from service_runtime.testing import DEV_KEYS
from services.gateway.front_door import client_address
from tests.gateway.connect_http import Outcome, call
from tests.gateway.gateway_process import running_gateway
from tests.security.service_processes import ServiceProcess

OPTIONS = "/poker.gateway.v1.GatewayService/GetSignInOptions"
SIGN_IN = "/poker.gateway.v1.GatewayService/SignIn"
LIMITED = "resource_exhausted GATEWAY_RATE_LIMITED"
# Three calls per address, then one more only after 1,000 s.
TIGHT_ADDRESS = {
    "POKER_GATEWAY_CALL_BURST_PER_ADDRESS": "3",
    "POKER_GATEWAY_CALLS_PER_SECOND_PER_ADDRESS": "0.001",
}


def _ctx(peer: str | None, forwarded: str | None = None) -> Any:
    headers = {} if forwarded is None else {"x-forwarded-for": forwarded}
    return cast(Any, SimpleNamespace(client_address=peer, request_headers=headers))


@pytest.mark.parametrize(
    ("peer", "forwarded", "hops", "expected"),
    [
        # No trusted proxy: the header is the browser's to write, so it is ignored.
        ("10.0.0.5:4000", "203.0.113.7", 0, "10.0.0.5"),
        ("10.0.0.5:4000", None, 0, "10.0.0.5"),
        # One proxy (the ingress): the entry it appended, never what the browser put before it.
        ("10.0.0.5:4000", "203.0.113.7", 1, "203.0.113.7"),
        ("10.0.0.5:4000", "1.2.3.4, 203.0.113.7", 1, "203.0.113.7"),
        ("10.0.0.5:4000", " 1.2.3.4 ,, 203.0.113.7 ", 1, "203.0.113.7"),
        # Two proxies (a CDN, then the ingress): the entry the first one appended.
        ("10.0.0.5:4000", "1.2.3.4, 198.51.100.1, 10.1.1.1", 2, "198.51.100.1"),
        # Fewer entries than trusted proxies (a call that did not come through them): the peer.
        ("10.0.0.5:4000", "203.0.113.7", 2, "10.0.0.5"),
        ("10.0.0.5:4000", None, 1, "10.0.0.5"),
        ("10.0.0.5:4000", "", 1, "10.0.0.5"),
        ("10.0.0.5:4000", " , ", 1, "10.0.0.5"),
        # IPv6 peers, and no peer at all.
        ("[2001:db8::1]:4000", None, 0, "2001:db8::1"),
        (None, None, 0, "unknown"),
    ],
)
def test_the_client_address_believes_forwarded_for_only_for_the_trusted_proxies(
    peer: str | None, forwarded: str | None, hops: int, expected: str
) -> None:
    assert client_address(_ctx(peer, forwarded), hops) == expected


@pytest.fixture(scope="module")
def untrusting() -> Iterator[ServiceProcess]:
    """A gateway with no trusted proxy and a tight per-address limit."""
    with running_gateway({}, TIGHT_ADDRESS) as gateway:
        yield gateway


@pytest.fixture(scope="module")
def behind_ingress() -> Iterator[ServiceProcess]:
    """A gateway behind one trusted proxy, with tight per-address and sign-in limits."""
    env = {
        **TIGHT_ADDRESS,
        "POKER_GATEWAY_FORWARDED_HOPS": "1",
        # One sign-in per address, then one more only after 600 s.
        "POKER_GATEWAY_SIGN_INS_PER_MINUTE_PER_ADDRESS": "0.1",
    }
    with running_gateway({}, env) as gateway:
        yield gateway


def _options(gateway: ServiceProcess, forwarded: str | None = None) -> str:
    headers = {} if forwarded is None else {"x-forwarded-for": forwarded}
    return call(gateway.address, OPTIONS, b"", headers=headers).label


def _sign_in(gateway: ServiceProcess, name: str, forwarded: str | None = None) -> Outcome:
    headers = {} if forwarded is None else {"x-forwarded-for": forwarded}
    body = gateway_pb2.SignInRequest(development_name=name, device_id="device-1").SerializeToString()
    return call(gateway.address, SIGN_IN, body, headers=headers)


def _network(outcome: Outcome) -> str:
    assert outcome.code == "ok", outcome.label
    token = gateway_pb2.SignInResponse.FromString(outcome.body).session.token
    return verify_token(DEV_KEYS, token, now=int(time.time())).network


def test_without_a_trusted_proxy_forwarded_for_neither_escapes_the_address_limit_nor_sets_the_network(
    untrusting: ServiceProcess,
) -> None:
    first = _network(_sign_in(untrusting, "ann", "203.0.113.7"))
    second = _network(_sign_in(untrusting, "bob", "198.51.100.9"))
    assert first == second  # both are the peer's network, whatever the header said
    assert _options(untrusting) == "ok"  # the third call of this address
    for forwarded in (None, "192.0.2.50", "192.0.2.51, 192.0.2.52"):
        assert _options(untrusting, forwarded) == LIMITED, forwarded


def test_behind_a_trusted_proxy_each_client_address_has_its_own_limit_and_spoofing_does_not_escape_it(
    behind_ingress: ServiceProcess,
) -> None:
    a = "203.0.113.7"
    assert [_options(behind_ingress, a) for _ in range(4)] == ["ok", "ok", "ok", LIMITED]
    # Another client behind the same proxy is not limited by the first one's calls.
    assert _options(behind_ingress, "203.0.113.8") == "ok"
    # A browser writing a fresh address in front of its own gains nothing: the proxy's entry counts.
    assert _options(behind_ingress, f"192.0.2.99, {a}") == LIMITED
    # And naming the limited address in front of its own does not hurt an innocent client.
    assert _options(behind_ingress, f"{a}, 203.0.113.9") == "ok"
    # The connection itself (no header: not through the proxy) is one more address of its own.
    assert _options(behind_ingress) == "ok"


def test_sign_ins_are_limited_per_client_address_and_the_network_signal_is_the_clients(
    behind_ingress: ServiceProcess,
) -> None:
    c, d = "198.51.100.1", "192.0.2.1"
    from_c = _network(_sign_in(behind_ingress, "carol", c))
    again = _sign_in(behind_ingress, "carol", c)
    assert again.label == LIMITED
    assert again.body == b""  # no token
    # The limit is on signing in only: the same address may still make other calls.
    assert _options(behind_ingress, c) == "ok"
    # Another address signs in, and its token carries its own network, not the proxy's or c's.
    from_d = _network(_sign_in(behind_ingress, "dave", d))
    assert from_d != from_c
    # Two clients of one /24 are one network.
    assert _network(_sign_in(behind_ingress, "erin", "198.51.100.200")) == from_c
