"""Without Redis: the lobby reads the one table shard's tables over ShardDirectoryService.

One call fetches every table of the shard and serves all rooms for a second (ListRooms shows twenty
rooms from one call). Callers that find the figures stale at the same time share one question (a
thousand concurrent ListTables ask the shard once, never a thousand times). A shard that does not
answer is not asked again for that second either, and its last good figures keep serving for
`STALE_SECONDS`: only a shard silent for longer makes the lobby answer NO_SHARD_AVAILABLE.
"""

from __future__ import annotations

import asyncio
import time

import grpc

from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from service_runtime.auth import ServiceName, TokenKeys
from service_runtime.clients import create_channel
from service_runtime.errors import Unavailable
from service_runtime.service_tokens import ServiceTokenSource
from service_runtime.table_directory import TableFigures, summary_to_figures
from service_runtime.tasks import cancel_and_wait
from service_runtime.tls import TlsFiles

SERVICE_TOKEN_SECONDS = 300
# The figures are seconds old by nature; asking more often than this buys nothing.
SNAPSHOT_SECONDS = 1.0
CALL_SECONDS = 0.5
# How long the last good figures stand in for a shard that misses its answers.
STALE_SECONDS = 10.0


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
        self._snapshot_at = float("-inf")  # when the shard was last asked
        self._good_at = float("-inf")  # when it last answered
        self._asking: asyncio.Task[None] | None = None

    async def _ask(self) -> None:
        try:
            response = await self._stub.ListShardTables(
                shard_directory_pb2.ListShardTablesRequest(), timeout=self._timeout
            )
        except grpc.aio.AioRpcError:
            pass  # the last good figures stand until they are STALE_SECONDS old
        else:
            players = {p.table_id: tuple(p.player_ids) for p in response.players}
            self._snapshot = [summary_to_figures(t, players.get(t.table_id, ())) for t in response.tables]
            self._good_at = time.monotonic()
        finally:
            self._snapshot_at = time.monotonic()

    async def _all_tables(self) -> list[TableFigures] | None:
        if time.monotonic() - self._snapshot_at >= SNAPSHOT_SECONDS:
            if self._asking is None or self._asking.done():
                self._asking = asyncio.create_task(self._ask(), name="list-shard-tables")
            # Shielded: a caller that goes away does not cancel the question the others wait for.
            await asyncio.shield(self._asking)
        if time.monotonic() - self._good_at > STALE_SECONDS:
            return None
        return self._snapshot

    async def tables_of_room(self, room_id: str) -> list[TableFigures]:
        tables = await self._all_tables()
        if tables is None:
            raise Unavailable("NO_SHARD_AVAILABLE", "the table shard does not answer", {"room_id": room_id})
        return [t for t in tables if t.room_id == room_id]

    async def close(self) -> None:
        if self._asking is not None:
            await cancel_and_wait(self._asking)
        await self._channel.close()
