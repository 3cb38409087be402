"""Reads of a table obey the room's visibility, and never open a table (issue 23, items 4 and 6).

On the old code the lobby hid a private room from a stranger (ROOM_NOT_FOUND), but the table service
gave the same stranger GetTableSnapshot (player ids and stacks) and accepted their WatchTable and
SpectateTable; and GetTableSnapshot of `<room>.2` ... `.30` opened 29 empty tables, which the
lobby then listed to every player.
"""

from __future__ import annotations

import asyncio
import contextlib

import grpc
import pytest

from poker.common.v1 import common_pb2
from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from poker.table.v1 import table_pb2
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata, reason_of
from tests.table.conftest import ADMIN, ServiceProcess, TableWorld, nl_room, table_world, unique
from tests.table.house_players import house_room
from tests.table.players import Player
from tests.table.test_table_hands import seated_pair

pytestmark = pytest.mark.postgres

A = table_pb2
LOBBY = auth_metadata("lobby", Role.SERVICE)


async def _code(call: object) -> tuple[grpc.StatusCode, str]:
    try:
        if hasattr(call, "__aiter__"):
            async for _ in call:  # type: ignore[attr-defined]
                break
        else:
            await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as error:
        return error.code(), reason_of(error)
    return grpc.StatusCode.OK, ""


async def _move_on(players: list[Player]) -> None:
    """The seated player to act, if any, checks or calls, so hands end and new ones start."""
    for player in players:
        view = player.view
        if view is None or view.to_act_seat != player.seat or not view.legal_actions.actions:
            continue
        kinds = list(view.legal_actions.actions)
        with contextlib.suppress(grpc.aio.AioRpcError):  # the turn may have passed meanwhile
            await player.act(A.ACTION_KIND_CHECK if A.ACTION_KIND_CHECK in kinds else A.ACTION_KIND_CALL)


def _reads(world: TableWorld, table_id: str, metadata: object) -> list[object]:
    stub = world.table
    return [
        stub.GetTableSnapshot(A.GetTableSnapshotRequest(table_id=table_id), metadata=metadata, timeout=10),
        stub.WatchTable(A.WatchTableRequest(table_id=table_id), metadata=metadata, timeout=10),
        stub.SpectateTable(A.SpectateTableRequest(table_id=table_id), metadata=metadata, timeout=10),
    ]


async def _open_tables(world: TableWorld, room_id: str) -> set[str]:
    directory = shard_directory_pb2_grpc.ShardDirectoryServiceStub(world.table_channel)
    reply = await directory.ListShardTables(
        shard_directory_pb2.ListShardTablesRequest(room_id=room_id), metadata=LOBBY
    )
    return {t.table_id for t in reply.tables}


async def test_a_private_room_is_invisible_at_the_table_to_a_stranger_but_not_to_its_players(
    world: TableWorld,
) -> None:
    table_id, ann, bob = await seated_pair(world)
    room_id = table_id.rsplit(".", 1)[0]
    world.lobby.hidden.add(room_id)  # the room turned private; the stranger is on no list
    stranger = auth_metadata(unique("eve"), Role.PLAYER)
    for call in _reads(world, table_id, stranger):
        assert await _code(call) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    # The same answer as for a table that does not exist: nothing tells the room is there.
    assert await _code(
        world.table.GetTableSnapshot(A.GetTableSnapshotRequest(table_id=f"{room_id}.9"), metadata=stranger)
    ) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    # Seated players keep their own view (and may come back after a dropped stream); admins read all.
    view = await ann.snapshot()
    assert {s.display_name for s in view.seats if s.player_id} == {ann.player_id, bob.player_id}
    assert await _code(
        world.table.WatchTable(A.WatchTableRequest(table_id=table_id), metadata=bob.metadata)
    ) == (
        grpc.StatusCode.OK,
        "",
    )
    assert await _code(
        world.table.GetTableSnapshot(A.GetTableSnapshotRequest(table_id=table_id), metadata=ADMIN)
    ) == (grpc.StatusCode.OK, "")
    world.lobby.hidden.discard(room_id)
    for p in (ann, bob):
        await p.close()


async def test_a_stranger_s_commands_at_a_private_room_s_table_answer_as_for_no_table(
    world: TableWorld,
) -> None:
    """Not only reads: a stranger's SitDown, Act, LeaveTable, SitOut, SitIn, SetPlayerSeed and
    SendChat at a private room's running table answer TABLE_NOT_FOUND (on the old code NOT_SEATED or
    NOT_ON_ALLOW_LIST, which told the stranger the table was there); its players' commands go on."""
    table_id, ann, bob = await seated_pair(world)
    room_id = table_id.rsplit(".", 1)[0]
    world.lobby.hidden.add(room_id)
    eve = auth_metadata(unique("eve"), Role.PLAYER)
    stub = world.table
    rid = unique("r")
    calls = [
        stub.SitDown(A.SitDownRequest(request_id=rid, table_id=table_id, buy_in=500), metadata=eve),
        stub.Act(
            A.ActRequest(request_id=rid, table_id=table_id, hand_id="h", action=A.ACTION_KIND_FOLD),
            metadata=eve,
        ),
        stub.LeaveTable(A.LeaveTableRequest(request_id=rid, table_id=table_id), metadata=eve),
        stub.SitOut(A.SitOutRequest(request_id=rid, table_id=table_id), metadata=eve),
        stub.SitIn(A.SitInRequest(request_id=rid, table_id=table_id), metadata=eve),
        stub.SetPlayerSeed(
            A.SetPlayerSeedRequest(request_id=rid, table_id=table_id, client_seed="x"), metadata=eve
        ),
        stub.SendChat(A.SendChatRequest(request_id=rid, table_id=table_id, text="hi"), metadata=eve),
    ]
    for call in calls:
        assert await _code(call) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    # The seated players' own commands are answered as before.
    sent = A.SendChatRequest(request_id=unique("c"), table_id=table_id, text="still here")
    assert await _code(stub.SendChat(sent, metadata=ann.metadata)) == (grpc.StatusCode.OK, "")
    world.lobby.hidden.discard(room_id)
    for p in (ann, bob):
        await p.close()


async def test_a_private_house_room_is_invisible_to_a_stranger(world: TableWorld) -> None:
    table_id = world.add_room(
        house_room(unique("hr").replace("_", "-"), common_pb2.GAME_VARIANT_CASINO_HOLDEM)
    )
    room_id = table_id.rsplit(".", 1)[0]
    stranger = auth_metadata(unique("eve"), Role.PLAYER)
    assert await _code(
        world.table.GetTableSnapshot(A.GetTableSnapshotRequest(table_id=table_id), metadata=stranger)
    ) == (grpc.StatusCode.OK, "")
    world.lobby.hidden.add(room_id)
    other = auth_metadata(unique("mallory"), Role.PLAYER)
    for call in _reads(world, table_id, other)[:2]:
        assert await _code(call) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    # Nor may the stranger commit a round there (SetPlayerSeed opens the caller's next round).
    seed = A.SetPlayerSeedRequest(request_id=unique("seed"), table_id=table_id, client_seed="abc")
    assert await _code(world.table.SetPlayerSeed(seed, metadata=other)) == (
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
    )


async def test_reads_and_commands_never_open_a_table_beyond_the_standing_ones(world: TableWorld) -> None:
    room_id = unique("open")
    first = world.add_room(nl_room(room_id))
    anyone = auth_metadata(unique("bot"), Role.PLAYER)
    assert await _code(
        world.table.GetTableSnapshot(A.GetTableSnapshotRequest(table_id=first), metadata=anyone)
    ) == (grpc.StatusCode.OK, "")
    for number in range(2, 31):
        for call in _reads(world, f"{room_id}.{number}", anyone):
            assert await _code(call) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    cat = Player(unique("cat"), world.table_channel, f"{room_id}.7")
    await world.fund(cat.player_id, 1000)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cat.sit(500)
    assert (caught.value.code(), reason_of(caught.value)) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    assert await _open_tables(world, room_id) == {first}
    # The lobby's routing opens one (JoinTable calls OpenTable); a player may not call it.
    directory = shard_directory_pb2_grpc.ShardDirectoryServiceStub(world.table_channel)
    assert await _code(
        directory.OpenTable(shard_directory_pb2.OpenTableRequest(table_id=f"{room_id}.7"), metadata=anyone)
    ) == (grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED")
    await directory.OpenTable(shard_directory_pb2.OpenTableRequest(table_id=f"{room_id}.7"), metadata=LOBBY)
    assert await _open_tables(world, room_id) == {first, f"{room_id}.7"}
    await cat.watch()
    await cat.sit(500)
    await cat.leave()
    await cat.close()
    assert await world.wallet(cat.player_id) == 1000


class _Reader:
    """Reads a stream in the background (a cancelled read would cancel the call itself)."""

    def __init__(self, call: object) -> None:
        self.received = 0
        self.ended: tuple[grpc.StatusCode, str] | None = None
        self._task = asyncio.create_task(self._pump(call))

    async def _pump(self, call: object) -> None:
        try:
            async for _ in call:  # type: ignore[attr-defined]
                self.received += 1
        except grpc.aio.AioRpcError as error:
            self.ended = (error.code(), reason_of(error))
        else:
            self.ended = (grpc.StatusCode.OK, "")

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def test_a_stream_open_when_the_room_turns_private_ends_for_a_stranger_but_not_its_players(
    backends: dict[str, ServiceProcess],
) -> None:
    async with table_world(backends, view_recheck_seconds=0.2, spectator_delay_seconds=0.0) as world:
        table_id, ann, bob = await seated_pair(world)
        room_id = table_id.rsplit(".", 1)[0]
        stranger = auth_metadata(unique("eve"), Role.PLAYER)
        readers = {
            "watch": _Reader(
                world.table.WatchTable(A.WatchTableRequest(table_id=table_id), metadata=stranger)
            ),
            "spectate": _Reader(
                world.table.SpectateTable(A.SpectateTableRequest(table_id=table_id), metadata=stranger)
            ),
        }
        loop = asyncio.get_running_loop()

        async def chat(text: str, by: Player) -> None:
            await by.stub.SendChat(
                A.SendChatRequest(request_id=unique("c"), table_id=table_id, text=text), metadata=by.metadata
            )

        try:
            end = loop.time() + 10
            while not all(r.received for r in readers.values()):
                assert loop.time() < end, "the stranger's streams never started"
                await asyncio.sleep(0.05)
            world.lobby.hidden.add(room_id)  # the room turned private; the stranger is on no list
            end = loop.time() + 20
            # Every chat line is an update to a spectator's stream, and every hand that starts or
            # ends one to a watcher's without a seat (its waiting view changes then, and only then);
            # a stranger's streams must end before many pass.
            lines = 0
            while not all(r.ended for r in readers.values()) and loop.time() < end:
                lines += 1
                await chat("hi", ann if lines % 2 else bob)  # within each one's chat rate
                await _move_on([ann, bob])
                await asyncio.sleep(0.6)
            assert {name: r.ended for name, r in readers.items()} == {
                "watch": (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"),
                "spectate": (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"),
            }
            # The seated players' own streams run on: bob still sees ann's lines.
            await asyncio.sleep(1.0)
            await chat("still here", ann)
            end = loop.time() + 10
            while not any(m.event.chat.text == "still here" for m in bob.messages):
                assert loop.time() < end, "the seated player's stream stopped"
                await asyncio.sleep(0.05)
        finally:
            world.lobby.hidden.discard(room_id)
            for reader in readers.values():
                await reader.stop()
            for p in (ann, bob):
                await p.close()
