"""The gateway's HTTP edge attacked over raw HTTP/1.1, as an outsider would (issue 41): every refusal
in the Connect protocol's form with a catalogue reason, never a 500, INTERNAL or UNKNOWN, never a
traceback in the log; no answer that carries a token or a player's data may be cached; and no
stream outlives the token it was opened with.

Each case failed on the code before: a header that is not UTF-8 answered 500 `unknown` with Python's
decode error; `application/grpc` answered 200 with gRPC status UNKNOWN; a stream envelope flagged
compressed without an encoding ended INTERNAL; the Connect library's own header refusals carried no
reason; no answer said `Cache-Control: no-store`; a WatchTable opened with a short-lived token kept
streaming the seat's hole cards after the token expired."""

from __future__ import annotations

import time

import pytest

from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from poker.gateway.v1 import gateway_pb2
from poker.lobby.v1 import lobby_pb2
from poker.table.v1 import table_pb2
from service_runtime.auth import Role, mint_token
from service_runtime.testing import DEV_KEYS
from tests.gateway.conftest import Cluster
from tests.gateway.connect_http import Outcome, call
from tests.gateway.raw_player import seat, sign_in

GATEWAY = "/poker.gateway.v1.GatewayService"
LOBBY = "/poker.lobby.v1.LobbyService"
TABLE = "/poker.table.v1.TableService"
CASHIER = "/poker.cashier.v1.CashierService"
HISTORY = "/poker.history.v1.HistoryService"


def _sign_in(cluster: Cluster, name: str) -> str:
    request = gateway_pb2.SignInRequest(development_name=name, device_id="edge-device")
    outcome = call(cluster.address, f"{GATEWAY}/SignIn", request.SerializeToString())
    assert outcome.code == "ok", outcome
    return str(gateway_pb2.SignInResponse.FromString(outcome.body).session.token)


def _no_traceback(cluster: Cluster) -> None:
    log = "".join(cluster.gateway.lines)
    assert "Traceback" not in log
    assert '"code": "INTERNAL"' not in log
    assert '"code": "UNKNOWN"' not in log


def test_a_header_that_is_not_utf8_is_refused_with_a_reason_not_a_500(cluster: Cluster) -> None:
    token = _sign_in(cluster, "edge-bytes")
    rooms = lobby_pb2.ListRoomsRequest().SerializeToString()
    for headers in (
        {"user-agent": "Mozilla\xe9\xff"},
        {"x-anything": "\xff\xfe"},
        {"authorization": f"Bearer {token}\xe9"},
    ):
        for path, streaming in ((f"{LOBBY}/ListRooms", False), (f"{TABLE}/WatchTable", True)):
            outcome = call(cluster.address, path, rooms, token="", streaming=streaming, headers=headers)
            assert outcome.label == "invalid_argument HEADER_INVALID", (headers, path, outcome)
            assert outcome.http_status == (200 if streaming else 400)
    # Unauthenticated too: the sign-in itself.
    outcome = call(cluster.address, f"{GATEWAY}/SignIn", b"", headers={"user-agent": "\xe9\xff"})
    assert outcome.label == "invalid_argument HEADER_INVALID"
    _no_traceback(cluster)


@pytest.mark.parametrize(
    "content_type",
    [
        "application/grpc",
        "application/grpc+proto",
        "application/grpc+json",
        "application/grpc-web",
        "application/grpc-web+proto",
        "text/plain",
        "",
    ],
)
def test_grpc_grpc_web_and_other_content_types_are_refused_as_unsupported(
    cluster: Cluster, content_type: str
) -> None:
    token = _sign_in(cluster, "edge-types")
    for path, streaming in ((f"{LOBBY}/ListRooms", False), (f"{TABLE}/WatchTable", True)):
        outcome = call(
            cluster.address,
            path,
            b"",
            token=token,
            streaming=streaming,
            headers={"content-type": content_type},
        )
        assert outcome.http_status == 415, (path, outcome)
        assert outcome.label == "unimplemented PROTOCOL_UNSUPPORTED"
        assert "grpc-status" not in outcome.headers
    # A unary content type on a stream, a stream's on a unary method.
    assert (
        call(
            cluster.address,
            f"{LOBBY}/ListRooms",
            b"",
            token=token,
            headers={"content-type": "application/connect+proto"},
        ).http_status
        == 415
    )
    _no_traceback(cluster)


def test_only_post_reaches_a_connect_method(cluster: Cluster) -> None:
    for method in ("GET", "PUT", "DELETE"):
        outcome = call(cluster.address, f"{LOBBY}/ListRooms", b"", method=method)
        assert (outcome.http_status, outcome.label) == (405, "unimplemented PROTOCOL_UNSUPPORTED")
        assert outcome.headers.get("allow") == "POST"


@pytest.mark.parametrize(
    "headers",
    [
        {"connect-timeout-ms": "abc"},
        {"connect-timeout-ms": "-1"},
        {"connect-timeout-ms": "99999999999999"},
        {"connect-timeout-ms": ""},
        {"connect-timeout-ms": "1_000"},
        {"connect-protocol-version": "2"},
        {"connect-protocol-version": ""},
    ],
)
def test_connect_headers_the_protocol_does_not_allow_are_refused_with_a_reason(
    cluster: Cluster, headers: dict[str, str]
) -> None:
    token = _sign_in(cluster, "edge-headers")
    name = next(iter(headers))
    for path, streaming in ((f"{LOBBY}/ListRooms", False), (f"{TABLE}/WatchTable", True)):
        outcome = call(cluster.address, path, b"", token=token, streaming=streaming, headers=headers)
        assert outcome.label == "invalid_argument HEADER_INVALID", (headers, path, outcome)
    assert (
        call(
            cluster.address, f"{LOBBY}/ListRooms", b"", token=token, headers={"connect-timeout-ms": "5000"}
        ).code
        == "ok"
    ), name


def test_a_stream_envelope_flagged_compressed_without_an_encoding_is_malformed_not_internal(
    cluster: Cluster,
) -> None:
    token = _sign_in(cluster, "edge-envelope")
    request = table_pb2.WatchTableRequest(table_id="nlhe-gram-classic.1").SerializeToString()
    outcome = call(cluster.address, f"{TABLE}/WatchTable", request, token=token, streaming=True, flags=0x01)
    assert outcome.label == "invalid_argument REQUEST_MALFORMED"
    _no_traceback(cluster)


def _check_no_store(outcome: Outcome) -> None:
    assert outcome.headers.get("cache-control") == "no-store", outcome


def test_answers_that_carry_a_token_or_a_players_data_are_never_stored(cluster: Cluster) -> None:
    request = gateway_pb2.SignInRequest(development_name="edge-cache", device_id="edge-device")
    signed = call(cluster.address, f"{GATEWAY}/SignIn", request.SerializeToString())
    _check_no_store(signed)
    token = gateway_pb2.SignInResponse.FromString(signed.body).session.token
    renew = gateway_pb2.RenewTokenRequest(device_id="edge-device").SerializeToString()
    _check_no_store(call(cluster.address, f"{GATEWAY}/RenewToken", renew, token=token))
    balances = call(
        cluster.address,
        f"{CASHIER}/GetBalances",
        cashier_pb2.GetBalancesRequest().SerializeToString(),
        token=token,
    )
    assert balances.code == "ok"
    _check_no_store(balances)
    statement = cashier_pb2.GetStatementRequest(pool=common_pb2.CHIP_POOL_GRAM).SerializeToString()
    _check_no_store(call(cluster.address, f"{CASHIER}/GetStatement", statement, token=token))
    # Refusals too, and streams.
    _check_no_store(call(cluster.address, f"{CASHIER}/GetBalances", b""))
    _check_no_store(call(cluster.address, f"{LOBBY}/ListRooms", b"", headers={"content-type": "text/plain"}))
    watch = table_pb2.WatchTableRequest(table_id="nlhe-gram-classic.1").SerializeToString()
    _check_no_store(call(cluster.address, f"{TABLE}/WatchTable", watch, token=token, streaming=True))
    # Without TLS at the gateway there is no HSTS (a plain-HTTP answer cannot set it).
    assert "strict-transport-security" not in signed.headers


@pytest.mark.parametrize("method", ["WatchTable", "SpectateTable"])
def test_a_table_stream_ends_unauthenticated_when_its_token_expires(cluster: Cluster, method: str) -> None:
    subject = f"edge-expiry-{method.lower()}"
    table_id = seat(cluster.address, sign_in(cluster.address, subject), subject)
    short = mint_token(DEV_KEYS, subject, (Role.PLAYER,), now=int(time.time()), ttl_seconds=3)
    request = (
        table_pb2.WatchTableRequest(table_id=table_id)
        if method == "WatchTable"
        else table_pb2.SpectateTableRequest(table_id=table_id)
    )
    outcome = call(
        cluster.address,
        f"{TABLE}/{method}",
        request.SerializeToString(),
        token=short,
        streaming=True,
        until_end=True,
        timeout=30,
    )
    assert outcome.label == "unauthenticated TOKEN_EXPIRED", outcome
    # It streamed while the token lived (the full view first), past the gateway's 2 s read deadlines
    # (conftest): they are for reading a request, never for its answer.
    assert int(outcome.body) >= 1
    _no_traceback(cluster)


def test_an_encoding_the_gateway_does_not_take_is_unsupported_with_a_reason(cluster: Cluster) -> None:
    token = _sign_in(cluster, "edge-encoding")
    for header, path, streaming in (
        ("content-encoding", f"{LOBBY}/ListRooms", False),
        ("connect-content-encoding", f"{TABLE}/WatchTable", True),
    ):
        for encoding in ("br", "deflate", "x" * 100):
            outcome = call(
                cluster.address, path, b"", token=token, streaming=streaming, headers={header: encoding}
            )
            assert outcome.label == "unimplemented PROTOCOL_UNSUPPORTED", (header, encoding, outcome)
    _no_traceback(cluster)
