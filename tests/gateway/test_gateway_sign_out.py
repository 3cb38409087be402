"""Signing out ends the session everywhere (issue 41: streams bound to revocation too): before,
"Sign out" only forgot the token in the page, so the token and every stream it had opened lived on
(a stolen token streamed the seat's cards until it expired). Now SignOut revokes the session: the
same token, and every renewal of it, is UNAUTHENTICATED SESSION_REVOKED, and a table stream the
session opened ends with that status at once. With Redis the revocation reaches every replica: a
stream open at one gateway ends when the player signs out at another."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest
import redis

from poker.gateway.v1 import gateway_pb2
from poker.table.v1 import table_pb2
from tests.gateway.conftest import Cluster
from tests.gateway.connect_http import Outcome, RawStream, call
from tests.gateway.gateway_process import running_gateway
from tests.gateway.raw_player import GATEWAY, LOBBY, TABLE, seat, sign_in


def _watching(address: str, token: str, table_id: str) -> RawStream:
    """A WatchTable stream through `address`, its first message (the full view) read."""
    request = table_pb2.WatchTableRequest(table_id=table_id).SerializeToString()
    stream = RawStream(address, f"{TABLE}/WatchTable", request, token=token)
    assert stream.next_message() is not None, stream.end
    return stream


def _end_of(stream: RawStream) -> Outcome:
    """The stream's end, read in a thread: the test fails (instead of hanging) if it never comes."""
    ended: list[Outcome] = []
    reader = threading.Thread(target=lambda: ended.append(stream.until_end()), daemon=True)
    reader.start()
    reader.join(timeout=30)
    stream.close()
    assert ended, "the stream did not end after the sign-out"
    return ended[0]


def _sign_out(address: str, token: str) -> Outcome:
    return call(address, f"{GATEWAY}/SignOut", gateway_pb2.SignOutRequest().SerializeToString(), token=token)


def _refusals_after_sign_out(address: str, token: str) -> list[str]:
    rooms = call(address, f"{LOBBY}/ListRooms", b"", token=token)
    renew = gateway_pb2.RenewTokenRequest(device_id="raw-device").SerializeToString()
    renewed = call(address, f"{GATEWAY}/RenewToken", renew, token=token)
    return [rooms.label, renewed.label]


def test_signing_out_ends_the_sessions_stream_and_refuses_its_token_and_renewals(cluster: Cluster) -> None:
    token = sign_in(cluster.address, "out-ann")
    table_id = seat(cluster.address, token, "out-ann")
    stream = _watching(cluster.address, token, table_id)
    # A renewed token belongs to the same session: it ends too.
    renew = gateway_pb2.RenewTokenRequest(device_id="raw-device").SerializeToString()
    renewed = call(cluster.address, f"{GATEWAY}/RenewToken", renew, token=token)
    later = gateway_pb2.RenewTokenResponse.FromString(renewed.body).session.token
    assert _sign_out(cluster.address, token).code == "ok"
    assert _end_of(stream).label == "unauthenticated SESSION_REVOKED"
    assert _refusals_after_sign_out(cluster.address, token) == ["unauthenticated SESSION_REVOKED"] * 2
    assert _refusals_after_sign_out(cluster.address, later) == ["unauthenticated SESSION_REVOKED"] * 2
    # Signing out again is refused the same way (the session is over); a new sign-in is a new session.
    assert _sign_out(cluster.address, token).label == "unauthenticated SESSION_REVOKED"
    fresh = sign_in(cluster.address, "out-ann")
    assert call(cluster.address, f"{LOBBY}/ListRooms", b"", token=fresh).code == "ok"
    stream = _watching(cluster.address, fresh, table_id)
    stream.close()


def test_another_players_session_is_untouched_by_a_sign_out(cluster: Cluster) -> None:
    ann = sign_in(cluster.address, "out-bea")
    bob = sign_in(cluster.address, "out-bob")
    assert _sign_out(cluster.address, ann).code == "ok"
    assert call(cluster.address, f"{LOBBY}/ListRooms", b"", token=bob).code == "ok"


@pytest.fixture
def shared_redis(redis_server_url: str) -> Iterator[dict[str, str]]:
    prefix = f"poker-test:{uuid.uuid4().hex[:12]}:"
    yield {"POKER_REDIS_URL": redis_server_url, "POKER_GATEWAY_REDIS_PREFIX": prefix}
    client = redis.Redis.from_url(redis_server_url)
    try:
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)
    finally:
        client.close()


@pytest.mark.redis
def test_with_redis_a_sign_out_at_one_gateway_ends_the_stream_at_another(
    cluster: Cluster, shared_redis: dict[str, str]
) -> None:
    with (
        running_gateway(cluster.services, shared_redis) as first,
        running_gateway(cluster.services, shared_redis) as second,
    ):
        token = sign_in(first.address, "out-cat")
        table_id = seat(first.address, token, "out-cat")
        stream = _watching(second.address, token, table_id)
        assert _sign_out(first.address, token).code == "ok"
        assert _end_of(stream).label == "unauthenticated SESSION_REVOKED"
        assert _refusals_after_sign_out(second.address, token) == ["unauthenticated SESSION_REVOKED"] * 2
        assert "Traceback" not in "".join(first.lines + second.lines)
