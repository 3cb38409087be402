"""Table tests run against real services: the cashier (PostgreSQL) and fairness as their own processes,
a table shard on port 0 with fast clocks, and two small stand-ins over real gRPC: a lobby that serves
GetRoom/ListRooms from a dict (the lobby's catalogue is built on another branch) and a history that
keeps what RecordHand receives (likewise).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2_grpc
from poker.history.v1 import history_pb2, history_pb2_grpc
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2_grpc
from service_runtime.access import ANY_CALLER, AccessPolicy
from service_runtime.auth import STAFF_ROLES, Role
from service_runtime.errors import FailedPrecondition, NotFound, PermissionDenied
from service_runtime.interceptors import Limits
from service_runtime.server import GrpcService, RunningServer, create_server
from service_runtime.testing import DEV_KEYS, auth_metadata, throwaway_postgres_database
from services.table.assembly import assemble
from services.table.settings import TableSettings

ADMIN = auth_metadata("operator", *STAFF_ROLES)
# Service tokens name the calling service (issue 10): purchases are the payments gateway's, seat
# sessions the table's. These work before and after that change.
PAYMENTS = auth_metadata("payments", Role.SERVICE)
AS_TABLE = auth_metadata("table", Role.SERVICE)


def _listening_record(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdout is not None
    seen: list[str] = []
    for line in process.stdout:
        seen = [*seen[-19:], line]
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("event") == "listening":
            return dict(record)
    # What it said before it died (a bad setting, a port taken meanwhile): the cause, not just the code.
    last = "".join(seen)
    raise AssertionError(f"service exited with {process.wait()} before listening; its last lines:\n{last}")


@dataclass
class ServiceProcess:
    name: str
    env: dict[str, str]
    process: subprocess.Popen[str] | None = None
    port: int = 0
    metrics_port: int | None = None
    errors: list[str] = field(default_factory=list)
    # Every line the service writes also goes here when set (the e2e cluster keeps each one's log).
    log_file: Path | None = None
    # The address it listens on and is reached at; a command its own is run under (`ip netns exec
    # <namespace>`: the e2e partition runs a shard in a network namespace; that command execs it).
    host: str = "127.0.0.1"
    prefix: tuple[str, ...] = ()

    def start(self, port: int = 0) -> None:
        env = {
            **self.env,
            f"POKER_{self.name.upper()}_HOST": self.host,
            f"POKER_{self.name.upper()}_PORT": str(port),
        }
        self.process = subprocess.Popen(
            [*self.prefix, sys.executable, "-m", f"services.{self.name}"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        listening = _listening_record(self.process)
        self.port = int(listening["address"].rsplit(":", 1)[1])
        # The metrics endpoint's port when it is on (POKER_METRICS_PORT=0 picks one; the cluster bench).
        self.metrics_port = listening.get("metrics_port")
        # Keep reading its output so the pipe never fills and blocks the service; errors are kept.
        threading_drain(self.process, self.errors, self.log_file)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def threading_drain(process: subprocess.Popen[str], errors: list[str], log_file: Path | None = None) -> None:
    import threading

    def drain() -> None:
        assert process.stdout is not None
        with contextlib.ExitStack() as stack:
            log = stack.enter_context(log_file.open("a", encoding="utf-8")) if log_file else None
            for line in process.stdout:
                if log is not None:
                    log.write(line)
                    log.flush()
                if '"level": "error"' in line or "Traceback" in line:
                    errors.append(line)

    threading.Thread(target=drain, daemon=True).start()


@pytest.fixture(scope="module")
def backends(
    postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, ServiceProcess]]:
    """The cashier on a fresh PostgreSQL database and fairness on its embedded SQLite, as processes."""
    folder: Path = tmp_path_factory.mktemp("table-backends")
    base = {**os.environ, "POKER_LOG_FORMAT": "json", "POKER_DATA_DIR": str(folder)}
    with throwaway_postgres_database(postgres_server_url, prefix="table_cashier") as cashier_db:
        cashier = ServiceProcess("cashier", {**base, "POKER_CASHIER_DATABASE_URL": cashier_db})
        fairness = ServiceProcess("fairness", base)
        try:
            cashier.start()
            fairness.start()
            yield {"cashier": cashier, "fairness": fairness}
        finally:
            cashier.stop()
            fairness.stop()
            for process in (cashier, fairness):
                for line in process.errors:
                    print(f"{process.name}: {line}", file=sys.stderr)


class TcpProxy:
    """A loopback TCP proxy the test can take down (drops every connection, refuses new ones) and up,
    or hold (connections stay open, nothing is passed on until `release`: a service that is slow)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.down = False
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def take_down(self) -> None:
        self.down = True
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    def bring_up(self) -> None:
        self.down = False

    def hold(self) -> None:
        self._flowing.clear()

    def release(self) -> None:
        self._flowing.set()

    async def close(self) -> None:
        self.release()
        self.take_down()
        if self._server is not None:
            self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    await self._flowing.wait()
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers.discard(writer)
        self._writers.discard(up_writer)


def full_policy(service: str) -> AccessPolicy:
    names = [m.name for m in descriptor_pool.Default().FindServiceByName(service).methods]
    return AccessPolicy.for_service(service, dict.fromkeys(names, ANY_CALLER))


class StandInLobby(lobby_pb2_grpc.LobbyServiceServicer):
    """GetRoom and ListRooms over a dict of rooms, as the lobby's catalogue answers them."""

    def __init__(self) -> None:
        self.rooms: dict[str, lobby_pb2.Room] = {}
        self.not_allowed: set[str] = set()
        self.no_new_hands: set[str] = set()
        # Rooms (room id) no player may see, as the lobby hides a private room from a stranger.
        self.hidden: set[str] = set()
        # The shard JoinTable routes every player to (the world's own), once it listens.
        self.table_address = ""
        # Tables JoinTable answers TABLE_FULL when asked for by id (a room's JoinTable routes to .1).
        self.full: set[str] = set()
        self.joins: list[str] = []  # the table id each JoinTable asked for ("" for the room's pick)

    async def JoinTable(  # noqa: N802
        self, request: lobby_pb2.JoinTableRequest, context: Any
    ) -> lobby_pb2.JoinTableResponse:
        if request.room_id not in self.rooms:
            raise NotFound("ROOM_NOT_FOUND", "no such room")
        self.joins.append(request.table_id)
        if request.table_id in self.full:
            raise FailedPrecondition("TABLE_FULL", "every seat of this table is taken")
        table_id = request.table_id or f"{request.room_id}.1"
        return lobby_pb2.JoinTableResponse(
            table_id=table_id, shard_id="shard-a", address=self.table_address, fencing_token=1
        )

    async def GetRoom(self, request: lobby_pb2.GetRoomRequest, context: Any) -> lobby_pb2.GetRoomResponse:  # noqa: N802
        room = self.rooms.get(request.room_id)
        if room is None:
            raise NotFound("ROOM_NOT_FOUND", "no such room")
        return lobby_pb2.GetRoomResponse(room=room)

    async def GetMaintenance(  # noqa: N802
        self, request: lobby_pb2.GetMaintenanceRequest, context: Any
    ) -> lobby_pb2.GetMaintenanceResponse:
        return lobby_pb2.GetMaintenanceResponse(
            rooms=[
                lobby_pb2.RoomMaintenance(room_id=r, maintenance=lobby_pb2.Maintenance(no_new_hands=True))
                for r in sorted(self.no_new_hands)
            ]
        )

    async def AuthorizeSeat(  # noqa: N802
        self, request: lobby_pb2.AuthorizeSeatRequest, context: Any
    ) -> lobby_pb2.AuthorizeSeatResponse:
        if request.room_id not in self.rooms:
            raise NotFound("ROOM_NOT_FOUND", "no such room")
        if request.player_id in self.not_allowed:
            raise PermissionDenied("NOT_ON_ALLOW_LIST", "private room")
        # As the lobby names a development id (a test player's): by itself.
        return lobby_pb2.AuthorizeSeatResponse(
            room_revision=1, display_name=request.suggested_name or request.player_id
        )

    async def AuthorizeView(  # noqa: N802
        self, request: lobby_pb2.AuthorizeViewRequest, context: Any
    ) -> lobby_pb2.AuthorizeViewResponse:
        room = self.rooms.get(request.room_id)
        if room is None or request.room_id in self.hidden:
            raise NotFound("ROOM_NOT_FOUND", "no such room")
        return lobby_pb2.AuthorizeViewResponse(room_revision=1, table_count=room.table_count)

    async def ListRooms(  # noqa: N802
        self, request: lobby_pb2.ListRoomsRequest, context: Any
    ) -> lobby_pb2.ListRoomsResponse:
        return lobby_pb2.ListRoomsResponse(rooms=sorted(self.rooms.values(), key=lambda r: r.room_id))


class StandInHistory(history_pb2_grpc.HistoryServiceServicer):
    """Keeps every RecordHand; `down` makes it answer UNAVAILABLE (an outage)."""

    def __init__(self) -> None:
        self.hands: dict[str, history_pb2.HandRecord] = {}
        self.down = False

    async def RecordHand(  # noqa: N802
        self, request: history_pb2.RecordHandRequest, context: Any
    ) -> history_pb2.RecordHandResponse:
        if self.down:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "history is down")
        already = request.hand.hand_id in self.hands
        self.hands[request.hand.hand_id] = request.hand
        return history_pb2.RecordHandResponse(already_recorded=already)


def nl_room(
    room_id: str,
    *,
    seats: int = 6,
    sb: int = 5,
    bb: int = 10,
    step: int = 5,
    rake_bp: int = 500,
    table_count: int = 1,
) -> lobby_pb2.Room:
    return lobby_pb2.Room(
        room_id=room_id,
        display_name=room_id,
        variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
        pool=common_pb2.CHIP_POOL_GRAM,
        seats_per_table=seats,
        blinds=lobby_pb2.BlindStakes(small_blind=sb, big_blind=bb, step=step),
        min_buy_in=200,
        max_buy_in=2000,
        rake_basis_points=rake_bp,
        rake_cap=30,
        table_count=table_count,
    )


def fl_room(room_id: str, *, seats: int = 6) -> lobby_pb2.Room:
    return lobby_pb2.Room(
        room_id=room_id,
        display_name=room_id,
        variant=common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM,
        pool=common_pb2.CHIP_POOL_MPX,
        seats_per_table=seats,
        limits=lobby_pb2.LimitStakes(small_bet=10, big_bet=20),
        min_buy_in=100,
        max_buy_in=1000,
        rake_basis_points=0,
        rake_cap=0,
    )


async def _nothing() -> None:
    return None


@dataclass
class TableWorld:
    """Everything a table test talks to, with the helpers it needs."""

    lobby: StandInLobby
    history: StandInHistory
    backends: dict[str, ServiceProcess]
    table_channel: grpc.aio.Channel
    cashier_channel: grpc.aio.Channel
    fairness_channel: grpc.aio.Channel
    settings: TableSettings
    proxies: dict[str, TcpProxy] = field(default_factory=dict)
    # What SIGTERM does to the shard process (service_runtime.server.serve): NOT_SERVING, the
    # shard's drain while RPCs are still served, the server's stop, the assembly's close.
    terminate: Callable[[], Awaitable[None]] = field(default=_nothing)
    # The plain port of the shard's gRPC server (health service included).
    port: int = 0

    @property
    def table(self) -> table_pb2_grpc.TableServiceStub:
        return table_pb2_grpc.TableServiceStub(self.table_channel)

    @property
    def cashier(self) -> cashier_pb2_grpc.CashierServiceStub:
        return cashier_pb2_grpc.CashierServiceStub(self.cashier_channel)

    @property
    def fairness(self) -> fairness_pb2_grpc.FairnessServiceStub:
        return fairness_pb2_grpc.FairnessServiceStub(self.fairness_channel)

    def add_room(self, room: lobby_pb2.Room) -> str:
        self.lobby.rooms[room.room_id] = room
        return f"{room.room_id}.1"

    async def fund(self, player: str, chips: int, pool: int = common_pb2.CHIP_POOL_GRAM) -> None:
        if pool == common_pb2.CHIP_POOL_GRAM:
            source, minor = cashier_pb2.PAYMENT_SOURCE_GRAM, chips * 10**6
        else:
            source, minor = cashier_pb2.PAYMENT_SOURCE_MPX, chips * 10**8
        await self.cashier.Purchase(
            cashier_pb2.PurchaseRequest(
                payment_reference=f"fund-{player}-{uuid.uuid4().hex[:8]}",
                player_id=player,
                source=source,
                amount_minor=minor,
            ),
            metadata=PAYMENTS,
        )

    async def wallet(self, player: str, pool: int = common_pb2.CHIP_POOL_GRAM) -> int:
        reply = await self.cashier.GetBalances(
            cashier_pb2.GetBalancesRequest(player_id=player), metadata=ADMIN
        )
        return next(w.balance for w in reply.wallets if w.pool == pool)

    async def audit(self) -> cashier_pb2.AuditConservationResponse:
        return await self.cashier.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)


@contextlib.asynccontextmanager
async def stand_in(servicer: Any, service: str, register: Any) -> AsyncIterator[RunningServer]:
    running, _ = await create_server(
        "127.0.0.1:0",
        services=[GrpcService(service, lambda server: register(servicer, server))],
        access=full_policy(service),
        token_keys=DEV_KEYS,
    )
    await running.start()
    try:
        yield running
    finally:
        await running.stop(grace_seconds=0.2)


def table_settings(
    cashier: str, fairness: str, lobby_port: int, history_port: int, **overrides: Any
) -> TableSettings:
    values: dict[str, Any] = {
        "port": 0,
        "lobby_address": f"127.0.0.1:{lobby_port}",
        "cashier_address": cashier,
        "fairness_address": fairness,
        "history_address": f"127.0.0.1:{history_port}",
        "action_seconds": 5.0,
        "time_bank_seconds": 2.0,
        "countdown_seconds": 0.05,
        # The next hand at once after a showdown (test_table_showdown_hold.py holds it).
        "showdown_seconds": 0.0,
        "retry_initial_seconds": 0.05,
        "retry_max_seconds": 0.5,
        "request_timeout_seconds": 5.0,
        # Each world its own folder for the shard's record outbox: the default `data` in the working
        # directory is shared by every test worker, whose compactions of one file raced.
        "data_dir": Path(tempfile.mkdtemp(prefix="table-world-")),
    }
    values.update(overrides)
    return TableSettings(**values)


@contextlib.asynccontextmanager
async def table_world(backends: dict[str, ServiceProcess], **overrides: Any) -> AsyncIterator[TableWorld]:
    # The server's bounds (the interceptor's Limits) follow the settings' stream and call keys.
    lobby, history = StandInLobby(), StandInHistory()
    async with (
        stand_in(
            lobby, "poker.lobby.v1.LobbyService", lobby_pb2_grpc.add_LobbyServiceServicer_to_server
        ) as lobby_server,
        stand_in(
            history, "poker.history.v1.HistoryService", history_pb2_grpc.add_HistoryServiceServicer_to_server
        ) as history_server,
    ):
        proxies = {name: TcpProxy(backends[name].port) for name in ("cashier", "fairness")}
        for proxy in proxies.values():
            await proxy.start()
        settings = table_settings(
            proxies["cashier"].address,
            proxies["fairness"].address,
            lobby_server.port,
            history_server.port,
            **overrides,
        )
        assembly = await assemble(settings)
        limits = Limits(
            settings.max_concurrent_rpcs,
            settings.max_concurrent_streams,
            settings.player_concurrent_calls,
            settings.player_concurrent_streams,
        )
        running, port = await create_server(
            "127.0.0.1:0",
            services=assembly.services,
            access=assembly.access,
            token_keys=DEV_KEYS,
            limits=limits,
        )
        await running.start()
        lobby.table_address = f"127.0.0.1:{port}"
        channels = [
            grpc.aio.insecure_channel(f"127.0.0.1:{port}"),
            grpc.aio.insecure_channel(backends["cashier"].address),
            grpc.aio.insecure_channel(backends["fairness"].address),
        ]
        stopped = False

        async def terminate() -> None:
            nonlocal stopped
            if stopped:
                return
            stopped = True
            await running.stop(grace_seconds=0.2, before_stop=assembly.drain)
            await assembly.close()

        world = TableWorld(
            lobby,
            history,
            backends,
            *channels,
            settings=settings,
            proxies=proxies,
            terminate=terminate,
            port=port,
        )
        try:
            yield world
        finally:
            for channel in channels:
                await channel.close()
            if not stopped:
                stopped = True
                await bounded_teardown(running.stop(grace_seconds=0.2), "the shard's server stop")
                await bounded_teardown(assembly.close(), "the shard's close")
            for proxy in proxies.values():
                await proxy.close()


# A shard's teardown ends within this, or the test fails saying where every task of the loop was
# (issue 39: one CI run sat 20 minutes after a house-table takeover test, and a hang says nothing).
TEARDOWN_SECONDS = 60.0


async def bounded_teardown(step: Awaitable[object], what: str) -> None:
    task = asyncio.ensure_future(step)
    done, _ = await asyncio.wait({task}, timeout=TEARDOWN_SECONDS)
    if task in done:
        task.result()
        return
    stacks = []
    for other in asyncio.all_tasks():
        if other is asyncio.current_task():
            continue
        frames = other.get_stack(limit=8)
        where = " <- ".join(f"{f.f_code.co_name}:{f.f_lineno}" for f in reversed(frames))
        stacks.append(f"{other.get_name()}: {where}")
    task.cancel()
    raise AssertionError(f"{what} did not end in {TEARDOWN_SECONDS:.0f} s; tasks:\n" + "\n".join(stacks))


@pytest.fixture
async def world(backends: dict[str, ServiceProcess]) -> AsyncIterator[TableWorld]:
    async with table_world(backends) as built:
        yield built


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def wait_for(predicate: Any, within: float = 10.0, interval: float = 0.02) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while True:
        value = predicate()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return
        if loop.time() > end:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(interval)
