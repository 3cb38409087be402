"""The one way a table beyond a room's standing ones opens: the lobby, routing a player there with
JoinTable, asks the room's owning shard to open it (ShardDirectoryService.OpenTable).

Reads never open a table and a shard opens no other on a player's word (issue 23), so how many
tables a room runs is the lobby's decision, within `max_tables_per_room`. One channel per shard
address, kept (a handful of shards), with the lobby's own service token.
"""

from __future__ import annotations

from typing import Protocol

import grpc

from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from service_runtime.auth import ServiceName, TokenKeys
from service_runtime.clients import create_channel, reason_of
from service_runtime.errors import FailedPrecondition, NotFound, Unavailable
from service_runtime.service_tokens import ServiceTokenSource
from service_runtime.structured_logging import get_logger
from service_runtime.tls import TlsFiles

log = get_logger("lobby.table_opener")

SERVICE_TOKEN_SECONDS = 300
MAX_CHANNELS = 64


class TableOpener(Protocol):
    async def open(self, address: str, table_id: str) -> None:
        """The table is open at the shard at `address` when this returns; a refusal is raised."""


class ShardTableOpener:
    def __init__(
        self,
        keys: TokenKeys,
        *,
        timeout_seconds: float,
        tls: TlsFiles | None = None,
        tls_check_seconds: float = 30.0,
    ) -> None:
        self._tokens = ServiceTokenSource(keys, ServiceName.LOBBY.value, ttl_seconds=SERVICE_TOKEN_SECONDS)
        self._timeout = timeout_seconds
        self._tls = tls
        self._tls_check_seconds = tls_check_seconds
        self._channels: dict[str, grpc.aio.Channel] = {}

    async def _stub(self, address: str) -> shard_directory_pb2_grpc.ShardDirectoryServiceStub:
        channel = self._channels.get(address)
        if channel is None:
            if len(self._channels) >= MAX_CHANNELS:
                # Shard addresses change as pods come and go: the oldest channel makes room.
                oldest = next(iter(self._channels))
                await self._channels.pop(oldest).close()
            channel = self._channels[address] = create_channel(
                address,
                timeout_seconds=self._timeout,
                token=self._tokens,
                tls=self._tls,
                tls_check_seconds=self._tls_check_seconds,
            )
        return shard_directory_pb2_grpc.ShardDirectoryServiceStub(channel)

    async def open(self, address: str, table_id: str) -> None:
        try:
            stub = await self._stub(address)
            await stub.OpenTable(
                shard_directory_pb2.OpenTableRequest(table_id=table_id), timeout=self._timeout
            )
        except grpc.aio.AioRpcError as error:
            reason = reason_of(error)
            # The operator's one clue when players cannot be routed: what the shard answered.
            log.warning(
                "table not opened at its shard",
                table_id=table_id,
                address=address,
                code=error.code().name,
                reason=reason,
                details=error.details(),
            )
            if error.code() == grpc.StatusCode.NOT_FOUND and reason:
                raise NotFound(reason, "the shard has no such table", {"table_id": table_id}) from error
            if error.code() == grpc.StatusCode.FAILED_PRECONDITION and reason:
                raise FailedPrecondition(
                    reason, "the shard did not open the table", {"table_id": table_id}
                ) from error
            raise Unavailable(
                "NO_SHARD_AVAILABLE", "the room's shard did not open the table", {"table_id": table_id}
            ) from error

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
