"""One table shard process: its tables (one actor each), the rooms it owns, the after-hand queues.

Ownership comes from the shard registry (`service_runtime.shard_registry`): without Redis the one
shard owns every room; with Redis a room belongs to the live shard the registry resolves, the shard
tells its hand log the room's fencing token, re-checks its rooms every `ownership_check_seconds`
and drops the tables of rooms it lost (their next request finds the new owner through the lobby).
The shard opens the first table of each room it owns at start; any other well-formed table of a room (`<room_id>.<n>`, the lobby names the next one when
every table is full) is opened on first use (SitDown, WatchTable, ...). After each settled hand the
seed is revealed and then the hand record goes to history, each through its own retrying queue, so
neither a fairness nor a history outage stops play.

Orderly handovers (issue 26): a room this shard owns but should not keep (rendezvous hashing gives it
to another live shard, or the shard drains on SIGTERM) starts no new hand; once every table of it is
between hands the shard stops them (seat sessions stay open in the cashier) and releases the room in
the registry, which hands it to its new owner at once. `drain` does that for every room, bounded by
the drain time; a hand or house round still running at the bound is left to the next owner, which
goes on with it (a takeover).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from redis import exceptions as redis_errors

from poker.table.v1 import table_pb2
from service_runtime.errors import AlreadyExists, DomainError, FailedPrecondition, NotFound, Unavailable
from service_runtime.shard_registry import (
    RedisShardRegistry,
    ShardInfo,
    ShardLease,
    ShardRegistry,
    SingleShardRegistry,
    choose_shard,
)
from service_runtime.structured_logging import get_logger
from service_runtime.table_directory import (
    MaintenanceSwitches,
    MaintenanceWatcher,
    RedisTableDirectory,
    TableFigures,
    parse_table_id,
    table_id_for,
)
from service_runtime.tasks import cancel_and_wait
from services.table import hand_trace
from services.table import metrics as table_metrics
from services.table.cash.actor import TableActor
from services.table.cash.hand_record import SeenPositions, seen_positions
from services.table.cash.settlement import AfterHand
from services.table.house.house_admission import HouseAdmission
from services.table.house.house_journal import MemoryJournal
from services.table.house.house_round import HouseRoom
from services.table.house.house_table import HouseTable, HouseTimings, Journal, house_room_from_pb
from services.table.idempotency import AnswerMemory
from services.table.log.event_log import HandEventLog
from services.table.log.record_outbox import MemoryOutbox, RecordOutbox
from services.table.log.retry_queue import RetryingQueue
from services.table.ownership.table import Table
from services.table.ports.clock import WALL_CLOCK, Clock
from services.table.ports.dependencies import CashierClient, FairnessClient, HouseCashier
from services.table.ports.history_sink import HandRecordSink
from services.table.ports.remote import is_unavailable
from services.table.ports.rooms import RoomSource, room_of_table
from services.table.streams.chat import ChatGuard
from services.table.timings import Timings

log = get_logger("table.shard")

# Numbers in a row with no open seat session after which a room's extra tables are not looked for.
EXTRA_TABLE_PROBE_GAP = 3
# How often a drain looks for rooms whose tables are between hands (so each room moves at once).
DRAIN_POLL_SECONDS = 0.05
MAX_TABLES_PER_ROOM = 1000


@dataclass(frozen=True)
class HouseSetup:
    """What house-game tables need beyond the cash tables' dependencies (issue 16)."""

    journal: Journal = field(default_factory=MemoryJournal)
    timings: HouseTimings = field(default_factory=HouseTimings)
    cashier: HouseCashier | None = None


class TableShard:
    def __init__(
        self,
        *,
        rooms: RoomSource,
        cashier: CashierClient,
        fairness: FairnessClient,
        history: HandRecordSink,
        event_log: HandEventLog,
        timings: Timings,
        history_queue_size: int = 10_000,
        registry: ShardRegistry | None = None,
        shard_id: str = "table-0",
        ownership_check_seconds: float = 1.0,
        directory: RedisTableDirectory | None = None,
        maintenance: MaintenanceWatcher | None = None,
        close_empty_after_seconds: float = 60.0,
        chat: ChatGuard | None = None,
        house: HouseSetup | None = None,
        outbox: RecordOutbox | None = None,
        lease: ShardLease | None = None,
        handover_quiet_seconds: float = 0.0,
        clock: Clock = WALL_CLOCK,
    ) -> None:
        # Every time and timer of the shard and its tables (ports/clock.py).
        self.clock = clock
        self._outbox: RecordOutbox = outbox or MemoryOutbox()
        # CloseTable's answers by (caller, request id).
        self._closings = AnswerMemory(clock=clock.now)
        # Orderly handovers and the drain (issue 26): the lease (withdrawn from the candidates on a
        # drain), whether the shard drains, and the rooms whose tables are stopping to be released.
        self._lease = lease
        # A room is released only once its tables have been between hands this long: a caller's
        # retry of the call that ended the hand or round (its answer lost on the way) still finds
        # this shard's memory of the answer, not a new owner that never saw the call.
        self._handover_quiet_seconds = handover_quiet_seconds
        self._at_rest_since: dict[str, float] = {}
        self.draining = False
        self._releasing: set[str] = set()
        self._handover_lock = asyncio.Lock()
        self._close_empty_after = close_empty_after_seconds
        self.chat = chat or ChatGuard()  # chat rate limits and mutes, shared by the shard's tables
        # House-game tables (issue 16): their own actors and journal (the cover is the ledger's).
        self._house = house or HouseSetup()
        self._house_tables: dict[str, HouseTable] = {}
        self._directory = directory
        self._maintenance = maintenance
        self._registry: ShardRegistry = registry or SingleShardRegistry(ShardInfo(shard_id, "local"))
        self._shard_id = shard_id
        self._ownership_check_seconds = ownership_check_seconds
        self._checker: asyncio.Task[None] | None = None
        self._rooms = rooms
        self._cashier = cashier
        self._fairness = fairness
        self._history = history
        self._event_log = event_log
        self._timings = timings
        self._tables: dict[str, TableActor] = {}
        self._adopted: set[str] = set()
        self._opening: dict[str, asyncio.Task[TableActor | HouseTable]] = {}
        self._starter: asyncio.Task[None] | None = None
        self.reveals: RetryingQueue[AfterHand] = RetryingQueue(
            "reveal",
            self._reveal,
            max_size=history_queue_size,
            initial_backoff=timings.retry_initial_seconds,
            max_backoff=timings.retry_max_seconds,
        )
        self.records: RetryingQueue[AfterHand] = RetryingQueue(
            "history",
            self._record,
            max_size=history_queue_size,
            initial_backoff=timings.retry_initial_seconds,
            max_backoff=timings.retry_max_seconds,
        )

    async def start(self) -> None:
        self.reveals.start()
        self.records.start()
        self._starter = asyncio.create_task(self._open_owned_rooms(), name="open-owned-rooms")
        self._checker = asyncio.create_task(self._check_ownership(), name="check-ownership")

    async def stop(self) -> None:
        for task in (self._starter, self._checker):
            await cancel_and_wait(task)
        for actor in list(self._tables.values()):
            await actor.stop()
        for house in list(self._house_tables.values()):
            await house.stop()
        await self.reveals.stop()
        await self.records.stop()

    async def _open_owned_rooms(self) -> None:
        """Adopt the rooms this shard owns, at start and (with Redis) whenever it gains one; open the
        house tables of those rooms that the round journal holds open rounds of."""
        backoff = self._timings.retry_initial_seconds
        while True:
            try:
                await self._adopt_rooms()
                await self._open_house_rounds()
            except Exception as error:
                reason = error.reason if isinstance(error, DomainError) else type(error).__name__
                log.warning("rooms not adopted yet; retrying", reason=reason)
                await self.clock.sleep(backoff)
                backoff = min(self._timings.retry_max_seconds, backoff * 2)
                continue
            backoff = self._timings.retry_initial_seconds
            if isinstance(self._registry, SingleShardRegistry):
                return  # one shard owns every room for good
            await self.clock.sleep(self._ownership_check_seconds * 3)

    async def _adopt_rooms(self) -> None:
        """Open the first table of every room newly owned, and every other table of it that still
        has open seat sessions in the cashier (players seated when the room's last owner died or
        restarted): they are seated again, or cashed out, without waiting for one of them to call."""
        rooms = await self._rooms.list_rooms()
        owners = await self._registry.owners_of([room.room_id for room in rooms])
        owned = {
            room_id
            for room_id, owner in owners.items()
            if owner is not None and owner.shard.shard_id == self._shard_id
        }
        self._adopted &= owned
        for room_id in sorted(owned - self._adopted):
            await self._adopt_room(room_id)

    async def _adopt_room(self, room_id: str) -> None:
        if self.draining:
            return
        try:
            table = await self.any_table(table_id_for(room_id, 1))
            if table.has_seat_sessions:
                await self._open_seated_extra_tables(room_id)
        except DomainError as error:
            if is_unavailable(error):
                raise
            log.warning("could not open the room's tables", room_id=room_id, reason=error.reason)
        self._adopted.add(room_id)

    async def _open_house_rounds(self) -> None:
        """Open every house table of a room this shard owns that has open rounds in the journal (a
        round its last owner left running, a restart or a takeover): opening resumes the dealt ones
        and refunds the others, without waiting for their players to come back (their stakes sit in
        the house bank until then)."""
        if self.draining:
            return
        tables = [t for t in await self._house.journal.tables() if t not in self._house_tables]
        if not tables:
            return
        owners = await self._registry.owners_of(sorted({room_of_table(t) for t in tables}))
        for table_id in tables:
            owner = owners.get(room_of_table(table_id))
            if owner is None or owner.shard.shard_id != self._shard_id:
                continue
            try:
                await self.house_table(table_id)
            except DomainError as error:
                if is_unavailable(error):
                    raise
                log.warning("house table with open rounds not opened", table_id=table_id, reason=error.reason)

    async def _take_handovers(self) -> None:
        """Rooms another shard released to this one: opened now (seats from the cashier), not at
        the next adoption round, so their players wait for no lease."""
        if not isinstance(self._registry, RedisShardRegistry) or self.draining:
            return
        try:
            handed = await self._registry.take_handovers(self._shard_id)
        except (redis_errors.RedisError, OSError):
            log.warning("handover list not read")
            return
        for room_id in handed:
            log.info("room handed over to this shard", room_id=room_id)
            self._adopted.discard(room_id)
            try:
                await self._adopt_room(room_id)
            except DomainError as error:
                # The adoption rounds try again (the room is ours in the registry).
                log.warning("handed-over room not opened yet", room_id=room_id, reason=error.reason)

    async def _open_seated_extra_tables(self, room_id: str) -> None:
        # The lobby numbers a new table with the lowest free number, so seated tables are dense but
        # for the holes closed tables leave: stop after a few numbers in a row with nobody seated.
        number, empty_in_a_row = 2, 0
        while empty_in_a_row < EXTRA_TABLE_PROBE_GAP and number <= MAX_TABLES_PER_ROOM:
            table_id = table_id_for(room_id, number)
            if (
                table_id in self._tables
                or await self._cashier.open_sessions(table_id)
                or await self._outbox.kept(table_id)
            ):
                await self.table(table_id)
                empty_in_a_row = 0
            else:
                empty_in_a_row += 1
            number += 1

    async def _check_ownership(self) -> None:
        """Drop the tables of rooms this shard no longer owns (or whose log fenced them), close empty
        extra tables and publish the figures; one failed round is logged, never the end of the loop."""
        while True:
            await self.clock.sleep(self._ownership_check_seconds)
            try:
                await self._ownership_round()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("ownership round failed")

    async def _ownership_round(self) -> None:
        await self._take_handovers()
        await self._hand_over_rooms()
        await self._close_extra_empty_tables()
        await self._close_closed_tables()
        # Judge only the tables open before the owners were read: one opened meanwhile (a player
        # came back after a takeover, say) has a room the answer may not name, and is not lost.
        judged: list[tuple[str, Table]] = [
            *self._tables.items(),
            *self._house_tables.items(),
        ]
        rooms = sorted({actor.room.room_id for _, actor in judged})
        if not rooms:
            return
        try:
            owners = await self._registry.owners_of(rooms)
        except Exception:
            log.warning("ownership check failed")
            return
        for table_id, actor in judged:
            if self.running(table_id) is not actor:
                continue  # closed or replaced while the owners were read
            owner = owners.get(actor.room.room_id)
            # The same shard with another token lost the room and won it back meanwhile (frozen past
            # its lease, say): this copy of the table is stale (its seats may have been cashed out
            # at the other shard); it closes and the room's tables open again from the cashier.
            if (
                actor.fenced
                or owner is None
                or owner.shard.shard_id != self._shard_id
                or owner.fencing_token != actor.fencing_token
            ):
                log.warning("room lost: closing the table", table_id=table_id)
                self._tables.pop(table_id, None)
                self._house_tables.pop(table_id, None)
                # If the room is (or comes back) ours, adoption opens its seated tables again.
                self._adopted.discard(actor.room.room_id)
                await actor.stop()
        await self._publish_figures()

    # ------------------------------------------------------------------ handovers and the drain

    def _room_tables(self) -> dict[str, list[Table]]:
        rooms: dict[str, list[Table]] = {}
        tables: list[tuple[str, Table]] = [
            *self._tables.items(),
            *self._house_tables.items(),
        ]
        for table_id, table in tables:
            rooms.setdefault(room_of_table(table_id), []).append(table)
        return rooms

    async def _rooms_to_hand_over(self, rooms: list[str]) -> set[str] | None:
        """The rooms this shard serves but should not keep: all of them on a drain; with Redis, those
        rendezvous hashing gives to another live shard (their owner in the registry is still this one
        until it releases them). None: the registry could not be read (Redis away)."""
        if self.draining:
            return set(rooms)
        if not rooms or not isinstance(self._registry, RedisShardRegistry) or self._lease is None:
            return set()
        try:
            live = [shard.shard_id for shard in await self._registry.live_shards()]
        except (redis_errors.RedisError, OSError):
            return None
        if self._shard_id not in live:
            return set()  # this shard's own lease is away for the moment: judge next round
        return {room for room in rooms if choose_shard(room, live) not in (None, self._shard_id)}

    async def _hand_over_rooms(self, *, force: bool = False) -> None:
        """Stop starting hands in the rooms to hand over; release each whose tables are all between
        hands (`force`: release them all; a running hand or house round goes on at the next owner)."""
        async with self._handover_lock:
            by_room = self._room_tables()
            leaving = await self._rooms_to_hand_over(sorted(by_room))
            if leaving is None:
                # Redis away: nothing moves this round (a room that had stopped dealing stays so).
                log.warning("live shards not read; no handover this round")
                return
            for room_id, tables in sorted(by_room.items()):
                if room_id not in leaving:
                    self._at_rest_since.pop(room_id, None)
                    # The shard that was to get it is gone again (its lease lapsed): deal on here.
                    for table in tables:
                        table.keep()
                    continue
                for table in tables:
                    table.hand_over()
                if not all(table.between_hands for table in tables):
                    self._at_rest_since.pop(room_id, None)
                    if not force:
                        continue
                at_rest = self._at_rest_since.setdefault(room_id, self.clock.now())
                if force or self.clock.now() - at_rest >= self._handover_quiet_seconds:
                    self._at_rest_since.pop(room_id, None)
                    await self._release_room(room_id, tables, force=force)

    async def _release_room(self, room_id: str, tables: Sequence[Table], *, force: bool = False) -> None:
        # No table of the room opens here from now on (SHARD_DRAINING) until the registry names
        # the new owner; then calls here get SHARD_NOT_OWNER with its address.
        if not force:
            # Inside each cash table's actor, after any command under way (a sit-down waiting for
            # the cashier, say): still between hands, it closes; else the next round tries again.
            for table in tables:
                if not await table.quiet_for_handover():
                    return
        self._releasing.add(room_id)
        try:
            running = [t.table_id for t in tables if not t.between_hands]
            for table in tables:
                if self._tables.get(table.table_id) is table:
                    del self._tables[table.table_id]
                if self._house_tables.get(table.table_id) is table:
                    del self._house_tables[table.table_id]
                self._adopted.discard(room_id)
                await table.stop()
            token = max(table.fencing_token for table in tables)
            owner = None
            if isinstance(self._registry, RedisShardRegistry):
                try:
                    owner = await self._registry.release(room_id, self._shard_id, token)
                except (redis_errors.RedisError, OSError):
                    # The lease's end moves the room instead (the shard gives it up on exit).
                    log.warning("room not released; its lease will move it", room_id=room_id)
            table_metrics.room_handed_over(at_bound=bool(running))
            log.info(
                "room handed over",
                room_id=room_id,
                to=owner.shard.shard_id if owner is not None else None,
                tables=len(tables),
                hands_left_running=running,
            )
        finally:
            self._releasing.discard(room_id)

    async def drain(self, bound_seconds: float) -> None:
        """SIGTERM: start no new hand or house round anywhere, play the running ones to their end
        (at most `bound_seconds`), hand every room over as its tables come to rest, then return.
        Rooms still playing at the bound are released all the same (their hands are the next
        owner's to void, as on a takeover); seat sessions stay open in the cashier throughout."""
        self.draining = True
        log.info("drain started", tables=len(self._tables), house_tables=len(self._house_tables))
        await cancel_and_wait(self._starter)
        if self._lease is not None:
            await self._lease.withdraw()
        deadline = self.clock.now() + bound_seconds
        while self._tables or self._house_tables:
            if self.clock.now() >= deadline:
                log.warning(
                    "drain time is up: the hands still running are left to the next owner",
                    tables=sorted(t for t, a in self._tables.items() if not a.between_hands),
                )
                await self._hand_over_rooms(force=True)
                break
            await self._hand_over_rooms()
            await self.clock.sleep(DRAIN_POLL_SECONDS)
        log.info("drain finished")

    async def _close_extra_empty_tables(self) -> None:
        """Close a room's extra table (not its first) once it has been empty for a while.

        The check and the close run inside the table's actor, and the table leaves this shard's map
        there, so no later command reaches the closed copy; the room's next table opens on demand.
        """
        for table_id, actor in list(self._tables.items()):
            parsed = parse_table_id(table_id)
            if parsed is None or parsed[1] == 1 or actor.empty_for() < self._close_empty_after:
                continue

            try:
                closed = await actor.call(
                    functools.partial(actor.close_if_empty, self._forgetter(table_id, actor))
                )
            except DomainError:
                continue
            if closed:
                log.info("extra table empty: closed", table_id=table_id)
                await actor.stop()
                if self._directory is not None:
                    with contextlib.suppress(Exception):
                        await self._directory.withdraw(actor.room.room_id, table_id)

    async def close_after_hand(
        self, caller: str, request_id: str, table_id: str, table: Callable[[], Awaitable[TableActor]]
    ) -> table_pb2.CloseTableResponse:
        """CloseTable: the table closes after its hand (`TableActor.close_after_hand`); once per
        request id: a retry gets the first answer (the table, closed by then, is not opened again
        for it), the same id for another table is a conflict: here while the first answer is
        remembered, and for good (30 days) through the id's binding in the log (`bind_request`),
        across restarts and shards."""

        key = (caller, "CloseTable", request_id)
        known = self._closings.known(key, table_id)
        if known is not None:
            return known  # type: ignore[no-any-return]
        actor = await table()  # a table that does not exist: NOT_FOUND, and nothing is bound
        bound = await self._event_log.bind_request(f"CloseTable:{caller}", request_id, table_id)
        if bound != table_id:
            # Not remembered as this id's answer: the id stays the first table's (its retry answers).
            raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the request id was used with other fields")
        return await self._closings.once(
            key, table_id, lambda: actor.call(lambda: actor.close_after_hand(request_id))
        )

    async def _close_closed_tables(self) -> None:
        """Tables closing at an operator's word (CloseTable) whose seats are all cashed out: closed,
        their streams ended with TABLE_CLOSED, their figures withdrawn."""
        for table_id, actor in list(self._tables.items()):
            if not actor.closing:
                continue
            try:
                closed = await actor.call(
                    functools.partial(actor.close_if_done, self._forgetter(table_id, actor))
                )
            except DomainError:
                continue
            if closed:
                log.info("table closed after its hand", table_id=table_id)
                await actor.stop()
                if self._directory is not None:
                    with contextlib.suppress(Exception):
                        await self._directory.withdraw(actor.room.room_id, table_id)

    def _forgetter(self, table_id: str, actor: TableActor) -> Callable[[], None]:
        def forget() -> None:
            if self._tables.get(table_id) is actor:
                del self._tables[table_id]

        return forget

    async def _publish_figures(self) -> None:
        """With Redis: the lobby reads live table figures from the table directory (short TTL)."""
        if self._directory is None:
            return
        try:
            await self._directory.publish_all(self.figures())
        except Exception:
            log.warning("table figures not published")

    def tables(self) -> dict[str, TableActor]:
        return dict(self._tables)

    def figures(self, room_id: str = "") -> list[TableFigures]:
        """Figures of the open tables of a room (every room when empty), for the lobby."""
        return [
            actor.figures(self._shard_id)
            for table_id, actor in sorted(self._tables.items())
            if not room_id or actor.room.room_id == room_id
        ]

    async def table(self, table_id: str) -> TableActor:
        """The table's actor, opened (room read from the lobby, seats recovered) on first use."""
        actor = await self.any_table(table_id)
        if isinstance(actor, HouseTable):
            raise FailedPrecondition("HOUSE_GAME_TABLE", "this table plays a house game against the dealer")
        return actor

    async def house_table(self, table_id: str) -> HouseTable:
        """The house-game table; NOT_A_HOUSE_TABLE for a cash table."""
        actor = await self.any_table(table_id)
        if not isinstance(actor, HouseTable):
            raise FailedPrecondition("NOT_A_HOUSE_TABLE", "this table is a cash table")
        return actor

    def running(self, table_id: str) -> TableActor | HouseTable | None:
        """The table if it is open on this shard now; never opens one (services/table/ownership/table_access.py)."""
        return self._tables.get(table_id) or self._house_tables.get(table_id)

    async def any_table(self, table_id: str) -> TableActor | HouseTable:
        actor: TableActor | HouseTable | None = self._tables.get(table_id) or self._house_tables.get(table_id)
        if actor is not None:
            return actor
        # Every caller of a table being opened waits for the same opening. An opening that already
        # ended is not joined (its table may have closed since), and only its own entry is removed
        # when it ends: removing by name could drop a newer opening and let a second actor start.
        opening = self._opening.get(table_id)
        if opening is None or opening.done():
            opening = asyncio.create_task(self._open(table_id), name=f"open-{table_id}")
            self._opening[table_id] = opening
            opening.add_done_callback(functools.partial(self._opened, table_id))
        return await asyncio.shield(opening)

    def _opened(self, table_id: str, opening: asyncio.Task[TableActor | HouseTable]) -> None:
        if self._opening.get(table_id) is opening:
            del self._opening[table_id]

    async def _open(self, table_id: str) -> TableActor | HouseTable:
        room_id = room_of_table(table_id)
        try:
            owner = await self._registry.owner_of(room_id)
        except (redis_errors.RedisError, OSError) as error:
            raise Unavailable(
                "UNAVAILABLE", "the shard registry is unavailable", {"dependency": "redis"}
            ) from error
        if owner.shard.shard_id != self._shard_id:
            raise FailedPrecondition(
                "SHARD_NOT_OWNER", "another shard serves this table", {"address": owner.shard.address}
            )
        if self.draining or room_id in self._releasing:
            raise Unavailable("SHARD_DRAINING", "this shard hands the table's room to another shard; retry")
        try:
            room = await self._rooms.get_room(room_id)
        except NotFound as error:
            house = await self._house_room(room_id)
            if house is None:
                raise NotFound("TABLE_NOT_FOUND", "no such table", {"field": "table_id"}) from error
            # The rounds a previous owner (or this shard's last life) left open, read after the
            # registry named this shard with its token: that owner can add nothing to them now.
            left_open = await self._house.journal.open_entries(table_id)
            last_views = await self._house.journal.last_views(table_id)
            opened = self._open_house(table_id, *house)
            opened.fencing_token = owner.fencing_token
            opened.show_last_views(last_views)
            await opened.resume_open(left_open)
            try:
                await opened.resend_kept_records({str(e["round_id"]) for e in left_open})
            except DomainError as error:
                # The records wait in the outbox for the table's next opening.
                log.warning("kept round records not read", table_id=table_id, reason=error.reason)
            return opened
        own = getattr(self._event_log, "own", None)
        if own is not None:
            own(room_id, owner.fencing_token)
        actor = TableActor(
            table_id,
            room,
            cashier=self._cashier,
            fairness=self._fairness,
            event_log=self._event_log,
            after_hand=self.reveals.put,
            rooms=self._rooms,
            maintenance=self._switches,
            timings=self._timings,
            chat=self.chat,
            outbox=self._outbox,
            clock=self.clock,
        )
        actor.fencing_token = owner.fencing_token
        actor.start()
        self._tables[table_id] = actor
        return actor

    async def _house_room(self, room_id: str) -> tuple[HouseRoom, HouseAdmission] | None:
        try:
            entry = await self._rooms.get_room_entry(room_id)
        except NotFound:
            return None
        room = house_room_from_pb(entry)
        if room is None:
            return None
        return room, HouseAdmission(self._rooms, room, int(entry.revision))

    def _open_house(self, table_id: str, room: HouseRoom, admission: HouseAdmission) -> HouseTable:
        if self._house.cashier is None:
            raise NotFound("TABLE_NOT_FOUND", "this shard runs no house-game tables", {"field": "table_id"})
        house = HouseTable(
            table_id,
            room,
            cashier=self._house.cashier,
            fairness=self._fairness,
            journal=self._house.journal,
            after_round=self.reveals.put,
            timings=self._house.timings,
            maintenance=self._switches,
            admit=admission.admit,
            outbox=self._outbox,
            clock=self.clock,
        )
        self._house_tables[table_id] = house
        return house

    def house_tables(self) -> dict[str, HouseTable]:
        return dict(self._house_tables)

    def _switches(self, room_id: str) -> MaintenanceSwitches:
        if self._maintenance is None:
            return MaintenanceSwitches()
        return self._maintenance.current.for_room(room_id, self.clock.now())

    async def _reveal(self, job: AfterHand) -> None:
        try:
            with hand_trace.after_hand(job.hand_id, "reveal"):
                await self._fairness.reveal(job.hand_id, seen=job.seen or await self._seen_again(job))
        except DomainError as error:
            if is_unavailable(error):
                raise
            # The record still goes to history; the hand's reveal is for the operator to look at.
            log.error("reveal refused", hand_id=job.hand_id, reason=error.reason)
        self.records.put(job)

    async def _seen_again(self, job: AfterHand) -> SeenPositions | None:
        """A record sent again after a takeover lost the deck that says who saw which position: a
        hand not yet revealed gives it again (SealHand is idempotent); one already revealed keeps
        the positions it was revealed with."""
        try:
            deck = await self._fairness.seal(job.hand_id)
        except DomainError as error:
            if is_unavailable(error):
                raise
            return None
        return seen_positions(job.record, deck)

    async def _record(self, job: AfterHand) -> None:
        with hand_trace.after_hand(job.hand_id, "record"):
            await self._history.record(job.record)
        if job.table_id:
            try:
                await self._outbox.done(job.table_id, job.hand_id)
            except DomainError as error:
                # Kept a while longer: the next owner of the table sends it once more (stored once).
                log.warning(
                    "recorded hand not cleared from the outbox", hand_id=job.hand_id, reason=error.reason
                )
