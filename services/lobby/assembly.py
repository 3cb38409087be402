"""Composition of the lobby process: database, shard registry, table figures, use cases, servicer.

With Redis (POKER_REDIS_URL): the shard registry, table directory and maintenance board live there.
Without: the one table shard at POKER_LOBBY_TABLE_SHARD_ADDRESS owns every room and is asked for its
tables over RPC; shards without Redis poll GetMaintenance instead of the board.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from poker.lobby.v1 import lobby_pb2_grpc
from service_runtime.access import (
    ANY_CALLER,
    EVERY_STAFF_ROLE,
    FINANCE,
    OPERATIONS,
    PLAYERS,
    RISK,
    SUPPORT,
    AccessPolicy,
    services,
)
from service_runtime.auth import ServiceName, TokenKeys
from service_runtime.database import close_engine, create_engine, create_session_factory
from service_runtime.process import Assembly
from service_runtime.redis_client import create_redis
from service_runtime.server import GrpcService
from service_runtime.shard_registry import RedisShardRegistry, ShardInfo, ShardRegistry, SingleShardRegistry
from service_runtime.structured_logging import get_logger
from service_runtime.table_directory import RedisMaintenanceBoard, RedisTableDirectory
from service_runtime.tasks import cancel_and_wait
from service_runtime.tls import TlsFiles
from services.lobby.access import AccessControl
from services.lobby.catalogue import Catalogue
from services.lobby.display_names import Random
from services.lobby.floor import Floor, TableSource
from services.lobby.grpc_adapter import SERVICE_NAME, LobbyServicer
from services.lobby.joining import DEFAULT_MAX_TABLES_PER_ROOM, Joining
from services.lobby.profiles import Profiles
from services.lobby.replies import RequestReplies
from services.lobby.settings import LobbySettings
from services.lobby.shard_client import ShardRpcTableSource
from services.lobby.storage import migrate
from services.lobby.table_opener import ShardTableOpener, TableOpener

# Maintenance is republished this often, so shards converge even after a failed publish.
REPUBLISH_SECONDS = 5.0

ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        "ListRooms": ANY_CALLER,
        "GetRoom": ANY_CALLER,
        "ListTables": ANY_CALLER,
        # Staff too, to watch (spectate only): the staff door finds a table's shard so.
        "JoinTable": PLAYERS | EVERY_STAFF_ROLE,
        "RedeemInviteCode": PLAYERS,
        # A player's own profile (the caller's token subject; nobody reads or sets another's).
        "GetMyProfile": PLAYERS,
        "SetDisplayName": PLAYERS,
        "SetShowAvatar": PLAYERS,
        # The gateway's Telegram sign-in, as the player with the token it has just issued (it does
        # not forward the call from browsers).
        "RecordSignInPhoto": PLAYERS,
        # Shards without Redis poll it for the maintenance switches.
        "GetMaintenance": ANY_CALLER,
        # The table shard checks access and maintenance before SitDown and a house round, and the
        # room's visibility before it shows a table to a player who has no seat there.
        "AuthorizeSeat": services(ServiceName.TABLE),
        "AuthorizeView": services(ServiceName.TABLE),
        "CreateRoom": OPERATIONS,
        "UpdateRoom": OPERATIONS,
        "DisableRoom": OPERATIONS,
        "EnableRoom": OPERATIONS,
        "SetMaintenance": OPERATIONS,
        "UpdateAllowList": OPERATIONS,
        "ListAllowList": OPERATIONS | SUPPORT,
        "CreateInviteCode": OPERATIONS,
        # Staff looking a player up (the back office's players screen).
        "FindPlayers": SUPPORT | RISK | FINANCE | OPERATIONS,
    },
)


def utc_now() -> datetime:
    return datetime.now(UTC)


def lobby_servicer(
    sessions: async_sessionmaker[AsyncSession],
    registry: ShardRegistry,
    source: TableSource,
    *,
    closed_access: bool,
    board: RedisMaintenanceBoard | None = None,
    clock: Callable[[], datetime] = utc_now,
    opener: TableOpener | None = None,
    max_tables_per_room: int = DEFAULT_MAX_TABLES_PER_ROOM,
    rng: Random | None = None,
) -> tuple[LobbyServicer, AccessControl]:
    replies = RequestReplies(sessions, clock)
    floor = Floor(registry, source)
    catalogue = Catalogue(sessions, replies, floor, clock)
    access = AccessControl(sessions, replies, clock, closed_access=closed_access, board=board)
    joining = Joining(
        sessions, catalogue, floor, access, opener=opener, max_tables_per_room=max_tables_per_room
    )
    profiles = Profiles(sessions, replies, clock, rng)
    return LobbyServicer(catalogue, floor, joining, access, profiles), access


def lobby_service(servicer: LobbyServicer) -> GrpcService:
    return GrpcService(
        SERVICE_NAME, lambda server: lobby_pb2_grpc.add_LobbyServiceServicer_to_server(servicer, server)
    )


async def _republish(access: AccessControl) -> None:
    log = get_logger("lobby.maintenance")
    while True:
        try:
            await access.publish_maintenance()
        except Exception as exc:
            log.warning("maintenance publish failed", error=type(exc).__name__)
        await asyncio.sleep(REPUBLISH_SECONDS)


async def assemble(settings: LobbySettings) -> Assembly:
    url = settings.resolved_database_url()
    await asyncio.to_thread(migrate, url)
    engine = create_engine(url, pool_size=settings.database_pool_size)
    sessions = create_session_factory(engine)
    closers: list[Callable[[], Awaitable[None]]] = []
    registry: ShardRegistry
    source: TableSource
    board = None
    if settings.redis_url:
        client = create_redis(settings.redis_url)
        registry = RedisShardRegistry(client, prefix=settings.redis_prefix)
        source = RedisTableDirectory(client, prefix=settings.redis_prefix)
        board = RedisMaintenanceBoard(client, prefix=settings.redis_prefix)
        closers.append(lambda: client.aclose())
    else:
        registry = SingleShardRegistry(ShardInfo(settings.table_shard_id, settings.table_shard_address))
        rpc_source = ShardRpcTableSource(
            settings.table_shard_address,
            TokenKeys.from_settings(settings.auth_keys),
            timeout_seconds=settings.request_timeout_seconds,
            tls=TlsFiles.from_settings(settings),
            tls_check_seconds=settings.tls_reload_seconds,
        )
        source = rpc_source
        closers.append(rpc_source.close)
    keys = TokenKeys.from_settings(settings.auth_keys)
    opener = ShardTableOpener(
        keys,
        timeout_seconds=min(settings.request_timeout_seconds, 2.0),
        tls=TlsFiles.from_settings(settings),
        tls_check_seconds=settings.tls_reload_seconds,
    )
    closers.append(opener.close)
    servicer, access = lobby_servicer(
        sessions,
        registry,
        source,
        closed_access=settings.closed_access,
        board=board,
        opener=opener,
        max_tables_per_room=settings.max_tables_per_room,
    )
    republish = asyncio.create_task(_republish(access), name="maintenance-republish") if board else None

    async def close() -> None:
        await cancel_and_wait(republish)
        for closer in closers:
            await closer()
        await close_engine(engine)

    return Assembly(services=[lobby_service(servicer)], access=ACCESS, close=close)
