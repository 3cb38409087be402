"""Without Redis: the lobby reads the one table shard's tables over ShardDirectoryService.

One call fetches every table of the shard and serves all rooms for a second (ListRooms shows twenty
rooms from one call); a shard that does not answer is not asked again for that second either, so a
missing shard costs one short call, not one per room.
"""

from __future__ import annotations

import time

import grpc

from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from service_runtime.auth import ServiceName, TokenKeys
from service_runtime.clients import create_channel
from service_runtime.errors import Unavailable
from service_runtime.service_tokens import ServiceTokenSource
from service_runtime.table_directory import TableFigures, summary_to_figures
from service_runtime.tls import TlsFiles

SERVICE_TOKEN_SECONDS = 300
# The figures are seconds old by nature; asking more often than this buys nothing.
SNAPSHOT_SECONDS = 1.0
CALL_SECONDS = 0.5


class ShardRpcTableSource:
    """Asks the shard at `address` for its tables; NO_SHARD_AVAILABLE when it does not answer."""

    def __init__(
        self,
        address: str,
        keys: TokenKeys,
        *,
        timeout_seconds: float,
        tls: TlsFiles | None = None,
        tls_check_seconds: float = 30.0,
    ) -> None:
        self._timeout = min(timeout_seconds, CALL_SECONDS)
        # The lobby's own identity (service `lobby`): the shard lets only the lobby list its tables.
        tokens = ServiceTokenSource(keys, ServiceName.LOBBY.value, ttl_seconds=SERVICE_TOKEN_SECONDS)
        self._channel = create_channel(
            address, timeout_seconds=self._timeout, token=tokens, tls=tls, tls_check_seconds=tls_check_seconds
        )
        self._stub = shard_directory_pb2_grpc.ShardDirectoryServiceStub(self._channel)
        self._snapshot: list[TableFigures] | None = None
        self._snapshot_at = float("-inf")

    async def _all_tables(self) -> list[TableFigures] | None:
        if time.monotonic() - self._snapshot_at < SNAPSHOT_SECONDS:
            return self._snapshot
        try:
            response = await self._stub.ListShardTables(
                shard_directory_pb2.ListShardTablesRequest(), timeout=self._timeout
            )
            self._snapshot = [summary_to_figures(t) for t in response.tables]
        except grpc.aio.AioRpcError:
            self._snapshot = None
        self._snapshot_at = time.monotonic()
        return self._snapshot

    async def tables_of_room(self, room_id: str) -> list[TableFigures]:
        tables = await self._all_tables()
        if tables is None:
            raise Unavailable("NO_SHARD_AVAILABLE", "the table shard does not answer", {"room_id": room_id})
        return [t for t in tables if t.room_id == room_id]

    async def close(self) -> None:
        await self._channel.close()
