"""ListTables and JoinTable over gRPC with a real Redis: figures published by shards (and gone when
their TTL runs out), the table JoinTable picks, and the shard that owns the room."""

from __future__ import annotations

import asyncio

import grpc
import redis.asyncio as redis

from poker.lobby.v1 import lobby_pb2
from service_runtime.shard_registry import ShardInfo, choose_shard
from service_runtime.table_directory import RedisTableDirectory, SeatFigures, TableFigures
from service_runtime.testing import auth_metadata
from tests.lobby.conftest import ADMIN, ALICE, Lobby, expect_error, lobby_on

BOB = auth_metadata("bob", "player")

A = ShardInfo("shard-a", "127.0.0.1:7101")
B = ShardInfo("shard-b", "127.0.0.1:7102")
ROOM = "nlhe-gram-classic"  # 4 seats, one standing table


def _table(
    number: int, seated: int, *, room: str = ROOM, shard: str = "shard-a", seats: int = 4
) -> TableFigures:
    return TableFigures(
        table_id=f"{room}.{number}",
        room_id=room,
        shard_id=shard,
        seats=seats,
        taken_seats=tuple(SeatFigures(seat, f"player {seat}", 1_000 + seat) for seat in range(seated)),
        waiting_players=1 if seated == seats else 0,
        hand_in_progress=seated >= 2,
        average_pot=240,
        hands_per_hour=75,
    )


async def _join(lobby: Lobby, table_id: str = "", *, spectate: bool = False) -> lobby_pb2.JoinTableResponse:
    request = lobby_pb2.JoinTableRequest(room_id=ROOM, table_id=table_id, spectate=spectate)
    response: lobby_pb2.JoinTableResponse = await lobby.stub.JoinTable(request, metadata=ALICE)
    return response


async def test_list_tables_shows_the_published_figures_and_the_standing_table(lobby: Lobby) -> None:
    await lobby.registry.heartbeat(A)
    await lobby.directory.publish(_table(2, 3))
    tables = (await lobby.stub.ListTables(lobby_pb2.ListTablesRequest(room_id=ROOM), metadata=ALICE)).tables
    assert [t.table_id for t in tables] == [f"{ROOM}.1", f"{ROOM}.2"]
    standing, live = tables
    assert (standing.seated_players, standing.seats, standing.shard_id) == (0, 4, "shard-a")
    assert not standing.HasField("update_time")
    assert (live.seated_players, live.hand_in_progress, live.average_pot, live.hands_per_hour) == (
        3,
        True,
        240,
        75,
    )
    assert [(s.seat, s.display_name, s.stack) for s in live.taken_seats] == [
        (0, "player 0", 1_000), (1, "player 1", 1_001), (2, "player 2", 1_002),
    ]  # fmt: skip
    assert live.HasField("update_time")
    room = (await lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id=ROOM), metadata=ALICE)).room
    assert (room.occupancy.running_tables, room.occupancy.seats_taken, room.occupancy.seats_free) == (1, 3, 5)
    await lobby.directory.publish(_table(5, 4))  # full, one player waiting
    room = (await lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id=ROOM), metadata=ALICE)).room
    occupancy = room.occupancy
    assert (occupancy.running_tables, occupancy.seats_taken, occupancy.seats_free, occupancy.players_waiting) == (
        2, 7, 5, 1,
    )  # fmt: skip
    await expect_error(
        lobby.stub.ListTables(lobby_pb2.ListTablesRequest(room_id="nope"), metadata=ALICE),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )


async def test_a_table_whose_shard_stops_publishing_leaves_the_list_within_its_ttl(
    lobby: Lobby, redis_client: redis.Redis, redis_prefix: str
) -> None:
    await lobby.registry.heartbeat(A)
    await lobby.directory.publish(_table(3, 2))  # long-lived: listed however slow this machine is
    listed = (await lobby.stub.ListTables(lobby_pb2.ListTablesRequest(room_id=ROOM), metadata=ALICE)).tables
    assert f"{ROOM}.3" in [t.table_id for t in listed]
    # The shard's last publication, with a short TTL, then silence: the table leaves once it runs out.
    short_lived = RedisTableDirectory(redis_client, prefix=redis_prefix, ttl_seconds=0.5)
    await short_lived.publish(_table(3, 2))
    await asyncio.sleep(0.8)
    listed = (await lobby.stub.ListTables(lobby_pb2.ListTablesRequest(room_id=ROOM), metadata=ALICE)).tables
    assert [t.table_id for t in listed] == [f"{ROOM}.1"]


async def test_join_picks_the_fullest_table_with_a_free_seat_then_opens_the_next(lobby: Lobby) -> None:
    await lobby.registry.heartbeat(A)
    # Published together (a shard's every table in one round trip: publish_all).
    await lobby.directory.publish_all([_table(1, 1), _table(2, 3), _table(3, 4)])
    joined = await _join(lobby)
    assert (joined.table_id, joined.shard_id, joined.address, joined.new_table) == (
        f"{ROOM}.2",
        "shard-a",
        A.address,
        False,
    )
    assert joined.fencing_token == 1
    assert (await _join(lobby, f"{ROOM}.1")).table_id == f"{ROOM}.1"
    await expect_error(_join(lobby, f"{ROOM}.3"), grpc.StatusCode.FAILED_PRECONDITION, "TABLE_FULL")
    assert (await _join(lobby, f"{ROOM}.3", spectate=True)).table_id == f"{ROOM}.3"
    for figures in (_table(1, 4), _table(2, 4)):
        await lobby.directory.publish(figures)
    opened = await _join(lobby)
    assert (opened.table_id, opened.new_table) == (f"{ROOM}.4", True)


async def test_a_player_holding_a_seat_in_the_room_is_routed_back_to_it_even_at_a_full_table(
    lobby: Lobby,
) -> None:
    """A client that lost track of its table (a shard died between its SitDown and the first view that
    showed its seat; its answer timed out) asks the room: the lobby sends it to the seat it holds, not
    to the fullest table with a free seat, so it can act, and leave, there."""
    from dataclasses import replace

    await lobby.registry.heartbeat(A)
    alices = replace(_table(3, 4), player_ids=("p0", "p1", "alice", "p3"))
    await lobby.directory.publish_all([_table(1, 1), _table(2, 3), alices])
    joined = await _join(lobby)
    assert (joined.table_id, joined.new_table) == (f"{ROOM}.3", False)
    # Watching picks no seat of hers; naming another table is hers to ask.
    assert (await _join(lobby, f"{ROOM}.1")).table_id == f"{ROOM}.1"
    # Another player is sent to the fullest table with a free seat, as before.
    other = await lobby.stub.JoinTable(lobby_pb2.JoinTableRequest(room_id=ROOM), metadata=BOB)
    assert other.table_id == f"{ROOM}.2"


async def test_join_refuses_unknown_tables_and_rooms(lobby: Lobby) -> None:
    await lobby.registry.heartbeat(A)
    for table_id in (f"{ROOM}.9", "nlhe-gram-duel.1", "garbage", f"{ROOM}.0"):
        await expect_error(_join(lobby, table_id), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    await expect_error(_join(lobby, "x" * 200), grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID")
    await expect_error(
        lobby.stub.JoinTable(lobby_pb2.JoinTableRequest(room_id="nope"), metadata=ALICE),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )


async def test_without_a_live_shard_join_is_unavailable(lobby: Lobby) -> None:
    await expect_error(_join(lobby), grpc.StatusCode.UNAVAILABLE, "NO_SHARD_AVAILABLE")


async def test_with_two_shards_every_room_routes_to_its_rendezvous_owner(lobby: Lobby) -> None:
    await lobby.registry.heartbeat(A)
    await lobby.registry.heartbeat(B)
    rooms = (await lobby.stub.ListRooms(lobby_pb2.ListRoomsRequest(), metadata=ADMIN)).rooms
    owners: dict[str, str] = {}
    for room in rooms:
        joined = await lobby.stub.JoinTable(lobby_pb2.JoinTableRequest(room_id=room.room_id), metadata=ALICE)
        owners[room.room_id] = joined.shard_id
        assert joined.address == {"shard-a": A.address, "shard-b": B.address}[joined.shard_id]
        assert joined.shard_id == choose_shard(room.room_id, ["shard-a", "shard-b"])
    assert set(owners.values()) == {"shard-a", "shard-b"}, "twenty rooms spread over both shards"


async def test_with_redis_away_listing_degrades_and_joining_is_unavailable(lobby_database_url: str) -> None:
    # A Redis nobody listens on: the catalogue still answers, the live side says UNAVAILABLE.
    client = redis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    try:
        async for dead in lobby_on(lobby_database_url, client, "unreachable:"):
            room = (await dead.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id=ROOM), metadata=ALICE)).room
            assert (room.occupancy.seats_taken, room.occupancy.seats_free) == (0, 4)
            await expect_error(_join(dead), grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE")
            await expect_error(
                dead.stub.ListTables(lobby_pb2.ListTablesRequest(room_id=ROOM), metadata=ALICE),
                grpc.StatusCode.UNAVAILABLE,
                "UNAVAILABLE",
            )
    finally:
        await client.aclose()
