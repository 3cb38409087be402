"""Every player has a share of a server (issue 23, item 5): concurrent calls and open streams per
token subject, beyond which that player alone is refused with RESOURCE_EXHAUSTED
CALLER_QUOTA_EXCEEDED while everyone else is served. On the old code one account could hold every
call and stream slot of the server (1,200 SpectateTable streams from one player were accepted), and
the next player's stream got SERVER_OVERLOADED."""

from __future__ import annotations

import asyncio
import collections

import grpc

from service_runtime.auth import STAFF_ROLES, Role
from service_runtime.interceptors import Limits
from service_runtime.testing import auth_metadata, reason_of, running_server

from .probe_service import PROBE_ACCESS, probe_handler

LIMITS = Limits(
    max_concurrent_rpcs=100,
    max_concurrent_streams=100,
    player_concurrent_calls=4,
    player_concurrent_streams=3,
)


async def _outcome(call: object) -> str:
    try:
        if hasattr(call, "__aiter__"):
            async for _ in call:  # type: ignore[attr-defined]
                pass
        else:
            await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as error:
        return f"{error.code().name}:{reason_of(error)}"
    return "OK"


async def test_one_player_beyond_their_share_is_refused_and_others_are_served() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()], limits=LIMITS) as (
        _,
        channel,
    ):
        sleep = channel.unary_unary("/test.Probe/Sleep")
        hog = auth_metadata("hog", Role.PLAYER)
        calls = [asyncio.ensure_future(_outcome(sleep(b"0.5", metadata=hog, timeout=10))) for _ in range(10)]
        await asyncio.sleep(0.1)
        # Other players and admins are served while the hog holds its share.
        assert await _outcome(sleep(b"0", metadata=auth_metadata("fair", Role.PLAYER), timeout=5)) == "OK"
        assert await _outcome(sleep(b"0", metadata=auth_metadata("ops", *STAFF_ROLES), timeout=5)) == "OK"
        outcomes = collections.Counter(await asyncio.gather(*calls))
        assert outcomes == {"OK": 4, "RESOURCE_EXHAUSTED:CALLER_QUOTA_EXCEEDED": 6}
        # The share is given back when the calls end.
        assert await _outcome(sleep(b"0", metadata=hog, timeout=5)) == "OK"


async def test_streams_have_their_own_share_per_player() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()], limits=LIMITS) as (
        _,
        channel,
    ):
        count = channel.unary_stream("/test.Probe/Count")
        hog = auth_metadata("hog", Role.PLAYER)
        streams = [asyncio.ensure_future(_outcome(count(b"30", metadata=hog, timeout=10))) for _ in range(8)]
        await asyncio.sleep(0.1)
        assert await _outcome(count(b"2", metadata=auth_metadata("fair", Role.PLAYER), timeout=5)) == "OK"
        outcomes = collections.Counter(await asyncio.gather(*streams))
        assert outcomes == {"OK": 3, "RESOURCE_EXHAUSTED:CALLER_QUOTA_EXCEEDED": 5}
        # A service is bound by the totals only.
        services = [
            asyncio.ensure_future(
                _outcome(count(b"10", metadata=auth_metadata("table", Role.SERVICE), timeout=10))
            )
            for _ in range(8)
        ]
        assert set(await asyncio.gather(*services)) == {"OK"}
