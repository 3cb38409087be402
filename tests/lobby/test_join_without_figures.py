"""JoinTable while the room's table figures cannot be read (issue 41): the shard paused, not there
yet, or Redis away. On the old code the lobby answered OK with an empty `table_id` ("let the shard
choose"), which no client can use. Now it routes to the table asked for, else the room's first
standing table, opened at the room's owner; when the owner cannot open it, the refusal is the
owner's (UNAVAILABLE with a reason), never a success without a table."""

from __future__ import annotations

import grpc
import pytest
import redis.asyncio as redis

from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from service_runtime.database import create_engine, create_session_factory
from service_runtime.errors import Unavailable
from service_runtime.shard_registry import RedisShardRegistry, ShardInfo
from service_runtime.table_directory import TableFigures
from service_runtime.testing import reason_of, running_server
from services.lobby.assembly import ACCESS, lobby_service, lobby_servicer
from tests.lobby.conftest import ALICE

ROOM = "nlhe-gram-classic"
SHARD = ShardInfo("shard-a", "127.0.0.1:7201")


class Unreadable:
    """Figures that cannot be read, as from a paused shard."""

    async def tables_of_room(self, room_id: str) -> list[TableFigures]:
        raise Unavailable("NO_SHARD_AVAILABLE", "the table shard did not answer")


class Opener:
    def __init__(self, refuse: bool = False) -> None:
        self.opened: list[tuple[str, str]] = []
        self.refuse = refuse

    async def open(self, address: str, table_id: str) -> None:
        if self.refuse:
            raise Unavailable("NO_SHARD_AVAILABLE", "the room's shard did not open the table")
        self.opened.append((address, table_id))


async def _join(
    url: str, client: redis.Redis, prefix: str, opener: Opener, request: lobby_pb2.JoinTableRequest
) -> lobby_pb2.JoinTableResponse:
    engine = create_engine(url, pool_size=5)
    registry = RedisShardRegistry(client, prefix=prefix, lease_seconds=60.0)
    await registry.heartbeat(SHARD)
    servicer, _ = lobby_servicer(
        create_session_factory(engine), registry, Unreadable(), closed_access=False, opener=opener
    )
    try:
        async with running_server([lobby_service(servicer)], ACCESS) as (_, channel):
            reply: lobby_pb2.JoinTableResponse = await lobby_pb2_grpc.LobbyServiceStub(channel).JoinTable(
                request, metadata=ALICE, timeout=10
            )
            return reply
    finally:
        await engine.dispose()


async def test_without_figures_a_join_routes_to_the_rooms_first_table_opened_at_its_owner(
    lobby_database_url: str, redis_client: redis.Redis, redis_prefix: str
) -> None:
    opener = Opener()
    joined = await _join(
        lobby_database_url, redis_client, redis_prefix, opener, lobby_pb2.JoinTableRequest(room_id=ROOM)
    )
    assert joined.table_id == f"{ROOM}.1"
    assert joined.address == SHARD.address
    assert opener.opened == [(SHARD.address, f"{ROOM}.1")]


async def test_without_figures_the_table_asked_for_is_the_one_routed_to(
    lobby_database_url: str, redis_client: redis.Redis, redis_prefix: str
) -> None:
    opener = Opener()
    request = lobby_pb2.JoinTableRequest(room_id=ROOM, table_id=f"{ROOM}.2")
    joined = await _join(lobby_database_url, redis_client, redis_prefix, opener, request)
    assert joined.table_id == f"{ROOM}.2"
    assert opener.opened == [(SHARD.address, f"{ROOM}.2")]


async def test_a_paused_owner_is_an_unavailable_refusal_not_a_success_without_a_table(
    lobby_database_url: str, redis_client: redis.Redis, redis_prefix: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _join(
            lobby_database_url,
            redis_client,
            redis_prefix,
            Opener(refuse=True),
            lobby_pb2.JoinTableRequest(room_id=ROOM),
        )
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    assert reason_of(caught.value) == "NO_SHARD_AVAILABLE"
