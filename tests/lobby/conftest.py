"""Lobby fixtures: a migrated database per backend (SQLite and real PostgreSQL), a real Redis under a
test prefix for the shard registry and table directory, and the lobby served on port 0."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import pytest
import redis.asyncio as redis
from google.rpc import error_details_pb2, status_pb2

from poker.lobby.v1 import lobby_pb2_grpc
from service_runtime.database import create_engine, create_session_factory
from service_runtime.shard_registry import RedisShardRegistry
from service_runtime.table_directory import RedisMaintenanceBoard, RedisTableDirectory
from service_runtime.testing import auth_metadata, reason_of, running_server, throwaway_postgres_database
from services.lobby.access import AccessControl
from services.lobby.assembly import ACCESS, lobby_service, lobby_servicer
from services.lobby.storage import migrate

ADMIN = auth_metadata("ops-admin", "admin")
ALICE = auth_metadata("alice", "player")
BOB = auth_metadata("bob", "player")
TABLE = auth_metadata("table", "service")


@dataclass
class FakeClock:
    now: datetime = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def lobby_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A freshly migrated lobby database (seeded catalogue), removed afterwards."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{(tmp_path / 'lobby.db').as_posix()}"
        migrate(url)
        yield url
        return
    server_url: str = request.getfixturevalue("postgres_server_url")
    with throwaway_postgres_database(server_url, prefix="lobby_test") as url:
        migrate(url)
        yield url


@dataclass
class Lobby:
    stub: lobby_pb2_grpc.LobbyServiceStub
    channel: grpc.aio.Channel
    registry: RedisShardRegistry
    directory: RedisTableDirectory
    board: RedisMaintenanceBoard
    access: AccessControl
    clock: FakeClock


async def lobby_on(
    url: str, client: redis.Redis, prefix: str, *, closed_access: bool = False
) -> AsyncIterator[Lobby]:
    engine = create_engine(url, pool_size=5)
    registry = RedisShardRegistry(client, prefix=prefix, lease_seconds=1.0)
    directory = RedisTableDirectory(client, prefix=prefix, ttl_seconds=2.0)
    board = RedisMaintenanceBoard(client, prefix=prefix)
    clock = FakeClock()
    servicer, access = lobby_servicer(
        create_session_factory(engine),
        registry,
        directory,
        closed_access=closed_access,
        board=board,
        clock=clock,
    )
    try:
        async with running_server([lobby_service(servicer)], ACCESS) as (_, channel):
            yield Lobby(
                lobby_pb2_grpc.LobbyServiceStub(channel), channel, registry, directory, board, access, clock
            )
    finally:
        await engine.dispose()


@pytest.fixture
async def redis_client(redis_server_url: str) -> AsyncIterator[redis.Redis]:
    client = redis.Redis.from_url(redis_server_url)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def lobby(
    lobby_database_url: str, redis_client: redis.Redis, redis_prefix: str
) -> AsyncIterator[Lobby]:
    async for served in lobby_on(lobby_database_url, redis_client, redis_prefix):
        yield served


@pytest.fixture
async def closed_lobby(
    lobby_database_url: str, redis_client: redis.Redis, redis_prefix: str
) -> AsyncIterator[Lobby]:
    async for served in lobby_on(lobby_database_url, redis_client, redis_prefix, closed_access=True):
        yield served


def error_field(error: grpc.aio.AioRpcError) -> str | None:
    """The `field` named in the error's ErrorInfo metadata, if any."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info.metadata.get("field")
    return None


async def expect_error(
    call: Awaitable[object], code: grpc.StatusCode, reason: str, *, field: str | None = None
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    assert (error.value.code(), reason_of(error.value)) == (code, reason)
    if field is not None:
        assert error_field(error.value) == field
