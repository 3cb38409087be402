"""Outgoing channels add the token and a default deadline to every call."""

from __future__ import annotations

import grpc
import pytest

from service_runtime.clients import create_channel
from service_runtime.testing import running_server, token_for

from .probe_service import PROBE_ACCESS, probe_handler


async def test_channel_sends_the_bearer_token() -> None:
    async with (
        running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, _),
        create_channel(f"127.0.0.1:{server.port}", token=lambda: token_for("table", "service")) as channel,
    ):
        assert await channel.unary_unary("/test.Probe/Whoami")(b"") == b"table"


async def test_a_stream_through_the_channel_carries_the_bearer_token_too() -> None:
    async with (
        running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, _),
        create_channel(f"127.0.0.1:{server.port}", token=lambda: token_for("table", "service")) as channel,
    ):
        replies = [reply async for reply in channel.unary_stream("/test.Probe/WhoamiStream")(b"")]
        assert replies == [b"table"]


async def test_every_call_gets_the_default_deadline() -> None:
    async with (
        running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, _),
        create_channel(
            f"127.0.0.1:{server.port}", timeout_seconds=0.3, token=lambda: token_for("alice")
        ) as channel,
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await channel.unary_unary("/test.Probe/Sleep")(b"2")
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_unavailable_target_fails_with_unavailable_after_bounded_retries() -> None:
    async with create_channel("127.0.0.1:1", timeout_seconds=3, token=lambda: token_for("alice")) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await channel.unary_unary("/test.Probe/Whoami")(b"")
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
