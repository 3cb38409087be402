"""HTTP/2 keepalive between our clients and servers (issue 30).

Found in the fault run: a table shard frozen (SIGSTOP) past its lease lost its rooms to the other
shard, which dealt on, but no player saw it: their WatchTable streams to the frozen process never
ended (nothing pinged it), so they never asked the lobby for the room's new owner. Clients now ping
every two seconds and give up on a peer that does not answer; servers accept those pings.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from service_runtime.clients import create_channel
from tests.table.conftest import ServiceProcess


async def test_a_stream_from_a_frozen_server_fails_within_seconds_and_pings_never_cost_a_channel(
    tmp_path: Path,
) -> None:
    lobby = ServiceProcess(
        "lobby", {**os.environ, "POKER_LOG_FORMAT": "json", "POKER_DATA_DIR": str(tmp_path)}
    )
    lobby.start()
    assert lobby.process is not None
    try:
        async with create_channel(lobby.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            watch = health.Watch(health_pb2.HealthCheckRequest())
            assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
            # Idle for several ping intervals: the server accepts the pings (no GOAWAY too_many_pings),
            # so the same channel still serves calls.
            await asyncio.sleep(7)
            reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            lobby.process.send_signal(signal.SIGSTOP)
            frozen_at = time.monotonic()
            try:
                async with asyncio.timeout(20):
                    with pytest.raises(grpc.aio.AioRpcError) as ended:
                        await watch.read()
                assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
                ended_after = time.monotonic() - frozen_at
            finally:
                lobby.process.send_signal(signal.SIGCONT)
        assert ended_after < 10, ended_after
    finally:
        lobby.stop()
