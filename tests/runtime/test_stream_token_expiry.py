"""A stream ends when its token does (issue 41, item 1): the token is checked when a stream opens,
and before this a stream opened with a 6-second token kept streaming a player's seat 12+ s after the
token expired. Now every server stream ends with UNAUTHENTICATED TOKEN_EXPIRED at its caller's
expiry, whatever the handler is doing (waiting for the next message or writing them)."""

from __future__ import annotations

import time

import grpc

from service_runtime.auth import Role, mint_token
from service_runtime.testing import DEV_KEYS, reason_of, running_server, token_for

from .probe_service import PROBE_ACCESS, probe_handler


def _short_token(seconds: int) -> tuple[tuple[str, str], ...]:
    token = mint_token(DEV_KEYS, "short", (Role.PLAYER,), now=int(time.time()), ttl_seconds=seconds)
    return (("authorization", f"Bearer {token}"),)


async def _read(call: grpc.aio.UnaryStreamCall) -> tuple[int, str]:  # type: ignore[type-arg]
    received = 0
    try:
        async for _ in call:
            received += 1
    except grpc.aio.AioRpcError as error:
        return received, f"{error.code().name}:{reason_of(error)}"
    return received, "OK"


async def test_a_stream_ends_with_token_expired_when_its_token_expires() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        count = channel.unary_stream("/test.Probe/Count")
        # 100,000 messages 10 ms apart: far longer than the token's 2 seconds.
        received, outcome = await _read(count(b"100000", metadata=_short_token(2), timeout=60))
        assert outcome == "UNAUTHENTICATED:TOKEN_EXPIRED"
        assert 0 < received < 100_000


async def test_a_stream_waiting_for_its_next_message_ends_when_its_token_expires() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        wait = channel.unary_stream("/test.Probe/WaitForever")
        received, outcome = await _read(wait(b"", metadata=_short_token(2), timeout=60))
        assert (received, outcome) == (1, "UNAUTHENTICATED:TOKEN_EXPIRED")


async def test_a_stream_whose_token_lives_on_ends_as_its_handler_does() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        count = channel.unary_stream("/test.Probe/Count")
        metadata = (("authorization", f"Bearer {token_for('long')}"),)
        assert await _read(count(b"5", metadata=metadata, timeout=30)) == (5, "OK")
