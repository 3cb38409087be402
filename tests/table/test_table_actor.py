"""The table actor alone, with stand-in dependencies: bounded watcher queues, the command queue."""

from __future__ import annotations

import asyncio
from typing import Any

from poker.common.v1 import common_pb2
from poker.table.v1 import table_pb2
from poker_engine.config import RakeRule, Variant
from services.table.cash.actor import TableActor
from services.table.log.event_log import LocalEventLog
from services.table.ports.dependencies import SeatSession
from services.table.ports.rooms import Room
from services.table.streams.chat import ChatGuard
from services.table.timings import Timings

ROOM = Room(
    room_id="r",
    variant=Variant.NO_LIMIT,
    pool=common_pb2.CHIP_POOL_GRAM,
    seats=6,
    small_blind=5,
    big_blind=10,
    step=5,
    min_buy_in=100,
    max_buy_in=1000,
    rake=RakeRule(0, 0),
)


class EmptyCashier:
    def __init__(self, sessions: tuple[SeatSession, ...] = ()) -> None:
        self.sessions = list(sessions)

    async def open_sessions(self, table_id: str) -> list[SeatSession]:
        return self.sessions


def actor(queue_size: int = 4, *sessions: SeatSession, spectator_delay: float = 20.0) -> TableActor:
    timings = Timings(
        action_seconds=1,
        time_bank_seconds=1,
        countdown_seconds=0,
        retry_initial_seconds=0.01,
        retry_max_seconds=0.1,
        command_queue_size=8,
        watch_queue_size=queue_size,
        spectator_delay_seconds=spectator_delay,
    )
    fake: Any = EmptyCashier(sessions)
    return TableActor(
        "r.1",
        ROOM,
        cashier=fake,
        fairness=fake,
        event_log=LocalEventLog(),
        after_hand=lambda job: None,
        rooms=fake,
        timings=timings,
        chat=ChatGuard(burst=1000),
    )


async def test_a_slow_watcher_holds_at_most_its_queue_and_gets_a_fresh_snapshot() -> None:
    # Ann's seat session is open: the table seats her again as it opens; only seated players chat,
    # and only a seated watcher sees the table live (without a seat it is the spectators' view).
    table = actor(4, SeatSession("r.1:s", "ann", 1, 500))
    table.start()
    try:
        watcher = await table.call(lambda: table.watch("ann"))
        for n in range(50):
            await table.call(lambda n=n: table.chat("ann", f"c{n}", f"hello {n}", ""))
        assert watcher.queue.qsize() <= 4
        assert watcher.snapshots_sent > 0
        items = [watcher.queue.get_nowait() for _ in range(watcher.queue.qsize())]
        # After the overflow the first thing it reads is a full view (no event), then fresh events.
        snapshot_at = [i for i, m in enumerate(items) if not m.events]
        assert snapshot_at
        assert items[-1].events[-1].chat.text == "hello 49"
    finally:
        await table.stop()


async def test_commands_run_one_at_a_time_in_order() -> None:
    table = actor()
    table.start()
    try:
        seen: list[int] = []

        async def command(n: int) -> int:
            seen.append(n)
            await asyncio.sleep(0)
            seen.append(n)
            return n

        results = await asyncio.gather(*(table.call(lambda n=n: command(n)) for n in range(20)))
        assert results == list(range(20))
        assert seen == [n for n in range(20) for _ in range(2)]
    finally:
        await table.stop()


async def test_a_stopped_table_ends_its_streams_so_their_clients_ask_the_lobby_again() -> None:
    from services.table.streams.table_streams import STREAM_CLOSED

    table = actor(4, SeatSession("r.1:s", "ann", 1, 500))
    table.start()
    watcher = await table.call(lambda: table.watch("ann"))
    await table.stop()
    updates = [watcher.queue.get_nowait() for _ in range(watcher.queue.qsize())]
    assert updates[-1] is STREAM_CLOSED
    assert table.closed_reason == "TABLE_CLOSED"


async def test_spectators_of_a_table_share_one_serialised_message_per_release() -> None:
    # Issue 28: each public update is serialised once for all spectators, not once per stream, and the
    # updates that came due together (a burst of chat) leave in one message, in order.
    table = actor(4, SeatSession("r.1:s", "ann", 1, 500), spectator_delay=0.2)
    table.start()
    try:
        fans = [await table.call(lambda n=n: table.spectate(f"fan{n}")) for n in range(3)]
        for fan in fans:
            fan.queue.get_nowait()  # the delayed snapshot each starts from
        for n in range(5):
            await table.call(lambda n=n: table.chat("ann", f"c{n}", f"hello {n}", ""))
        async with asyncio.timeout(5):
            first = [await fan.queue.get() for fan in fans]
        assert all(isinstance(m, bytes) for m in first)
        assert all(m is first[0] for m in first)  # the same bytes, serialised once
        message = table_pb2.SpectateTableResponse.FromString(first[0])  # type: ignore[arg-type]
        chats = [e.chat.text for e in message.events if e.HasField("chat")]
        assert chats == [f"hello {n}" for n in range(5)]
        assert [e.sequence for e in message.events] == sorted(e.sequence for e in message.events)
    finally:
        await table.stop()


async def test_a_slow_spectator_gets_the_newest_delayed_view_alone_instead_of_what_it_missed() -> None:
    # The slow-consumer rule holds for the batched, pre-serialised feed: a spectator that does not
    # read holds at most its queue; after an overflow the first thing it reads is a view alone.
    table = actor(2, SeatSession("r.1:s", "ann", 1, 500), spectator_delay=0.05)
    table.start()
    try:
        fan = await table.call(lambda: table.spectate("fan"))
        for n in range(6):
            await table.call(lambda n=n: table.chat("ann", f"c{n}", f"hello {n}", ""))
            await asyncio.sleep(0.35)  # past the batch window: one release per chat
        assert fan.snapshots_sent > 0
        assert fan.queue.qsize() <= 2
        items = [fan.queue.get_nowait() for _ in range(fan.queue.qsize())]
        messages = [table_pb2.SpectateTableResponse.FromString(m) for m in items]  # type: ignore[arg-type]
        # Since the last overflow: the delayed view alone, then at most the one update after it.
        assert not messages[0].events
        assert messages[0].view.seats
        assert all(m.events[-1].chat.text == "hello 5" for m in messages[1:])
    finally:
        await table.stop()
