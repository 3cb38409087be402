"""The lobby's figures from the one table shard without Redis (issue 23, item 8).

On the old code every call that found the one-second snapshot stale asked the shard itself: 1,500
concurrent ListTables sent 1,500 ListShardTables at once, the shard could not answer them within
the lobby's 0.5 s deadline, and for the next second every ListTables answered UNAVAILABLE
NO_SHARD_AVAILABLE although the shard was up. Now concurrent callers share one question, and a
shard that misses one answer leaves the last good figures in place.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from service_runtime.access import ANY_CALLER, AccessPolicy
from service_runtime.errors import Unavailable
from service_runtime.server import GrpcService
from service_runtime.testing import DEV_KEYS, running_server
from services.lobby import shard_client
from services.lobby.shard_client import ShardRpcTableSource

SERVICE = "poker.lobby.v1.ShardDirectoryService"
ROOM = "nlhe-gram-classic"


class CountingShard(shard_directory_pb2_grpc.ShardDirectoryServiceServicer):
    def __init__(self) -> None:
        self.calls = 0
        self.delay = 0.05
        self.down = False

    async def ListShardTables(  # noqa: N802
        self, request: shard_directory_pb2.ListShardTablesRequest, context: Any
    ) -> shard_directory_pb2.ListShardTablesResponse:
        self.calls += 1
        await asyncio.sleep(self.delay)
        if self.down:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "down")
        summary = shard_directory_pb2.ListShardTablesResponse().tables.add()
        summary.table_id, summary.room_id, summary.shard_id, summary.seats = f"{ROOM}.1", ROOM, "table-0", 6
        response = shard_directory_pb2.ListShardTablesResponse()
        response.tables.append(summary)
        return response


def _with_shard(shard: CountingShard) -> Any:
    policy = AccessPolicy.for_service(SERVICE, {"ListShardTables": ANY_CALLER, "OpenTable": ANY_CALLER})
    service = GrpcService(
        SERVICE,
        lambda server: shard_directory_pb2_grpc.add_ShardDirectoryServiceServicer_to_server(shard, server),
    )
    return running_server([service], policy)


async def test_concurrent_callers_share_one_question_and_all_get_the_figures() -> None:
    shard = CountingShard()
    async with _with_shard(shard) as (running, _):
        source = ShardRpcTableSource(f"127.0.0.1:{running.port}", DEV_KEYS, timeout_seconds=5.0)
        try:
            results = await asyncio.gather(
                *(source.tables_of_room(ROOM) for _ in range(1500)), return_exceptions=True
            )
        finally:
            await source.close()
    assert all(isinstance(r, list) and [t.table_id for t in r] == [f"{ROOM}.1"] for r in results)
    assert shard.calls <= 2


async def test_a_missed_answer_keeps_the_last_good_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shard_client, "SNAPSHOT_SECONDS", 0.0)
    shard = CountingShard()
    async with _with_shard(shard) as (running, _):
        source = ShardRpcTableSource(f"127.0.0.1:{running.port}", DEV_KEYS, timeout_seconds=5.0)
        try:
            assert [t.table_id for t in await source.tables_of_room(ROOM)] == [f"{ROOM}.1"]
            shard.down = True
            # Refreshing fails; the figures of a moment ago are still the best answer there is.
            assert [t.table_id for t in await source.tables_of_room(ROOM)] == [f"{ROOM}.1"]
            monkeypatch.setattr(shard_client, "STALE_SECONDS", 0.0)
            with pytest.raises(Unavailable) as caught:
                await source.tables_of_room(ROOM)
            assert caught.value.reason == "NO_SHARD_AVAILABLE"
        finally:
            await source.close()
