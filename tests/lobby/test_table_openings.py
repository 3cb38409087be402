"""JoinTable is the one way a table beyond a room's standing ones opens, within a bound per room
(issue 23, item 6). On the old code JoinTable only named the next number (the shard opened whatever
number any call named), and nothing bounded how many tables a room ran."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import grpc
import pytest
import redis.asyncio as redis

from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from service_runtime.database import create_engine, create_session_factory
from service_runtime.shard_registry import RedisShardRegistry, ShardInfo
from service_runtime.table_directory import RedisTableDirectory, SeatFigures, TableFigures
from service_runtime.testing import auth_metadata, running_server
from services.lobby.assembly import ACCESS, lobby_service, lobby_servicer
from tests.lobby.conftest import ALICE, TABLE, expect_error

A = ShardInfo("shard-a", "127.0.0.1:7101")
ROOM = "nlhe-gram-classic"  # 4 seats, one standing table


class RecordingOpener:
    def __init__(self) -> None:
        self.opened: list[tuple[str, str]] = []

    async def open(self, address: str, table_id: str) -> None:
        self.opened.append((address, table_id))
        await asyncio.sleep(0.01)  # a call to the shard: other JoinTables run meanwhile


def _full(number: int) -> TableFigures:
    return TableFigures(
        table_id=f"{ROOM}.{number}",
        room_id=ROOM,
        shard_id=A.shard_id,
        seats=4,
        taken_seats=tuple(SeatFigures(seat, f"p{seat}", 1_000) for seat in range(4)),
    )


Routed = tuple[lobby_pb2_grpc.LobbyServiceStub, RecordingOpener, RedisTableDirectory]


@pytest.fixture
async def routed(
    lobby_database_url: str, redis_client: redis.Redis, redis_prefix: str
) -> AsyncIterator[Routed]:
    engine = create_engine(lobby_database_url, pool_size=5)
    registry = RedisShardRegistry(redis_client, prefix=redis_prefix, lease_seconds=60.0)
    directory = RedisTableDirectory(redis_client, prefix=redis_prefix, ttl_seconds=30.0)
    opener = RecordingOpener()
    servicer, _ = lobby_servicer(
        create_session_factory(engine),
        registry,
        directory,
        closed_access=False,
        opener=opener,
        max_tables_per_room=3,
    )
    await registry.heartbeat(A)
    try:
        async with running_server([lobby_service(servicer)], ACCESS) as (_, channel):
            yield lobby_pb2_grpc.LobbyServiceStub(channel), opener, directory
    finally:
        await engine.dispose()


async def test_join_opens_the_table_it_routes_to_and_no_more_than_the_bound(routed: Routed) -> None:
    stub, opener, directory = routed
    join = lobby_pb2.JoinTableRequest(room_id=ROOM)
    # The standing table runs nowhere yet: routing there asks the owner to open it.
    first = await stub.JoinTable(join, metadata=ALICE)
    assert (first.table_id, opener.opened) == (f"{ROOM}.1", [(A.address, f"{ROOM}.1")])
    for number in (1, 2):
        await directory.publish(_full(number))
    # Every table full: the next number opens at the owner, and is what the player is sent to.
    opener.opened.clear()
    third = await stub.JoinTable(join, metadata=ALICE)
    assert (third.table_id, third.new_table, opener.opened) == (f"{ROOM}.3", True, [(A.address, f"{ROOM}.3")])
    # A running (published) table is not opened again.
    await directory.publish(_full(3))
    opener.opened.clear()
    await expect_error(stub.JoinTable(join, metadata=ALICE), grpc.StatusCode.FAILED_PRECONDITION, "ROOM_FULL")
    assert opener.opened == []


async def test_the_shard_asks_whether_a_player_may_see_a_room(routed: Routed) -> None:
    stub, _, _ = routed
    seen = await stub.AuthorizeView(
        lobby_pb2.AuthorizeViewRequest(player_id="alice", room_id=ROOM), metadata=TABLE
    )
    assert seen.table_count >= 1
    assert seen.everyone  # a public room: the same answer for every player
    await expect_error(
        stub.AuthorizeView(lobby_pb2.AuthorizeViewRequest(player_id="alice", room_id=ROOM), metadata=ALICE),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )
    await expect_error(
        stub.AuthorizeView(lobby_pb2.AuthorizeViewRequest(player_id="alice", room_id="nope"), metadata=TABLE),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )


async def test_a_table_published_by_a_shard_that_lost_the_room_is_opened_at_the_owner(routed: Routed) -> None:
    """The figures of a room's second table, published by the room's last owner, stay listed until
    they expire; a player routed to that table must find it open at the room's owner now (the bench
    saw 1,636 watches of such a table answered TABLE_NOT_FOUND in 27 s, each one a JoinTable again)."""
    stub, opener, directory = routed
    old = TableFigures(
        table_id=f"{ROOM}.2",
        room_id=ROOM,
        shard_id="shard-gone",
        seats=4,
        taken_seats=(SeatFigures(0, "p0", 1_000),),
    )
    await directory.publish(old)
    joined = await stub.JoinTable(
        lobby_pb2.JoinTableRequest(room_id=ROOM, table_id=f"{ROOM}.2"), metadata=ALICE
    )
    assert joined.table_id == f"{ROOM}.2"
    assert opener.opened == [(A.address, f"{ROOM}.2")]
    # Published by the owner itself: running there, not opened again.
    opener.opened.clear()
    await directory.publish(TableFigures(table_id=f"{ROOM}.2", room_id=ROOM, shard_id=A.shard_id, seats=4))
    await stub.JoinTable(lobby_pb2.JoinTableRequest(room_id=ROOM, table_id=f"{ROOM}.2"), metadata=ALICE)
    assert opener.opened == []


def _seated(number: int, players: int, published_at: float, *, who: tuple[str, ...] = ()) -> TableFigures:
    """Table `number` with `players` seats taken: by `who` (the routed players the figures list),
    the rest by players the lobby did not route (seated before)."""
    ids = (*who, *(f"earlier-{n}" for n in range(players - len(who))))
    return TableFigures(
        table_id=f"{ROOM}.{number}",
        room_id=ROOM,
        shard_id=A.shard_id,
        seats=4,
        taken_seats=tuple(SeatFigures(seat, f"p{seat}", 1_000) for seat in range(players)),
        published_at=published_at,
        player_ids=ids,
    )


async def test_players_routed_since_the_figures_count_so_tables_open_as_fast_as_players_come(
    routed: Routed,
) -> None:
    """Issue 45: the figures a shard publishes lag the players the lobby sends it (a second without
    Redis), so every player asking before the next figures went to the same table and found it full:
    tables opened at one a second a room. Each player the lobby routes to a table since that table's
    figures counts as a seat taken there (once per player, until newer figures or a short while)."""
    stub, opener, directory = routed
    await directory.publish(_seated(1, 2, time.time() - 1))  # two of four seats taken

    async def join(player: str) -> str:
        joined = await stub.JoinTable(
            lobby_pb2.JoinTableRequest(room_id=ROOM), metadata=auth_metadata(player, "player")
        )
        return str(joined.table_id)

    routes = [await join(f"p-{n}") for n in range(10)]
    assert routes == [f"{ROOM}.{n}" for n in (1, 1, 2, 2, 2, 2, 3, 3, 3, 3)]
    # Each new table opened at the owner as its first player was sent there.
    assert {f"{ROOM}.2", f"{ROOM}.3"} <= {table for _, table in opener.opened}
    # A player asking again is routed once: still table 1's, no seat counted twice.
    assert await join("p-0") == f"{ROOM}.1"
    # Table 1's newer figures list one of the two it was sent (p-0 sat): the other (p-1) may still be
    # on the way (a buy-in dialog, a slow cashier), so the table stays full for the lobby. Counting
    # a routed player only until newer figures sent the next player to a full table whenever figures
    # came out between a JoinTable and its SitDown (`make bench`, 64 heads-up tables).
    await directory.publish(_seated(1, 3, time.time(), who=("p-0",)))
    await expect_error(
        stub.JoinTable(lobby_pb2.JoinTableRequest(room_id=ROOM), metadata=auth_metadata("p-early", "player")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "ROOM_FULL",
    )
    assert await join("p-1") == f"{ROOM}.1"  # p-1 asking again is not in their own way
    await directory.publish(_seated(1, 4, time.time(), who=("p-0", "p-1")))
    await expect_error(
        stub.JoinTable(lobby_pb2.JoinTableRequest(room_id=ROOM), metadata=auth_metadata("p-next", "player")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "ROOM_FULL",
    )
    # Both sat (the lobby saw them listed); then p-1 leaves: the figures alone count table 1 now, and
    # its seat is free again.
    await directory.publish(_seated(1, 3, time.time(), who=("p-0",)))
    assert await join("p-late") == f"{ROOM}.1"
    # A spectator takes no seat.
    watch = await stub.JoinTable(lobby_pb2.JoinTableRequest(room_id=ROOM, spectate=True), metadata=ALICE)
    assert watch.table_id
    await expect_error(
        stub.JoinTable(lobby_pb2.JoinTableRequest(room_id=ROOM), metadata=auth_metadata("p-full", "player")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "ROOM_FULL",
    )


async def test_players_asking_at_the_same_moment_are_spread_over_tables(routed: Routed) -> None:
    """Each JoinTable counted the players routed before it, then waited for the shard to open the
    table, and only then counted its own player: players asking at the same moment were all sent to
    one table (8 to a 2-seat table, an outside tester found). Routing is decided and counted before
    the call waits on anything."""

    stub, _, directory = routed
    await directory.publish(_seated(1, 4, time.time()))  # table 1 full

    async def join(player: str) -> str:
        joined = await stub.JoinTable(
            lobby_pb2.JoinTableRequest(room_id=ROOM), metadata=auth_metadata(player, "player")
        )
        return str(joined.table_id)

    routes = await asyncio.gather(*(join(f"rush-{n}") for n in range(8)))
    per_table = {t: routes.count(t) for t in set(routes)}
    assert per_table == {f"{ROOM}.2": 4, f"{ROOM}.3": 4}, per_table


async def test_a_table_asked_for_by_name_counts_the_players_routed_there(routed: Routed) -> None:
    stub, _, directory = routed
    await directory.publish(_seated(1, 3, time.time()))
    first = await stub.JoinTable(
        lobby_pb2.JoinTableRequest(room_id=ROOM), metadata=auth_metadata("on-the-way", "player")
    )
    assert first.table_id == f"{ROOM}.1"  # the last seat, taken by a player not seated yet
    await expect_error(
        stub.JoinTable(
            lobby_pb2.JoinTableRequest(room_id=ROOM, table_id=f"{ROOM}.1"),
            metadata=auth_metadata("by-name", "player"),
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TABLE_FULL",
    )
