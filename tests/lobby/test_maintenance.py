"""Maintenance switches as far as the lobby goes: global and per room, JoinTable and AuthorizeSeat
refused under no-new-seats, who set them and when, and shards learning them by polling Redis."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2
from service_runtime.shard_registry import ShardInfo
from service_runtime.table_directory import MaintenanceState, MaintenanceSwitches, MaintenanceWatcher
from service_runtime.testing import auth_metadata, reason_of
from services.table.ports.rooms import LobbyRoomSource
from tests.lobby.conftest import ADMIN, ALICE, TABLE, Lobby, expect_error

SHARD = ShardInfo("shard-a", "127.0.0.1:7301")
ROOM = "flhe-gram-6max-10-20"
OTHER = "nlhe-gram-classic"
STOPPED = grpc.StatusCode.FAILED_PRECONDITION


async def _set(lobby: Lobby, request_id: str, room_id: str = "", **switches: object) -> lobby_pb2.Maintenance:
    request = lobby_pb2.SetMaintenanceRequest(
        request_id=request_id, room_id=room_id, maintenance=lobby_pb2.Maintenance(**switches)
    )
    return (await lobby.stub.SetMaintenance(request, metadata=ADMIN)).maintenance


async def _join(lobby: Lobby, room_id: str = ROOM, *, spectate: bool = False) -> lobby_pb2.JoinTableResponse:
    response: lobby_pb2.JoinTableResponse = await lobby.stub.JoinTable(
        lobby_pb2.JoinTableRequest(room_id=room_id, spectate=spectate), metadata=ALICE
    )
    return response


async def test_lobby_wide_no_new_seats_refuses_joining_everywhere_until_switched_off(lobby: Lobby) -> None:
    await lobby.registry.heartbeat(SHARD)
    lobby.clock.advance(timedelta(minutes=5))
    shown = await _set(lobby, "m1", no_new_seats=True, message="deploy at 01:00")
    assert (shown.no_new_seats, shown.set_by, shown.update_time.ToDatetime().minute) == (True, "ops-admin", 5)
    for room_id in (ROOM, OTHER):
        await expect_error(_join(lobby, room_id), STOPPED, "MAINTENANCE_NO_NEW_SEATS")
    await expect_error(
        lobby.stub.AuthorizeSeat(
            lobby_pb2.AuthorizeSeatRequest(player_id="alice", room_id=ROOM), metadata=TABLE
        ),
        STOPPED,
        "MAINTENANCE_NO_NEW_SEATS",
    )
    assert (await _join(lobby, spectate=True)).shard_id == "shard-a", "watching needs no seat"
    seen = await lobby.stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(room_id=ROOM), metadata=ALICE)
    assert (seen.lobby.no_new_seats, seen.lobby.message, seen.lobby.set_by) == (
        True,
        "deploy at 01:00",
        "ops-admin",
    )
    assert not seen.room.no_new_seats
    await _set(lobby, "m2", no_new_seats=False)
    assert (await _join(lobby)).shard_id == "shard-a"


async def test_a_room_switch_stops_that_room_only_and_shows_in_all_rooms(lobby: Lobby) -> None:
    await lobby.registry.heartbeat(SHARD)
    await _set(lobby, "r1", room_id=ROOM, no_new_seats=True, no_new_hands=True)
    await expect_error(_join(lobby, ROOM), STOPPED, "MAINTENANCE_NO_NEW_SEATS")
    assert (await _join(lobby, OTHER)).shard_id == "shard-a"
    everything = await lobby.stub.GetMaintenance(
        lobby_pb2.GetMaintenanceRequest(all_rooms=True), metadata=TABLE
    )
    assert [
        (r.room_id, r.maintenance.no_new_seats, r.maintenance.no_new_hands) for r in everything.rooms
    ] == [(ROOM, True, True)]
    state = await lobby.board.read()
    now = lobby.clock().timestamp()
    assert state.for_room(ROOM, now) == MaintenanceSwitches(True, True, "")
    assert state.for_room(OTHER, now) == MaintenanceSwitches()


async def test_no_new_hands_alone_still_seats_players(lobby: Lobby) -> None:
    # Running hands finish and no new one starts (the table's side); seats stay open.
    await lobby.registry.heartbeat(SHARD)
    await _set(lobby, "h1", room_id=ROOM, no_new_hands=True)
    assert (await _join(lobby)).shard_id == "shard-a"
    assert (await lobby.board.read()).for_room(ROOM, lobby.clock().timestamp()).no_new_hands


async def test_a_shard_polling_the_board_learns_a_change_within_its_interval(lobby: Lobby) -> None:
    watcher = MaintenanceWatcher(lobby.board.read, interval=0.2)
    await watcher.start()
    try:
        assert watcher.ready
        assert not watcher.current.for_room(ROOM, time.time()).no_new_hands
        await _set(lobby, "w1", no_new_hands=True)
        await asyncio.sleep(0.5)
        assert watcher.current.for_room(ROOM, time.time()).no_new_hands
        await _set(lobby, "w2", no_new_hands=False)
        await asyncio.sleep(0.5)
        assert not watcher.current.for_room(ROOM, time.time()).no_new_hands
    finally:
        await watcher.stop()


async def test_a_watcher_that_never_read_the_switches_stops_seats_and_hands() -> None:
    async def unreachable() -> object:
        raise ConnectionError

    watcher = MaintenanceWatcher(unreachable, interval=0.1)  # type: ignore[arg-type]
    await watcher.start()
    try:
        assert not watcher.ready
        assert watcher.current.for_room(ROOM, time.time()) == MaintenanceSwitches(True, True, "starting")
    finally:
        await watcher.stop()


class _Answers:
    """A lobby stub that answers GetMaintenance with what the real lobby answered."""

    def __init__(self, answer: lobby_pb2.GetMaintenanceResponse) -> None:
        self.answer = answer

    async def GetMaintenance(  # noqa: N802
        self, request: lobby_pb2.GetMaintenanceRequest
    ) -> lobby_pb2.GetMaintenanceResponse:
        return self.answer


def _at(lobby: Lobby, minutes: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(lobby.clock() + timedelta(minutes=minutes))
    return stamp


async def test_a_scheduled_window_stops_seats_and_hands_only_while_it_is_open(lobby: Lobby) -> None:
    """The operator schedules maintenance ahead (from 10 to 40 minutes from now): until it opens
    players sit down and shards deal; inside it JoinTable and AuthorizeSeat refuse with the
    operator's words and the shards' board says no new hands; once it closes play goes on, with no
    second call. The lobby and the shards read the same window on their own clocks."""
    await lobby.registry.heartbeat(SHARD)
    shown = await _set(
        lobby,
        "win1",
        room_id=ROOM,
        no_new_seats=True,
        no_new_hands=True,
        message="upgrade 12:10-12:40 UTC",
        start_time=_at(lobby, 10),
        end_time=_at(lobby, 40),
    )
    assert not shown.in_force
    assert (shown.start_time.ToDatetime(), shown.end_time.ToDatetime()) == (
        _at(lobby, 10).ToDatetime(),
        _at(lobby, 40).ToDatetime(),
    )

    async def state() -> tuple[bool, bool, bool]:
        """(JoinTable refused, the board stops hands at the lobby's now, GetMaintenance in force)"""
        refusal: grpc.aio.AioRpcError | None = None
        try:
            await _join(lobby)
        except grpc.aio.AioRpcError as error:
            refusal = error
        if refusal is not None:
            assert (refusal.code(), reason_of(refusal)) == (STOPPED, "MAINTENANCE_NO_NEW_SEATS")
            assert refusal.details() == "upgrade 12:10-12:40 UTC"
        board = (await lobby.board.read()).for_room(ROOM, lobby.clock().timestamp())
        seen = await lobby.stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(room_id=ROOM), metadata=ALICE)
        return refusal is not None, board.no_new_hands, seen.room.in_force

    assert await state() == (False, False, False)
    lobby.clock.advance(timedelta(minutes=10))
    assert await state() == (True, True, True)
    await expect_error(
        lobby.stub.AuthorizeSeat(
            lobby_pb2.AuthorizeSeatRequest(player_id="alice", room_id=ROOM), metadata=TABLE
        ),
        STOPPED,
        "MAINTENANCE_NO_NEW_SEATS",
    )
    assert (await _join(lobby, OTHER)).shard_id == "shard-a", "another room is open"
    lobby.clock.advance(timedelta(minutes=29, seconds=59))
    assert await state() == (True, True, True)
    lobby.clock.advance(timedelta(seconds=1))
    assert await state() == (False, False, False)
    # A shard without Redis reads the switches through GetMaintenance: the window comes with them.
    answer = await lobby.stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(all_rooms=True), metadata=TABLE)
    polled = await LobbyRoomSource(_Answers(answer)).read_maintenance()  # type: ignore[arg-type]
    opens = (lobby.clock() - timedelta(minutes=30)).timestamp()
    assert polled.for_room(ROOM, opens - 0.001) == MaintenanceSwitches()
    assert polled.for_room(ROOM, opens).no_new_seats
    assert polled.for_room(ROOM, opens + 30 * 60) == MaintenanceSwitches()
    # The window stays on record (GetMaintenance shows it, not in force) until switched again.
    everything = await lobby.stub.GetMaintenance(
        lobby_pb2.GetMaintenanceRequest(all_rooms=True), metadata=ADMIN
    )
    assert [
        (r.room_id, r.maintenance.in_force, r.maintenance.HasField("end_time")) for r in everything.rooms
    ] == [(ROOM, False, True)]


async def test_a_window_open_at_both_ends_and_a_lobby_wide_one(lobby: Lobby) -> None:
    await lobby.registry.heartbeat(SHARD)
    # From now until 30 minutes from now (no start: at once).
    shown = await _set(lobby, "open1", no_new_seats=True, end_time=_at(lobby, 30))
    assert shown.in_force
    assert not shown.HasField("start_time")
    await expect_error(_join(lobby, OTHER), STOPPED, "MAINTENANCE_NO_NEW_SEATS")
    lobby.clock.advance(timedelta(minutes=30))
    assert (await _join(lobby, OTHER)).shard_id == "shard-a"
    # From 5 minutes on until switched off (no end).
    await _set(lobby, "open2", no_new_seats=True, start_time=_at(lobby, 5))
    assert (await _join(lobby, OTHER)).shard_id == "shard-a"
    lobby.clock.advance(timedelta(days=30))
    await expect_error(_join(lobby, OTHER), STOPPED, "MAINTENANCE_NO_NEW_SEATS")


def test_a_window_on_the_board_is_read_on_the_readers_clock_and_old_boards_still_read() -> None:
    window = MaintenanceSwitches(True, True, "soon", starts_at=1000.0, ends_at=2000.0)
    state = MaintenanceState(lobby=MaintenanceSwitches(message="lobby"), rooms={ROOM: window})
    again = MaintenanceState.from_json(state.to_json())
    assert again == state
    assert again.for_room(ROOM, 999.9) == MaintenanceSwitches(message="lobby")
    assert again.for_room(ROOM, 1000.0) == MaintenanceSwitches(True, True, "soon")
    assert again.for_room(ROOM, 2000.0) == MaintenanceSwitches(message="lobby")
    # A board without windows is written without their keys (a shard of before reads it) and reads.
    plain = MaintenanceState(rooms={ROOM: MaintenanceSwitches(no_new_hands=True)})
    assert "starts_at" not in plain.to_json()
    assert (
        MaintenanceState.from_json('{"lobby":{},"rooms":{"r":{"no_new_hands":true}}}')
        .for_room("r", 0)
        .no_new_hands
    )


async def test_bad_maintenance_requests_change_nothing(lobby: Lobby) -> None:
    await _set(lobby, "same", no_new_seats=True)
    request = lobby_pb2.SetMaintenanceRequest(
        request_id="same", maintenance=lobby_pb2.Maintenance(no_new_hands=True)
    )
    await expect_error(
        lobby.stub.SetMaintenance(request, metadata=ADMIN),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    await expect_error(
        _set(lobby, "x1", room_id="no-such-room", no_new_seats=True),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )
    await expect_error(
        _set(lobby, "x2", message="m" * 257), grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"
    )
    await expect_error(
        _set(lobby, "x3", message="bell\x07"), grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"
    )
    # Windows: an end before the start, an end passed, a start or end more than a year ahead.
    for n, (start, end) in enumerate(
        [(30, 20), (None, -1), (None, 0), (60 * 24 * 367, None), (None, 60 * 24 * 367)]
    ):
        window = {"start_time": _at(lobby, start)} if start is not None else {}
        if end is not None:
            window["end_time"] = _at(lobby, end)
        field = "maintenance.end_time" if end is not None else "maintenance.start_time"
        await expect_error(
            _set(lobby, f"w{n}", room_id=ROOM, no_new_seats=True, **window),
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
            field=field,
        )
    # None of them changed the room's switches.
    seen = await lobby.stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(room_id=ROOM), metadata=ADMIN)
    assert not seen.room.no_new_seats
    far = Timestamp(seconds=253402300800 + 10)  # past year 9999: no datetime holds it
    await expect_error(
        _set(lobby, "w-far", room_id=ROOM, no_new_seats=True, end_time=far),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )
    await expect_error(
        lobby.stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(room_id="no-such-room"), metadata=ALICE),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )
    seen = await lobby.stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(all_rooms=True), metadata=ADMIN)
    assert (seen.lobby.no_new_seats, seen.lobby.no_new_hands, list(seen.rooms)) == (True, False, [])


async def test_a_retried_switch_returns_the_first_answer(lobby: Lobby) -> None:
    first = await _set(lobby, "once", room_id=ROOM, no_new_seats=True)
    lobby.clock.advance(timedelta(minutes=10))
    again = await _set(lobby, "once", room_id=ROOM, no_new_seats=True)
    assert again == first
    seen = await lobby.stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(room_id=ROOM), metadata=ALICE)
    assert seen.room.update_time == first.update_time


async def test_a_private_or_disabled_rooms_switches_are_shown_to_those_who_may_see_it_only(
    lobby: Lobby,
) -> None:
    """Issue 23, item 4 (one visibility rule for every read): GetMaintenance answered any player for a
    private room (its switches, its message, who set them), and `all_rooms` listed it, so a stranger
    learnt the room existed, which GetRoom answers ROOM_NOT_FOUND to hide."""
    room = lobby_pb2.Room(
        room_id="vip", display_name="VIP", variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
        pool=common_pb2.CHIP_POOL_GRAM, seats_per_table=6, private=True,
        blinds=lobby_pb2.BlindStakes(small_blind=25, big_blind=50, step=25), min_buy_in=2_000, max_buy_in=5_000,
    )  # fmt: skip
    await lobby.stub.CreateRoom(
        lobby_pb2.CreateRoomRequest(request_id="c1", room=room, table_count=1), metadata=ADMIN
    )
    await lobby.stub.UpdateAllowList(
        lobby_pb2.UpdateAllowListRequest(request_id="a1", room_id="vip", add_player_ids=["alice"]),
        metadata=ADMIN,
    )
    await _set(lobby, "v1", room_id="vip", no_new_seats=True, message="vip closes at 02:00")
    await _set(lobby, "o1", room_id=OTHER, no_new_hands=True)
    bob = auth_metadata("bob", "player")
    await expect_error(
        lobby.stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(room_id="vip"), metadata=bob),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )

    async def listed(metadata: tuple[tuple[str, str], ...]) -> list[str]:
        reply = await lobby.stub.GetMaintenance(
            lobby_pb2.GetMaintenanceRequest(all_rooms=True), metadata=metadata
        )
        return [r.room_id for r in reply.rooms]

    assert await listed(bob) == [OTHER]
    assert await listed(ALICE) == [OTHER, "vip"]
    assert await listed(ADMIN) == await listed(TABLE) == [OTHER, "vip"]
    seen = await lobby.stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(room_id="vip"), metadata=ALICE)
    assert (seen.room.no_new_seats, seen.room.message) == (True, "vip closes at 02:00")
    # A disabled room is seen by nobody but admins and services.
    await lobby.stub.DisableRoom(lobby_pb2.DisableRoomRequest(request_id="d1", room_id="vip"), metadata=ADMIN)
    assert await listed(ALICE) == [OTHER]
    assert await listed(TABLE) == [OTHER, "vip"]
