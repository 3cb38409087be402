"""The shard's bookkeeping of open tables under concurrency (the issue 17 occupancy bug).

Found in the end-to-end run: after a shard died, the survivor's ownership round read who owns the
rooms of its open tables; a table opened while it waited was absent from the answer, so the round
took it for lost and stopped it. The table was reading Redis at that moment and the cancel was lost
(Python 3.11's wait_for inside redis-py, see service_runtime.tasks), so `stop()` waited for ever:
the round never ended, the shard published no figures (the lobby showed its tables empty), and the
stopped table ran on beside the new one its players opened. These tests drive a real `TableShard`
with in-process stand-ins whose timing the test controls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from service_runtime.shard_registry import RoomOwner, ShardInfo
from service_runtime.table_directory import TableFigures
from services.table.log.event_log import LocalEventLog
from services.table.ownership.shard import TableShard
from services.table.ports.rooms import Room, room_from_pb
from services.table.timings import Timings
from tests.table.conftest import nl_room
from tests.table.test_table_actor import EmptyCashier

ME = ShardInfo("table-a", "127.0.0.1:1")


class Rooms:
    def __init__(self, *room_ids: str) -> None:
        self.rooms: dict[str, Room] = {}
        for room_id in room_ids:
            room = room_from_pb(nl_room(room_id))
            assert room is not None
            self.rooms[room_id] = room
        # Each get_room waits here when set: an `_open` in flight for as long as the test wants.
        self.gate: asyncio.Event | None = None

    async def get_room(self, room_id: str) -> Room:
        if self.gate is not None:
            await self.gate.wait()
        return self.rooms[room_id]

    async def list_rooms(self) -> list[Room]:
        return list(self.rooms.values())


class Registry:
    """Owns every room for `ME`; `owners_of` can be held open by the test; `token` is every room's."""

    def __init__(self) -> None:
        self.hold: asyncio.Event | None = None
        self.asked: asyncio.Event = asyncio.Event()
        self.token = 1

    async def live_shards(self) -> list[ShardInfo]:
        return [ME]

    async def owner_of(self, room_id: str) -> RoomOwner:
        return RoomOwner(room_id, ME, self.token)

    async def owners_of(self, room_ids: Sequence[str]) -> dict[str, RoomOwner]:
        answer = {room_id: RoomOwner(room_id, ME, self.token) for room_id in room_ids}
        self.asked.set()
        if self.hold is not None:
            await self.hold.wait()
        return answer


class Directory:
    def __init__(self) -> None:
        self.published: dict[str, TableFigures] = {}

    async def publish(self, figures: TableFigures) -> None:
        self.published[figures.table_id] = figures

    async def publish_all(self, every: list[TableFigures]) -> None:
        for figures in every:
            await self.publish(figures)

    async def withdraw(self, room_id: str, table_id: str) -> None:
        self.published.pop(table_id, None)


TIMINGS = Timings(
    action_seconds=5,
    time_bank_seconds=1,
    countdown_seconds=0,
    retry_initial_seconds=0.05,
    retry_max_seconds=0.2,
    command_queue_size=16,
    watch_queue_size=16,
)


def make_shard(rooms: Rooms, registry: Registry, directory: Directory) -> TableShard:
    async def nothing(*_: Any, **__: Any) -> None:
        return None

    return TableShard(
        rooms=rooms,  # type: ignore[arg-type]
        cashier=EmptyCashier(),  # type: ignore[arg-type]
        fairness=None,  # type: ignore[arg-type]
        history=nothing,  # type: ignore[arg-type]
        event_log=LocalEventLog(),
        timings=TIMINGS,
        registry=registry,  # type: ignore[arg-type]
        shard_id=ME.shard_id,
        ownership_check_seconds=0.05,
        directory=directory,  # type: ignore[arg-type]
    )


async def test_a_table_opened_while_the_owners_are_read_is_not_closed_as_lost() -> None:
    rooms, registry, directory = Rooms("alpha", "beta"), Registry(), Directory()
    shard = make_shard(rooms, registry, directory)
    try:
        await shard.table("alpha.1")
        registry.hold = asyncio.Event()
        # The round asked who owns "alpha" (its only open table) and waits for the answer ...
        round_ = asyncio.create_task(shard._ownership_round())
        await asyncio.wait_for(registry.asked.wait(), 5)
        # ... while a player opens "beta.1".
        beta = await shard.table("beta.1")
        registry.hold.set()
        await asyncio.wait_for(round_, 5)
        assert shard.tables().get("beta.1") is beta, "a table opened during the round was closed"
        await shard._ownership_round()
        assert set(directory.published) == {"alpha.1", "beta.1"}
    finally:
        await shard.stop()


async def test_a_caller_right_after_an_opening_ended_never_gets_a_closed_table() -> None:
    """An opening stays listed until its done-callback runs, one loop turn after it ended. A table
    closed in between (its room lost) must not be handed out by joining that finished opening."""
    rooms, registry, directory = Rooms("gamma"), Registry(), Directory()
    shard = make_shard(rooms, registry, directory)
    try:
        rooms.gate = asyncio.Event()
        first = asyncio.create_task(shard.table("gamma.1"))
        await asyncio.sleep(0)  # the opening waits for the room
        got: list[object] = []

        async def closes_and_calls() -> None:
            # Runs in the same loop turn as the opening's end, before its done-callback.
            closed = shard._tables.pop("gamma.1")
            got.append(closed)
            got.append(await shard.table("gamma.1"))

        rooms.gate.set()  # wakes the opening first ...
        await asyncio.create_task(closes_and_calls())  # ... then this, in the same turn
        closed, handed_out = got
        assert handed_out is not closed, "a caller got the table that had just closed"
        assert shard.tables()["gamma.1"] is handed_out
        assert await first is closed
    finally:
        await shard.stop()


class LogThatLosesACancel(LocalEventLog):
    """The first `live_hand` loses the cancel it gets, as Python 3.11's wait_for inside redis-py does."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = asyncio.Event()
        self.lost = 0

    async def live_hand(self, table_id: str) -> str | None:
        self.reading.set()
        if not self.lost:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.lost += 1
        return await super().live_hand(table_id)


async def test_a_table_stops_even_when_a_cancel_is_lost() -> None:
    """Before the fix, `stop()` of such a table waited for ever (and the ownership round with it,
    so the shard published no figures), while the table ran on as a second copy."""
    rooms, registry, directory = Rooms("delta"), Registry(), Directory()
    event_log = LogThatLosesACancel()
    shard = make_shard(rooms, registry, directory)
    shard._event_log = event_log
    try:
        actor = await shard.table("delta.1")
        await asyncio.wait_for(event_log.reading.wait(), 5)
        stopping = asyncio.create_task(actor.stop())
        # Not wait_for: on 3.11 it would cancel stop() at the deadline, which ends the table too.
        done, _ = await asyncio.wait({stopping}, timeout=5)
        assert stopping in done, "stop() still waits for a table that lost its cancel"
        assert event_log.lost == 1
    finally:
        await shard.stop()


async def test_a_table_whose_room_moved_away_and_back_meanwhile_is_closed_as_stale() -> None:
    """Issue 30: a shard frozen (SIGSTOP) past its lease lost its rooms and, resumed, won them back by
    rendezvous, with a token two higher. Its tables had gone on believing they owned the room (the
    round compared shard ids only) with seats the other shard had meanwhile cashed out."""
    rooms, registry, directory = Rooms("omega"), Registry(), Directory()
    shard = make_shard(rooms, registry, directory)
    try:
        stale = await shard.table("omega.1")
        await shard._ownership_round()
        assert shard.tables().get("omega.1") is stale, "a table whose room stayed was closed"
        registry.token += 2  # away to another shard and back
        await shard._ownership_round()
        assert "omega.1" not in shard.tables(), "the stale table was kept"
        fresh = await shard.table("omega.1")
        assert fresh is not stale
        assert fresh.fencing_token == registry.token
    finally:
        await shard.stop()
