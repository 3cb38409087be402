"""The gateway is measured like every service (issue 40): before, it served players with nothing
counted, no metrics port in its `listening` line, and no series an alert could read.

A real gateway process in front of the five services, its metrics endpoint on a port of its own
choosing (the `listening` line names it), scraped as Prometheus scrapes it. Each test reads the
figures before and after what it does and checks the deltas exactly: the gRPC server families of
every service (`grpc_server_*`, by the method as the gateway serves it and the gRPC code its Connect
answer maps to), and the gateway's own sign-ins, rate limits and HTTP edge refusals. Every test calls
from loopback addresses of its own (another address is another client), and the rate limits refill
so slowly (one call per 1,000 s) that no count depends on the machine's speed.
"""

from __future__ import annotations

import contextlib
import json
import selectors
import socket
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from poker.gateway.v1 import gateway_pb2
from poker.table.v1 import table_pb2
from service_runtime.metrics import sample_value
from tests.gateway.conftest import BOT_TOKEN
from tests.gateway.connect_http import Outcome, RawStream, call
from tests.gateway.gateway_process import running_gateway
from tests.gateway.raw_player import GATEWAY, LOBBY, TABLE, seat
from tests.gateway.telegram_signing import init_data
from tests.security.service_processes import ServiceProcess, running_services

GATEWAY_SERVICE = GATEWAY.lstrip("/")
LOBBY_SERVICE = LOBBY.lstrip("/")
TABLE_SERVICE = TABLE.lstrip("/")
LIMITED = "resource_exhausted GATEWAY_RATE_LIMITED"
ENVIRONMENT = {
    "POKER_GATEWAY_METRICS_PORT": "0",
    "POKER_GATEWAY_TELEGRAM_BOT_TOKEN": BOT_TOKEN,
    # Three sign-ins per address, ten calls per player, thirty per address; then one more only
    # after a long wait.
    "POKER_GATEWAY_SIGN_INS_PER_MINUTE_PER_ADDRESS": "3",
    "POKER_GATEWAY_CALL_BURST_PER_USER": "10",
    "POKER_GATEWAY_CALLS_PER_SECOND_PER_USER": "0.001",
    "POKER_GATEWAY_CALL_BURST_PER_ADDRESS": "30",
    "POKER_GATEWAY_CALLS_PER_SECOND_PER_ADDRESS": "0.001",
    "POKER_GATEWAY_CONNECTIONS_PER_ADDRESS": "4",
    "POKER_GATEWAY_HEAD_TIMEOUT_SECONDS": "4",
    "POKER_GATEWAY_BODY_TIMEOUT_SECONDS": "4",
}


class _Scraped:
    """A collector of what one scrape read, so prometheus-client's registry can be asked about it."""

    def __init__(self, families: list[Any]) -> None:
        self._families = families

    def collect(self) -> Iterable[Any]:
        return self._families


@dataclass
class Figures:
    """One scrape of the gateway's /metrics, read with prometheus-client's own parser."""

    registry: CollectorRegistry

    def value(self, name: str, **labels: str) -> float:
        return sample_value(name, labels, registry=self.registry)

    def has(self, name: str, **labels: str) -> bool:
        return self.registry.get_sample_value(name, labels) is not None

    def since(self, before: Figures) -> Callable[..., float]:
        """How far a sample moved from `before` to this scrape: `moved(name, **labels)`."""
        return lambda name, **labels: self.value(name, **labels) - before.value(name, **labels)

    def total(self, name: str, **labels: str) -> float:
        """The sum of every sample of `name` whose labels include `labels` (a gauge by service)."""
        return sum(
            sample.value
            for family in self.registry.collect()
            for sample in family.samples
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
        )


@dataclass
class Front:
    gateway: ServiceProcess
    metrics_port: Any  # what the `listening` line says

    @property
    def address(self) -> str:
        return self.gateway.address

    def scrape(self) -> Figures:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        body = urllib.request.urlopen(url, timeout=10).read().decode()
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Scraped(list(text_string_to_metric_families(body))))
        return Figures(registry)

    def until(self, check: Callable[[Figures], bool], within: float = 30.0) -> Figures:
        """The first scrape `check` accepts (what happens after a client goes is counted a moment
        later, by the gateway's own loop)."""
        deadline = time.monotonic() + within
        while True:
            figures = self.scrape()
            if check(figures) or time.monotonic() > deadline:
                return figures
            time.sleep(0.05)


def _listening(gateway: ServiceProcess) -> dict[str, Any]:
    for line in gateway.lines:
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and record.get("event") == "listening":
                return record
    raise AssertionError("no listening line:\n" + "".join(gateway.lines[-20:]))


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Front]:
    with (
        running_services(tmp_path_factory.mktemp("gateway-metrics")) as services,
        running_gateway(services, ENVIRONMENT) as gateway,
    ):
        yield Front(gateway, _listening(gateway).get("metrics_port"))
        assert "Traceback" not in "".join(gateway.lines)


def _served(method: str, code: str, service: str = GATEWAY_SERVICE, kind: str = "unary") -> dict[str, str]:
    return {"grpc_type": kind, "grpc_service": service, "grpc_method": method, "grpc_code": code}


def _method(method: str, service: str = GATEWAY_SERVICE, kind: str = "unary") -> dict[str, str]:
    return {"grpc_type": kind, "grpc_service": service, "grpc_method": method}


def _sign_in(front: Front, name: str, source: str) -> str:
    request = gateway_pb2.SignInRequest(development_name=name, device_id="metrics-device")
    outcome = call(front.address, f"{GATEWAY}/SignIn", request.SerializeToString(), source=source)
    assert outcome.code == "ok", outcome
    return str(gateway_pb2.SignInResponse.FromString(outcome.body).session.token)


def _telegram(front: Front, data: str, source: str) -> Outcome:
    request = gateway_pb2.SignInRequest(telegram_init_data=data, device_id="metrics-device")
    return call(front.address, f"{GATEWAY}/SignIn", request.SerializeToString(), source=source)


def _renew(front: Front, token: str, source: str) -> Outcome:
    request = gateway_pb2.RenewTokenRequest(device_id="metrics-device").SerializeToString()
    return call(front.address, f"{GATEWAY}/RenewToken", request, token=token, source=source)


def test_the_listening_line_names_the_metrics_port_and_every_series_starts_at_zero(front: Front) -> None:
    assert isinstance(front.metrics_port, int)
    assert front.metrics_port > 0
    figures = front.scrape()
    assert figures.value("poker_service_info", service="gateway") == 1
    # Every method the gateway serves has its series before its first call.
    for method, service, kind in (
        ("SignIn", GATEWAY_SERVICE, "unary"),
        ("VerifyHand", "poker.fairness.v1.FairnessService", "unary"),
        ("SpectateTable", TABLE_SERVICE, "server_stream"),
    ):
        assert figures.has("grpc_server_started_total", **_method(method, service, kind)), method
    # The gateway's own figures exist at 0 for every label value, so the first event is an increase.
    for kind, outcome in (
        ("sign_in", "ok"),
        ("sign_in", "INIT_DATA_INVALID"),
        ("sign_in", "INIT_DATA_EXPIRED"),
        ("sign_in", "INIT_DATA_REPLAYED"),
        ("sign_in", "GATEWAY_RATE_LIMITED"),
        ("renewal", "ok"),
        ("renewal", "SESSION_REVOKED"),
        ("renewal", "SESSION_EXPIRED"),
        ("renewal", "TOKEN_EXPIRED"),
    ):
        assert figures.has("poker_gateway_sign_ins_total", kind=kind, outcome=outcome), (kind, outcome)
    for limit in ("address", "player", "sign_in"):
        assert figures.has("poker_gateway_rate_limited_total", limit=limit), limit
    for reason in (
        "HEADER_INVALID",
        "PROTOCOL_UNSUPPORTED",
        "METHOD_NOT_FOUND",
        "HEAD_TIMEOUT",
        "BODY_TIMEOUT",
        "CONNECTION_LIMIT",
    ):
        assert figures.has("poker_gateway_edge_refusals_total", reason=reason), reason
    assert figures.has("poker_gateway_open_connections")


def test_a_successful_sign_in_and_a_forwarded_call_count_ok_by_their_method(front: Front) -> None:
    before = front.scrape()
    token = _sign_in(front, "metrics-ann", source="127.0.0.11")
    rooms = call(front.address, f"{LOBBY}/ListRooms", b"", token=token, source="127.0.0.11")
    assert rooms.code == "ok", rooms
    after = front.scrape()
    moved = after.since(before)
    assert moved("grpc_server_started_total", **_method("SignIn")) == 1
    assert moved("grpc_server_handled_total", **_served("SignIn", "OK")) == 1
    assert moved("grpc_server_handling_seconds_count", **_method("SignIn")) == 1
    assert moved("grpc_server_handled_total", **_served("ListRooms", "OK", LOBBY_SERVICE)) == 1
    assert moved("poker_gateway_sign_ins_total", kind="sign_in", outcome="ok") == 1
    # Nothing is left in flight once the answers are in.
    for service in (GATEWAY_SERVICE, LOBBY_SERVICE):
        assert after.total("grpc_server_in_flight", grpc_type="unary", grpc_service=service) == 0


def test_refused_sign_ins_and_renewals_count_their_reason(front: Front) -> None:
    before = front.scrape()
    data = init_data(BOT_TOKEN, 7_100_001)
    assert _telegram(front, data, source="127.0.0.12").code == "ok"
    assert _telegram(front, data, source="127.0.0.12").label == "unauthenticated INIT_DATA_REPLAYED"
    forged = data.replace("Ann", "Bob")
    assert _telegram(front, forged, source="127.0.0.12").label == "unauthenticated INIT_DATA_INVALID"
    token = _sign_in(front, "metrics-ben", source="127.0.0.13")
    assert _renew(front, token, source="127.0.0.13").code == "ok"
    signed_out = call(
        front.address,
        f"{GATEWAY}/SignOut",
        gateway_pb2.SignOutRequest().SerializeToString(),
        token=token,
        source="127.0.0.13",
    )
    assert signed_out.code == "ok", signed_out
    assert _renew(front, token, source="127.0.0.13").label == "unauthenticated SESSION_REVOKED"
    after = front.scrape()
    moved = after.since(before)
    assert moved("poker_gateway_sign_ins_total", kind="sign_in", outcome="ok") == 2
    assert moved("poker_gateway_sign_ins_total", kind="sign_in", outcome="INIT_DATA_REPLAYED") == 1
    assert moved("poker_gateway_sign_ins_total", kind="sign_in", outcome="INIT_DATA_INVALID") == 1
    assert moved("poker_gateway_sign_ins_total", kind="renewal", outcome="ok") == 1
    assert moved("poker_gateway_sign_ins_total", kind="renewal", outcome="SESSION_REVOKED") == 1
    assert moved("grpc_server_handled_total", **_served("SignIn", "OK")) == 2
    assert moved("grpc_server_handled_total", **_served("SignIn", "UNAUTHENTICATED")) == 2
    assert moved("grpc_server_handled_total", **_served("RenewToken", "OK")) == 1
    # Refused by the front door before any handler ran: still a call of its method, with its code.
    assert moved("grpc_server_handled_total", **_served("RenewToken", "UNAUTHENTICATED")) == 1
    assert moved("grpc_server_started_total", **_method("RenewToken")) == 2
    assert moved("grpc_server_handled_total", **_served("SignOut", "OK")) == 1


def _until_limited(attempt: Callable[[], Outcome], most: int) -> int:
    """Calls `attempt` until it is rate limited: how many calls it took."""
    for made in range(1, most + 1):
        outcome = attempt()
        if outcome.label == LIMITED:
            return made
        assert outcome.code == "ok", outcome
    raise AssertionError(f"not limited within {most} calls")


def test_each_rate_limit_counts_the_calls_it_refused(front: Front) -> None:
    before = front.scrape()
    # Sign-ins: three per address (the first is the player's).
    token = _sign_in(front, "metrics-cat", source="127.0.0.14")
    assert (
        _until_limited(
            lambda: call(
                front.address,
                f"{GATEWAY}/SignIn",
                gateway_pb2.SignInRequest(development_name="metrics-cat", device_id="d").SerializeToString(),
                source="127.0.0.14",
            ),
            most=5,
        )
        == 3
    )
    # A player's calls: ten, whatever the address.
    assert (
        _until_limited(
            lambda: call(front.address, f"{LOBBY}/ListRooms", b"", token=token, source="127.0.0.15"), most=12
        )
        == 11
    )
    # An address's calls: thirty, whoever makes them.
    assert (
        _until_limited(
            lambda: call(front.address, f"{GATEWAY}/GetSignInOptions", b"", source="127.0.0.16"), most=32
        )
        == 31
    )
    after = front.scrape()
    moved = after.since(before)
    assert moved("poker_gateway_rate_limited_total", limit="sign_in") == 1
    assert moved("poker_gateway_rate_limited_total", limit="player") == 1
    assert moved("poker_gateway_rate_limited_total", limit="address") == 1
    assert moved("poker_gateway_sign_ins_total", kind="sign_in", outcome="GATEWAY_RATE_LIMITED") == 1
    assert moved("grpc_server_handled_total", **_served("SignIn", "RESOURCE_EXHAUSTED")) == 1
    assert (
        moved("grpc_server_handled_total", **_served("ListRooms", "RESOURCE_EXHAUSTED", LOBBY_SERVICE)) == 1
    )
    assert moved("grpc_server_handled_total", **_served("ListRooms", "OK", LOBBY_SERVICE)) == 10
    assert moved("grpc_server_handled_total", **_served("GetSignInOptions", "RESOURCE_EXHAUSTED")) == 1


def test_refusals_at_the_http_edge_are_counted_by_reason_and_never_as_a_call(front: Front) -> None:
    before = front.scrape()
    rooms = f"{LOBBY}/ListRooms"
    assert call(front.address, rooms, b"", method="GET", source="127.0.0.17").http_status == 405
    assert (
        call(front.address, rooms, b"", headers={"content-type": "text/plain"}, source="127.0.0.17").label
        == "unimplemented PROTOCOL_UNSUPPORTED"
    )
    assert (
        call(front.address, rooms, b"", headers={"user-agent": "Mozilla\xe9\xff"}, source="127.0.0.17").label
        == "invalid_argument HEADER_INVALID"
    )
    assert call(front.address, f"{LOBBY}/NoSuchMethod", b"", source="127.0.0.17").http_status == 404
    after = front.scrape()
    moved = after.since(before)
    assert moved("poker_gateway_edge_refusals_total", reason="PROTOCOL_UNSUPPORTED") == 2
    assert moved("poker_gateway_edge_refusals_total", reason="HEADER_INVALID") == 1
    assert moved("poker_gateway_edge_refusals_total", reason="METHOD_NOT_FOUND") == 1
    # Refused before the Connect protocol read them: no call of any method was started.
    assert after.total("grpc_server_started_total") == before.total("grpc_server_started_total")


def _connect(front: Front, source: str, data: bytes = b"") -> socket.socket:
    host, _, port = front.address.rpartition(":")
    sock = socket.create_connection((host, int(port)), timeout=10, source_address=(source, 0))
    if data:
        with contextlib.suppress(OSError):
            sock.sendall(data)
    return sock


def _closed_by_the_gateway(sock: socket.socket, within: float = 30.0) -> bool:
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    try:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if selector.select(timeout=max(0.0, deadline - time.monotonic())):
                try:
                    if not sock.recv(65536):
                        return True
                except ConnectionResetError:
                    return True
        return False
    finally:
        selector.close()
        sock.close()


def test_slow_and_surplus_connections_are_counted_as_edge_refusals(front: Front) -> None:
    options = f"{GATEWAY}/GetSignInOptions"
    base = front.scrape()
    open_before = base.value("poker_gateway_open_connections")
    # One connection over the address's cap (four) is closed at once.
    held = [_connect(front, "127.0.0.18") for _ in range(4)]
    try:
        opened = front.until(lambda f: f.value("poker_gateway_open_connections") == open_before + 4)
        assert opened.value("poker_gateway_open_connections") == open_before + 4
        assert _closed_by_the_gateway(_connect(front, "127.0.0.18"))
        # Counted by the gateway's loop a moment after the close (a single scrape raced it under load).
        capped = front.until(
            lambda f: (
                f.value("poker_gateway_edge_refusals_total", reason="CONNECTION_LIMIT")
                == base.value("poker_gateway_edge_refusals_total", reason="CONNECTION_LIMIT") + 1
            )
        )
    finally:
        for sock in held:
            sock.close()
    assert capped.value("poker_gateway_edge_refusals_total", reason="CONNECTION_LIMIT") == (
        base.value("poker_gateway_edge_refusals_total", reason="CONNECTION_LIMIT") + 1
    )
    settled = front.until(lambda f: f.value("poker_gateway_open_connections") == open_before)
    assert settled.value("poker_gateway_open_connections") == open_before

    # A head that never ends, then a body that never ends: each closed at its deadline.
    before = front.scrape()
    slow_head = (
        f"POST {options} HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/proto\r\n"
        "Connect-Protocol-Version: 1\r\n"
    )
    assert _closed_by_the_gateway(_connect(front, "127.0.0.19", slow_head.encode()))
    slow_body = slow_head + "Content-Length: 64\r\n\r\n\x0a"
    assert _closed_by_the_gateway(_connect(front, "127.0.0.19", slow_body.encode()))
    cancelled = _served("GetSignInOptions", "CANCELLED")
    # The slow body's call had begun (its head named the method): it ends CANCELLED, its client gone.
    after = front.until(
        lambda f: (
            f.value("grpc_server_handled_total", **cancelled)
            > before.value("grpc_server_handled_total", **cancelled)
        )
    )
    moved = after.since(before)
    assert moved("poker_gateway_edge_refusals_total", reason="HEAD_TIMEOUT") == 1
    assert moved("poker_gateway_edge_refusals_total", reason="BODY_TIMEOUT") == 1
    assert moved("grpc_server_handled_total", **cancelled) == 1
    assert moved("grpc_server_started_total", **_method("GetSignInOptions")) == 1


def _watch(front: Front, token: str, table_id: str) -> RawStream:
    request = table_pb2.WatchTableRequest(table_id=table_id).SerializeToString()
    stream = RawStream(front.address, f"{TABLE}/WatchTable", request, token=token)
    assert stream.next_message() is not None, stream.end
    return stream


def test_a_stream_is_in_flight_while_open_counts_its_messages_and_ends_with_its_code(front: Front) -> None:
    watch = _method("WatchTable", TABLE_SERVICE, "server_stream")
    streams = {"grpc_type": "server_stream", "grpc_service": TABLE_SERVICE}
    token = _sign_in(front, "metrics-dan", source="127.0.0.1")
    table_id = seat(front.address, token, "metrics-dan")
    before = front.scrape()
    kept = _watch(front, token, table_id)
    left = _watch(front, token, table_id)
    try:
        both = front.scrape()
        assert (
            both.total("grpc_server_in_flight", **streams)
            == before.total("grpc_server_in_flight", **streams) + 2
        )
        assert (
            both.value("grpc_server_started_total", **watch)
            == before.value("grpc_server_started_total", **watch) + 2
        )
        # A stream its client leaves ends CANCELLED.
        left.close()
        cancelled = _served("WatchTable", "CANCELLED", TABLE_SERVICE, "server_stream")
        front.until(
            lambda f: (
                f.value("grpc_server_handled_total", **cancelled)
                > before.value("grpc_server_handled_total", **cancelled)
            )
        )
        # A stream its session's sign-out ends: UNAUTHENTICATED (SESSION_REVOKED), its end's code.
        signed_out = call(
            front.address, f"{GATEWAY}/SignOut", gateway_pb2.SignOutRequest().SerializeToString(), token=token
        )
        assert signed_out.code == "ok", signed_out
        assert kept.until_end().label == "unauthenticated SESSION_REVOKED"
    finally:
        kept.close()
        left.close()
    revoked = _served("WatchTable", "UNAUTHENTICATED", TABLE_SERVICE, "server_stream")
    after = front.until(
        lambda f: (
            f.total("grpc_server_in_flight", **streams) == before.total("grpc_server_in_flight", **streams)
        )
    )
    moved = after.since(before)
    assert after.total("grpc_server_in_flight", **streams) == before.total("grpc_server_in_flight", **streams)
    assert moved("grpc_server_handled_total", **cancelled) == 1
    assert moved("grpc_server_handled_total", **revoked) == 1
    assert moved("grpc_server_handling_seconds_count", **watch) == 2
    # Every message the two streams were sent: the one the left stream read, all the kept one read.
    assert moved("grpc_server_msg_sent_total", **watch) == 1 + kept.messages
