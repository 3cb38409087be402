"""Lobby fixtures: a migrated database per backend (SQLite and real PostgreSQL), a real Redis under a
test prefix for the shard registry and table directory, and the lobby served on port 0."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Awaitable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import grpc
import pytest
import redis.asyncio as redis
import sqlalchemy as sa
from google.rpc import error_details_pb2, status_pb2

from poker.lobby.v1 import lobby_pb2_grpc
from service_runtime.auth import STAFF_ROLES, ServiceName
from service_runtime.database import create_engine, create_session_factory, sync_url
from service_runtime.shard_registry import RedisShardRegistry
from service_runtime.table_directory import RedisMaintenanceBoard, RedisTableDirectory
from service_runtime.testing import (
    auth_metadata,
    reason_of,
    running_server,
    service_metadata,
    throwaway_postgres_database,
)
from services.lobby.access import AccessControl
from services.lobby.assembly import ACCESS, lobby_service, lobby_servicer
from services.lobby.storage import MIGRATIONS_DIR, migrate
from services.lobby.tables import metadata, rooms

ADMIN = auth_metadata("ops-admin", *STAFF_ROLES)
ALICE = auth_metadata("alice", "player")
BOB = auth_metadata("bob", "player")
TABLE = service_metadata(ServiceName.TABLE)


@dataclass
class FakeClock:
    now: datetime = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


def _seed_rows() -> list[dict[str, object]]:
    """The rows migration 0002 seeds, from the migration itself."""
    path = MIGRATIONS_DIR / "versions" / "0002_seed_catalogue.py"
    spec = importlib.util.spec_from_file_location("lobby_seed_catalogue", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows: list[dict[str, object]] = module.seed_rows()
    return rows


def _reset(url: str) -> None:
    """Back to the freshly migrated state: every lobby row gone, the seeded rooms back."""
    engine = sa.create_engine(sync_url(url), poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as connection:
            for table in reversed(metadata.sorted_tables):
                connection.execute(table.delete())
            connection.execute(rooms.insert(), _seed_rows())
    finally:
        engine.dispose()


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def migrated_lobby_database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A migrated lobby database per backend, shared by one module's tests, removed afterwards."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{(tmp_path_factory.mktemp('lobby-db') / 'lobby.db').as_posix()}"
        migrate(url)
        yield url
        return
    server_url: str = request.getfixturevalue("postgres_server_url")
    with throwaway_postgres_database(server_url, prefix="lobby_test") as url:
        migrate(url)
        yield url


@pytest.fixture
def lobby_database_url(migrated_lobby_database: str) -> str:
    """The module's database as the migration left it (seeded catalogue, nothing else)."""
    _reset(migrated_lobby_database)
    return migrated_lobby_database


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
    # Long enough that a test heartbeating once keeps its shard under any load; lapses are tested elsewhere.
    registry = RedisShardRegistry(client, prefix=prefix, lease_seconds=60.0)
    # Likewise figures published once stay listed under any load (with 2 s, a loaded machine's slow
    # GetRoom saw them gone); a test of their expiry publishes through a short-lived directory of its own.
    directory = RedisTableDirectory(client, prefix=prefix, ttl_seconds=60.0)
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
