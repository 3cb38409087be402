"""Without Redis: the lobby reads the one table shard's tables over ShardDirectoryService."""

from __future__ import annotations

import time

import grpc

from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from service_runtime.auth import Role, ServiceName, TokenKeys, mint_token
from service_runtime.clients import create_channel
from service_runtime.errors import Unavailable
from service_runtime.table_directory import TableFigures, summary_to_figures

SERVICE_TOKEN_SECONDS = 300


class ShardRpcTableSource:
    """Asks the shard at `address` for a room's tables; UNAVAILABLE when the shard does not answer."""

    def __init__(self, address: str, keys: TokenKeys, *, timeout_seconds: float) -> None:
        self._keys = keys
        self._token = ""
        self._token_expires = 0.0
        # Subject `lobby`, role service: the shard lets only the lobby list its tables this way.
        self._channel = create_channel(address, timeout_seconds=timeout_seconds, token=self._service_token)
        self._stub = shard_directory_pb2_grpc.ShardDirectoryServiceStub(self._channel)

    def _service_token(self) -> str:
        now = time.time()
        if now > self._token_expires - 60:
            self._token = mint_token(
                self._keys,
                ServiceName.LOBBY.value,
                (Role.SERVICE,),
                now=int(now),
                ttl_seconds=SERVICE_TOKEN_SECONDS,
            )
            self._token_expires = now + SERVICE_TOKEN_SECONDS
        return self._token

    async def tables_of_room(self, room_id: str) -> list[TableFigures]:
        try:
            response = await self._stub.ListShardTables(
                shard_directory_pb2.ListShardTablesRequest(room_id=room_id)
            )
        except grpc.aio.AioRpcError as exc:
            raise Unavailable(
                "NO_SHARD_AVAILABLE", "the table shard does not answer", {"room_id": room_id}
            ) from exc
        return [summary_to_figures(t) for t in response.tables]

    async def close(self) -> None:
        await self._channel.close()
