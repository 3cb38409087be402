"""poker-bots against a real table shard (the stand-in lobby routes them to it): what a bot does when
the table or the lobby, not the bot, decides where it sits."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator

from poker.lobby.v1 import lobby_pb2
from poker_bots.bot import Behaviour, Bot, Connections, RoomTerms
from poker_bots.credentials import MintedCredentials
from poker_bots.stats import RunStats
from poker_bots.strategies import RandomLegal
from service_runtime.testing import DEV_KEYS
from tests.table.conftest import ServiceProcess, TableWorld, nl_room, table_world, unique, wait_for


@contextlib.asynccontextmanager
async def two_bots(
    world: TableWorld, room: lobby_pb2.Room, table_id: str, stats: RunStats, *, timeout_rate: float
) -> AsyncIterator[list[Bot]]:
    """Two funded random bots of `room`, given `table_id`, that never leave, playing for the block;
    stopped, their chips cashed out and their connections closed after it."""
    connections = Connections(world.settings.lobby_address, world.backends["cashier"].address)
    bots = _bots(world, room, table_id, connections, stats, timeout_rate)
    for bot in bots:
        await world.fund(bot.player_id, 10_000)
    stop = asyncio.Event()
    tasks = [asyncio.create_task(bot.run(stop)) for bot in bots]
    try:
        yield bots
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
        for bot in bots:
            await bot.finish()
        await connections.close()


def _bots(
    world: TableWorld,
    room: lobby_pb2.Room,
    table_id: str,
    connections: Connections,
    stats: RunStats,
    timeout_rate: float,
) -> list[Bot]:
    credentials = MintedCredentials(DEV_KEYS)
    bots = []
    for n in range(2):
        player = unique(f"bot{n}")
        terms = RoomTerms(room.room_id, room.pool, 1_000)
        behaviour = Behaviour(timeout_rate=timeout_rate, leave_rate=0.0)
        bots.append(
            Bot(
                player,
                terms,
                table_id,
                RandomLegal(),
                connections,
                credentials,
                stats,
                behaviour,
                random.Random(n),
            )
        )
    return bots


async def test_a_bot_the_table_sat_out_sits_in_again_and_the_table_deals_on(
    backends: dict[str, ServiceProcess],
) -> None:
    """Two bots that let the clock act on every turn: the table sits each out after three hands lost
    to the clock (docs/table.md). A bot sat out comes back (SitIn), as a player presses "I'm back";
    before, it stayed out for good and a table of bots stopped dealing (the fault e2e run under load:
    bots routing again after a shard's death lost their turns to the clock)."""
    async with table_world(
        backends, action_seconds=0.2, time_bank_seconds=0.0, countdown_seconds=0.0
    ) as world:
        room = nl_room(unique("bots"))
        table_id = world.add_room(room)
        stats = RunStats()
        async with two_bots(world, room, table_id, stats, timeout_rate=1.0):
            await wait_for(lambda: stats.sit_ins >= 2, within=60, interval=0.1)
            dealt = len(stats.hands)
            await wait_for(lambda: len(stats.hands) > dealt + 1, within=30, interval=0.1)
        assert stats.unexpected_errors() == {}, stats.summary()
        assert (await world.audit()).balanced


async def test_a_bot_whose_table_is_full_plays_where_the_lobby_routes_it(
    backends: dict[str, ServiceProcess],
) -> None:
    """A bot given a table that is full (or that nobody opened) asks the lobby for the room, sits at
    the table the lobby names and watches that one (before stop 33 it kept watching the table it was
    given: TABLE_NOT_FOUND and round the lobby again, 1,470 watches in bench_cluster's 28 s)."""
    async with table_world(backends, action_seconds=1.0, countdown_seconds=0.0) as world:
        room = nl_room(unique("routed"))
        world.add_room(room)
        world.lobby.full.add(f"{room.room_id}.2")
        stats = RunStats()
        async with two_bots(world, room, f"{room.room_id}.2", stats, timeout_rate=0.0) as bots:
            await wait_for(lambda: len(stats.hands) >= 3, within=60, interval=0.1)
        assert [bot.table_id for bot in bots] == [f"{room.room_id}.1"] * 2
        assert stats.sits >= 2  # more when a bot lost its stack and sat again (same table)
        # Each bot asked once for its table and once for the room, then stayed (its seat is at .1).
        assert sorted(world.lobby.joins).count(f"{room.room_id}.2") == 2, world.lobby.joins
        assert "watch" not in " ".join(stats.errors), stats.summary()
        assert stats.unexpected_errors() == {}, stats.summary()
        assert (await world.audit()).balanced
