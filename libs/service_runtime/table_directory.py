"""What table shards publish about their live tables, and the maintenance switches they obey.

Both sides use this module: a table shard publishes each open table's public figures (seats with
display names and stacks, average pot, hands per hour) and the lobby reads them to list tables and
pick one to join. With Redis, a shard writes one key per table with a short TTL (default 5 s, the
shard republishes every second or on change) and a per-room sorted set of table ids scored by
expiry, so a shard that dies drops out of the lists within the TTL. Without Redis the lobby asks the
one shard over `poker.lobby.v1.ShardDirectoryService/ListShardTables` and gets the same figures.

Maintenance goes the other way: the lobby writes the whole set of switches as one key (no TTL) on
every change and at start; shards poll it every second (`MaintenanceWatcher`). Without Redis a shard
polls the lobby's GetMaintenance(all_rooms=true) instead. Polling, not pub/sub: a shard that was
away for a moment still converges within one interval, and there is no subscription to lose.

Keys under the prefix (default `poker:`): `table:<table_id>` (JSON of `TableFigures`),
`room-tables:<room_id>` (sorted set: table id -> expiry in ms), `maintenance` (JSON).

Table ids are `<room_id>.<n>` with n = 1, 2, ...: tables 1..table_count of a room always stand
open; when every table is full the lobby names the next free number, and the owning shard opens that
table on the first SitDown (see `parse_table_id`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import redis.asyncio as redis

from poker.lobby.v1 import lobby_pb2
from service_runtime.shard_registry import DEFAULT_PREFIX
from service_runtime.tasks import cancel_and_wait

DEFAULT_TABLE_TTL_SECONDS = 5.0
DEFAULT_POLL_SECONDS = 1.0
MAX_TABLE_NUMBER = 10_000


def table_id_for(room_id: str, number: int) -> str:
    """The id of table `number` (from 1) of a room."""
    return f"{room_id}.{number}"


def parse_table_id(table_id: str) -> tuple[str, int] | None:
    """(room_id, number) of a well-formed table id, else None. Room ids hold no '.'."""
    room_id, dot, number = table_id.rpartition(".")
    if not dot or not room_id or not number.isdigit() or number.startswith("0"):
        return None
    value = int(number)
    return (room_id, value) if 1 <= value <= MAX_TABLE_NUMBER else None


@dataclass(frozen=True, slots=True)
class SeatFigures:
    """One taken seat: public data only (never cards)."""

    seat: int
    display_name: str
    stack: int
    sitting_out: bool = False


@dataclass(frozen=True, slots=True)
class TableFigures:
    """A live table as its shard publishes it."""

    table_id: str
    room_id: str
    shard_id: str
    seats: int
    taken_seats: tuple[SeatFigures, ...] = ()
    waiting_players: int = 0
    hand_in_progress: bool = False
    average_pot: int = 0
    hands_per_hour: int = 0
    # Seconds since the epoch when the shard published this.
    published_at: float = field(default_factory=time.time)
    # The players seated or being seated here (a seat held while the cashier opens its session): the
    # lobby counts a player it routed here until the figures list them. Between the shard and the
    # lobby only (Redis, ListShardTables): never in a summary a player or staff member reads.
    player_ids: tuple[str, ...] = ()

    @property
    def seated_players(self) -> int:
        return len(self.taken_seats)

    @property
    def free_seats(self) -> int:
        return max(self.seats - self.seated_players, 0)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> TableFigures:
        """Fields this version does not know are skipped (a newer shard's figures, mid-rollout)."""
        raw = json.loads(text)
        known = {f.name for f in fields(cls)}
        seat_fields = {f.name for f in fields(SeatFigures)}
        raw = {k: v for k, v in raw.items() if k in known}
        raw["taken_seats"] = tuple(
            SeatFigures(**{k: v for k, v in seat.items() if k in seat_fields})
            for seat in raw.get("taken_seats", ())
        )
        raw["player_ids"] = tuple(raw.get("player_ids", ()))
        return cls(**raw)


class RedisTableDirectory:
    """Publish (shard side) and read (lobby side) table figures in Redis, each with a short TTL."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl_seconds: float = DEFAULT_TABLE_TTL_SECONDS,
    ) -> None:
        self._redis = client
        self._prefix = prefix
        self.ttl_seconds = ttl_seconds

    def _table_key(self, table_id: str) -> str:
        return f"{self._prefix}table:{table_id}"

    def _room_key(self, room_id: str) -> str:
        return f"{self._prefix}room-tables:{room_id}"

    async def publish(self, figures: TableFigures) -> None:
        await self.publish_all([figures])

    async def publish_all(self, every: Sequence[TableFigures]) -> None:
        """Each table's figures with their TTL, in one round trip (a shard publishes all its tables
        every ownership round: one Redis write a table cost the shard ~4% of its CPU at 8 tables)."""
        if not every:
            return
        ttl_ms = int(self.ttl_seconds * 1000)
        expires_ms = int(time.time() * 1000) + ttl_ms
        async with self._redis.pipeline(transaction=True) as pipe:
            for figures in every:
                pipe.set(self._table_key(figures.table_id), figures.to_json(), px=ttl_ms)
                pipe.zadd(self._room_key(figures.room_id), {figures.table_id: expires_ms})
            await pipe.execute()

    async def withdraw(self, room_id: str, table_id: str) -> None:
        """A table closed: take it off the lists at once."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(self._table_key(table_id))
            pipe.zrem(self._room_key(room_id), table_id)
            await pipe.execute()

    async def tables_of_room(self, room_id: str) -> list[TableFigures]:
        """The room's tables whose figures have not expired, by table number."""
        now_ms = int(time.time() * 1000)
        key = self._room_key(room_id)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(key, "-inf", now_ms)
            pipe.zrange(key, 0, -1)
            _, members = await pipe.execute()
        ids = [m.decode() if isinstance(m, bytes) else str(m) for m in members]
        if not ids:
            return []
        found = [
            TableFigures.from_json(v) for v in await self._redis.mget([self._table_key(i) for i in ids]) if v
        ]
        return sorted(found, key=_table_order)


def _table_order(figures: TableFigures) -> tuple[int, str]:
    parsed = parse_table_id(figures.table_id)
    return (parsed[1] if parsed else MAX_TABLE_NUMBER + 1, figures.table_id)


# --- Maintenance switches. ---


@dataclass(frozen=True, slots=True)
class MaintenanceSwitches:
    no_new_seats: bool = False
    no_new_hands: bool = False
    message: str = ""
    # A scheduled window, wall seconds since the epoch: in force from `starts_at` (None: from when
    # set) until `ends_at` (None: until switched off). The lobby and every shard read it on their
    # own clocks, so a window opens and closes everywhere within the clocks' skew.
    starts_at: float | None = None
    ends_at: float | None = None

    def in_force(self, now: float) -> bool:
        """Inside the window (always, without one)."""
        return (self.starts_at is None or self.starts_at <= now) and (
            self.ends_at is None or now < self.ends_at
        )

    def at(self, now: float) -> MaintenanceSwitches:
        """What stops at `now`: these switches inside their window, nothing outside it."""
        if not self.in_force(now):
            return MaintenanceSwitches()
        return MaintenanceSwitches(self.no_new_seats, self.no_new_hands, self.message)

    def to_dict(self) -> dict[str, Any]:
        """Without the window's keys when there is none (a shard of before windows reads it)."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    def combined(self, other: MaintenanceSwitches) -> MaintenanceSwitches:
        """Either scope's switch stops; the room's message wins when it has one."""
        return MaintenanceSwitches(
            self.no_new_seats or other.no_new_seats,
            self.no_new_hands or other.no_new_hands,
            other.message or self.message,
        )


@dataclass(frozen=True, slots=True)
class MaintenanceState:
    """Every switch in force: the lobby-wide ones and each room's."""

    lobby: MaintenanceSwitches = MaintenanceSwitches()
    rooms: Mapping[str, MaintenanceSwitches] = field(default_factory=dict)

    def for_room(self, room_id: str, now: float) -> MaintenanceSwitches:
        """What applies at a table of the room at `now`: lobby-wide OR the room's own switches, each
        inside its window."""
        return self.lobby.at(now).combined(self.rooms.get(room_id, MaintenanceSwitches()).at(now))

    def to_json(self) -> str:
        return json.dumps(
            {"lobby": self.lobby.to_dict(), "rooms": {k: v.to_dict() for k, v in sorted(self.rooms.items())}},
            separators=(",", ":"),
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> MaintenanceState:
        raw: dict[str, Any] = json.loads(text)
        return cls(
            lobby=MaintenanceSwitches(**raw.get("lobby", {})),
            rooms={k: MaintenanceSwitches(**v) for k, v in raw.get("rooms", {}).items()},
        )


class RedisMaintenanceBoard:
    """The lobby writes the switches here; shards read them (see `MaintenanceWatcher`)."""

    def __init__(self, client: redis.Redis, *, prefix: str = DEFAULT_PREFIX) -> None:
        self._redis = client
        self._key = f"{prefix}maintenance"

    async def publish(self, state: MaintenanceState) -> None:
        await self._redis.set(self._key, state.to_json())

    async def read(self) -> MaintenanceState:
        value = await self._redis.get(self._key)
        return MaintenanceState() if value is None else MaintenanceState.from_json(value)


class MaintenanceWatcher:
    """Keeps `current` within one poll interval of the source (Redis board, or the lobby's RPC).

    Until the first successful read `current` stops new seats and hands (`ready` is False), so a
    shard that cannot learn the switches never seats anybody against an operator's will.
    """

    STARTING = MaintenanceState(lobby=MaintenanceSwitches(True, True, "starting"))

    def __init__(
        self, read: Callable[[], Awaitable[MaintenanceState]], *, interval: float = DEFAULT_POLL_SECONDS
    ) -> None:
        self._read = read
        self.interval = interval
        self.current = self.STARTING
        self.ready = False
        self._task: asyncio.Task[None] | None = None

    async def poll_once(self) -> MaintenanceState:
        self.current = await self._read()
        self.ready = True
        return self.current

    async def start(self) -> None:
        with contextlib.suppress(Exception):
            await self.poll_once()
        self._task = asyncio.create_task(self._loop(), name="maintenance-watcher")

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            # Keep the last known switches while the source is away; the next poll retries.
            with contextlib.suppress(Exception):
                await self.poll_once()

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None


def tables_by_room(tables: Sequence[TableFigures]) -> dict[str, list[TableFigures]]:
    grouped: dict[str, list[TableFigures]] = {}
    for figures in sorted(tables, key=_table_order):
        grouped.setdefault(figures.room_id, []).append(figures)
    return grouped


# --- The same figures on the wire (ShardDirectoryService, ListTables). ---


def figures_to_summary(figures: TableFigures, *, published: bool = True) -> lobby_pb2.TableSummary:
    """A table's figures as `poker.lobby.v1.TableSummary` (what ListShardTables answers)."""
    summary = lobby_pb2.TableSummary(
        table_id=figures.table_id,
        room_id=figures.room_id,
        seated_players=figures.seated_players,
        seats=figures.seats,
        waiting_players=figures.waiting_players,
        hand_in_progress=figures.hand_in_progress,
        taken_seats=[
            lobby_pb2.SeatSummary(
                seat=s.seat, display_name=s.display_name, stack=s.stack, sitting_out=s.sitting_out
            )
            for s in figures.taken_seats
        ],
        average_pot=figures.average_pot,
        hands_per_hour=figures.hands_per_hour,
        shard_id=figures.shard_id,
    )
    if published:
        summary.update_time.FromNanoseconds(int(figures.published_at * 1e9))
    return summary


def summary_to_figures(summary: lobby_pb2.TableSummary, player_ids: tuple[str, ...] = ()) -> TableFigures:
    """`player_ids`: the shard directory's list beside the summary (never in the summary itself)."""
    return TableFigures(
        table_id=summary.table_id,
        room_id=summary.room_id,
        shard_id=summary.shard_id,
        seats=summary.seats,
        taken_seats=tuple(
            SeatFigures(s.seat, s.display_name, s.stack, s.sitting_out) for s in summary.taken_seats
        ),
        waiting_players=summary.waiting_players,
        hand_in_progress=summary.hand_in_progress,
        average_pot=summary.average_pot,
        hands_per_hour=summary.hands_per_hour,
        published_at=summary.update_time.ToNanoseconds() / 1e9
        if summary.HasField("update_time")
        else time.time(),
        player_ids=player_ids,
    )
