"""Composition of a table shard process: clients of its dependencies, the shard, the servicer, access.

The shard calls the cashier (seat sessions, settlements), fairness (commit, seal, reveal), history
(RecordHand) and the lobby (rooms) with a service token whose subject is `table`, minted from the
first configured signing key and renewed before it expires. Cash tables are actors (actor.py);
house-game tables (PlaceHouseBets, MakeHouseDecision) are in house_table.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc

from poker.cashier.v1 import cashier_pb2_grpc
from poker.fairness.v1 import fairness_pb2_grpc
from poker.history.v1 import history_pb2_grpc
from poker.lobby.v1 import lobby_pb2_grpc, shard_directory_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.access import ANY_CALLER, OPERATIONS, PLAYERS, SUPPORT, AccessPolicy, services
from service_runtime.auth import ServiceName, TokenKeys
from service_runtime.clients import create_channel
from service_runtime.process import Assembly
from service_runtime.redis_client import create_redis
from service_runtime.server import GrpcService
from service_runtime.service_tokens import ServiceTokenSource
from service_runtime.shard_registry import RedisShardRegistry, ShardInfo, ShardLease, ShardRegistry
from service_runtime.table_directory import MaintenanceWatcher, RedisMaintenanceBoard, RedisTableDirectory
from service_runtime.tls import TlsFiles
from service_runtime.unimplemented import unimplemented_servicer
from services.table import metrics as table_metrics
from services.table.grpc_adapter import SERVICE_NAME, ShardDirectoryServicer, TableServicer
from services.table.house.house_journal import FileJournal, RedisJournal
from services.table.house.house_table import HouseTimings, Journal
from services.table.log.event_log import FileEventLog, HandEventLog, RedisEventLog
from services.table.log.record_outbox import FileOutbox, RecordOutbox, RedisOutbox
from services.table.ownership.shard import HouseSetup, TableShard
from services.table.ownership.table_access import TableAccess
from services.table.ports.clock import WALL_CLOCK, Clock
from services.table.ports.dependencies import CashierClient, FairnessClient, HouseCashier
from services.table.ports.history_sink import HistoryRecordSink
from services.table.ports.rooms import LobbyRoomSource
from services.table.settings import TableSettings
from services.table.streams.chat import ChatGuard
from services.table.streams.mute_board import RedisMuteBoard
from services.table.streams.stream_budget import ViewerStreams
from services.table.timings import Timings

SERVICE_SUBJECT = ServiceName.TABLE.value
TOKEN_TTL_SECONDS = 3600

# Seat-taking and betting are for players; watching is for anyone with a token; muting a player in
# the chat is for support and operations.

ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        "SitDown": PLAYERS,
        "LeaveTable": PLAYERS,
        "Act": PLAYERS,
        "SitOut": PLAYERS,
        "SitIn": PLAYERS,
        "SetPlayerSeed": PLAYERS,
        "SendChat": PLAYERS,
        "PlaceHouseBets": PLAYERS,
        "MakeHouseDecision": PLAYERS,
        "WatchTable": PLAYERS,
        "SpectateTable": ANY_CALLER,
        "GetTableSnapshot": ANY_CALLER,
        "MutePlayer": SUPPORT | OPERATIONS,
        "CloseTable": OPERATIONS,
    },
)


def timings_from(settings: TableSettings) -> Timings:
    return Timings(
        action_seconds=settings.action_seconds,
        time_bank_seconds=settings.time_bank_seconds,
        time_bank_keep_seconds=settings.time_bank_keep_seconds,
        handover_grace_seconds=settings.handover_grace_seconds,
        countdown_seconds=settings.countdown_seconds,
        showdown_seconds=settings.showdown_seconds,
        seed_reveal_seconds=settings.seed_reveal_seconds,
        retry_initial_seconds=settings.retry_initial_seconds,
        retry_max_seconds=settings.retry_max_seconds,
        command_queue_size=settings.command_queue_size,
        watch_queue_size=settings.watch_queue_size,
        enqueue_timeout_seconds=settings.request_timeout_seconds,
        room_refresh_seconds=settings.room_refresh_seconds,
        seat_reserve_seconds=settings.seat_reserve_seconds,
        sit_out_seconds=settings.sit_out_seconds,
        full_reveal_rooms=frozenset(settings.full_reveal_rooms),
        timeout_hands_to_sit_out=settings.timeout_hands_to_sit_out,
        spectator_delay_seconds=settings.spectator_delay_seconds,
        max_spectators=settings.max_spectators,
        max_streams_per_player=settings.max_streams_per_player,
        spectators_need_access=settings.spectators_need_access,
    )


SHARD_DIRECTORY = "poker.lobby.v1.ShardDirectoryService"
# The lobby (service: lobby) asks the one shard for its tables' figures when there is no Redis.
# The lobby (service: lobby) asks the shard to open the table JoinTable routes a player to.
DIRECTORY_ACCESS = AccessPolicy.for_service(
    SHARD_DIRECTORY,
    {"ListShardTables": services(ServiceName.LOBBY), "OpenTable": services(ServiceName.LOBBY)},
)


def shard_directory_service(shard: TableShard, access: TableAccess) -> GrpcService:
    servicer = ShardDirectoryServicer(shard, access)
    return GrpcService(
        SHARD_DIRECTORY,
        lambda server: shard_directory_pb2_grpc.add_ShardDirectoryServiceServicer_to_server(servicer, server),
    )


def table_service(
    shard: TableShard,
    access: TableAccess,
    viewers: ViewerStreams,
    mutes: RedisMuteBoard | None = None,
    *,
    view_recheck_seconds: float = 5.0,
) -> GrpcService:
    servicer = unimplemented_servicer(
        table_pb2_grpc.TableServiceServicer,
        SERVICE_NAME,
        TableServicer(shard, access, viewers, mutes, view_recheck_seconds=view_recheck_seconds),
    )
    return GrpcService(SERVICE_NAME, lambda server: _add_table_service(servicer, server))


class _Handlers:
    """Takes the generated registration's method handlers instead of a server."""

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        self.handlers = dict(handlers)


def _message_or_bytes(message: table_pb2.SpectateTableResponse | bytes) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def _add_table_service(servicer: Any, server: Any) -> None:
    """The generated registration, except that SpectateTable also writes bytes as they are: the table
    serialises each public update once for all its spectators, not once per stream (issue 28)."""
    taken = _Handlers()
    table_pb2_grpc.add_TableServiceServicer_to_server(servicer, taken)
    handlers = taken.handlers
    handlers["SpectateTable"] = handlers["SpectateTable"]._replace(response_serializer=_message_or_bytes)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)


def house_setup(
    settings: TableSettings, cashier: cashier_pb2_grpc.CashierServiceStub, redis_client: Any = None
) -> HouseSetup:
    """House-game tables: the round journal and their clocks. With Redis the journal is shared by every
    shard and fenced by the room's token (the shard that takes a room over resumes its open rounds);
    without, a file of the one shard that survives its restart."""
    journal: Journal
    if redis_client is not None:
        journal = RedisJournal(redis_client, shard_id=settings.shard_id, prefix=settings.registry_prefix)
    else:
        path = settings.house_journal or str(settings.data_dir / f"house-rounds-{settings.shard_id}.jsonl")
        journal = FileJournal(Path(path))
    return HouseSetup(
        journal=journal,
        timings=HouseTimings(
            decision_seconds=settings.house_decision_seconds,
            retry_initial_seconds=settings.retry_initial_seconds,
            retry_max_seconds=settings.retry_max_seconds,
            watch_queue_size=settings.watch_queue_size,
            bank_minimum=settings.house_bank_minimum,
            handover_grace_seconds=settings.handover_grace_seconds,
            keep_finished_rounds=settings.house_keep_finished_rounds,
        ),
        cashier=HouseCashier(cashier),
    )


async def assemble(settings: TableSettings, *, clock: Clock = WALL_CLOCK) -> Assembly:
    """The shard and its API. `clock`: the tables' time (ports/clock.py); the wall's but in tests."""
    token = ServiceTokenSource(
        TokenKeys.from_settings(settings.auth_keys), SERVICE_SUBJECT, ttl_seconds=TOKEN_TTL_SECONDS
    )
    timeout = settings.request_timeout_seconds
    tls = TlsFiles.from_settings(settings)
    channels = {
        name: create_channel(
            address,
            timeout_seconds=timeout,
            token=token,
            tls=tls,
            tls_check_seconds=settings.tls_reload_seconds,
        )
        for name, address in (
            ("lobby", settings.lobby_address),
            ("cashier", settings.cashier_address),
            ("fairness", settings.fairness_address),
            ("history", settings.history_address),
        )
    }
    registry: ShardRegistry | None = None
    lease: ShardLease | None = None
    event_log: HandEventLog
    file_log: FileEventLog | None = None
    redis_client = None
    directory: RedisTableDirectory | None = None
    if settings.redis_url:
        # With Redis: a lease in the registry, rooms by rendezvous hashing, a fenced log per hand.
        redis_client = create_redis(settings.redis_url)
        redis_registry = RedisShardRegistry(
            redis_client, prefix=settings.registry_prefix, lease_seconds=settings.lease_seconds
        )
        me = ShardInfo(settings.shard_id, settings.advertise_address or settings.address)
        # The shard hands the rooms it loses over itself, once their hands are over (shard.py).
        lease = ShardLease(redis_registry, me, hands_over=True)
        await lease.start()
        registry = redis_registry
        event_log = RedisEventLog(redis_client, shard_id=settings.shard_id, prefix=settings.registry_prefix)
        directory = RedisTableDirectory(redis_client, prefix=settings.registry_prefix)
    else:
        # The one shard's hand logs in a file: a restarted shard goes on with the hands it was running.
        file_log = FileEventLog(settings.data_dir / f"table-hands-{settings.shard_id}.jsonl")
        event_log = file_log
    # Settled hands' records until history has them: in Redis, or a file of this shard without it.
    file_outbox: FileOutbox | None = None
    outbox: RecordOutbox
    if redis_client is not None:
        outbox = RedisOutbox(redis_client, prefix=settings.registry_prefix)
    else:
        file_outbox = FileOutbox(settings.data_dir / f"table-records-{settings.shard_id}.jsonl")
        outbox = file_outbox
    rooms = LobbyRoomSource(lobby_pb2_grpc.LobbyServiceStub(channels["lobby"]))
    # Maintenance switches by polling (docs/lobby.md): the Redis board, or the lobby's GetMaintenance.
    # Until the first read succeeds no new hand starts (fail closed).
    read = RedisMaintenanceBoard(redis_client, prefix=settings.registry_prefix).read if redis_client else None
    watcher = MaintenanceWatcher(read or rooms.read_maintenance, interval=settings.maintenance_poll_seconds)
    await watcher.start()
    chat = ChatGuard(burst=settings.chat_burst, per_minute=settings.chat_per_minute)
    mutes: RedisMuteBoard | None = None
    if redis_client is not None:
        # Chat mutes reach every shard through Redis within one poll.
        mutes = RedisMuteBoard(
            redis_client,
            chat,
            prefix=settings.registry_prefix,
            interval=settings.maintenance_poll_seconds,
            clock=clock,
        )
        await mutes.start()
    shard = TableShard(
        rooms=rooms,
        cashier=CashierClient(cashier_pb2_grpc.CashierServiceStub(channels["cashier"])),
        fairness=FairnessClient(fairness_pb2_grpc.FairnessServiceStub(channels["fairness"])),
        history=HistoryRecordSink(history_pb2_grpc.HistoryServiceStub(channels["history"])),
        event_log=event_log,
        registry=registry,
        shard_id=settings.shard_id,
        ownership_check_seconds=settings.lease_seconds / 3,
        directory=directory,
        maintenance=watcher,
        timings=timings_from(settings),
        history_queue_size=settings.history_queue_size,
        close_empty_after_seconds=settings.close_empty_table_seconds,
        chat=chat,
        house=house_setup(settings, cashier_pb2_grpc.CashierServiceStub(channels["cashier"]), redis_client),
        outbox=outbox,
        lease=lease,
        # A room waits this long at rest before it goes to its next owner, so a client's retry still
        # finds this shard's memory of its answer. Without Redis there is no next owner (the one
        # shard opens its rooms again when it restarts, with a fresh memory): a stop needs no wait.
        handover_quiet_seconds=settings.request_timeout_seconds if redis_client is not None else 0.0,
        clock=clock,
    )
    await shard.start()
    table_access = TableAccess(shard, rooms, clock=clock.now)
    # Streams to callers without a seat share what the seated players' reserve leaves.
    viewers = ViewerStreams(
        max_viewer_streams=settings.max_concurrent_streams - settings.seated_stream_reserve,
        per_account_at_table=settings.spectator_streams_per_account,
    )
    held = lease
    forget_metrics = table_metrics.watch_shard(
        table_metrics.WatchedShard(
            shard_id=settings.shard_id,
            lease_held=(lambda: held.held) if held is not None else (lambda: True),
            open_tables=lambda: {"cash": len(shard.tables()), "house": len(shard.house_tables())},
            queues={"reveal": shard.reveals, "history": shard.records},
            # Only the live tables: a room handed over or a table closed takes its figures along.
            house_banks=lambda: [table.bank_read for table in shard.house_tables().values()],
            players=lambda: [table.players() for table in shard.tables().values()],
        ),
        bank_minimum=settings.house_bank_minimum,
    )

    async def close() -> None:
        forget_metrics()
        await shard.stop()
        if file_outbox is not None:
            file_outbox.close()
        if file_log is not None:
            file_log.close()
        await watcher.stop()
        if mutes is not None:
            await mutes.stop()
        if lease is not None:
            await lease.stop()
        if redis_client is not None:
            await redis_client.aclose()
        for channel in channels.values():
            await channel.close()

    async def drain() -> None:
        await shard.drain(settings.drain_seconds)

    return Assembly(
        services=[
            table_service(
                shard, table_access, viewers, mutes, view_recheck_seconds=settings.view_recheck_seconds
            ),
            shard_directory_service(shard, table_access),
        ],
        access=ACCESS.merged(DIRECTORY_ACCESS),
        close=close,
        drain=drain,
    )
