"""Rooms as a table shard needs them, read from the lobby (the one owner of the catalogue).

A table never keeps a second copy of the catalogue: it asks the lobby for its room when it opens
and again between hands every `room_refresh_seconds`, so a changed room applies from the next hand.
Table ids are the lobby's `<room_id>.<n>` (`service_runtime.table_directory`): the room of a table
is part of its id. Before a seat is taken the lobby's AuthorizeSeat applies access and maintenance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker_engine.config import RakeRule, Variant
from service_runtime.errors import NotFound
from service_runtime.table_directory import MaintenanceState, MaintenanceSwitches, parse_table_id
from services.table.ports.remote import translate_rpc_error

MAX_TABLE_ID_LENGTH = 80


@dataclass(frozen=True, slots=True)
class Room:
    """The game of a room: variant, pool, seats, stakes, buy-in range and rake (rules 5, 6, 11)."""

    room_id: str
    variant: Variant
    pool: int  # poker.common.v1.ChipPool
    seats: int
    small_blind: int
    big_blind: int
    step: int
    min_buy_in: int
    max_buy_in: int
    rake: RakeRule
    small_bet: int | None = None
    big_bet: int | None = None
    # The lobby's `private`: the table tells fairness so at each commitment, and a private room's
    # hands then exist only for the players dealt in (and admins) there too.
    private: bool = False

    @property
    def variant_pb(self) -> int:
        if self.variant is Variant.FIXED_LIMIT:
            return common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM
        return common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM


def room_of_table(table_id: str) -> str:
    """The room id in a table id; TABLE_NOT_FOUND when the id has not the shape of one."""
    parsed = parse_table_id(table_id) if len(table_id) <= MAX_TABLE_ID_LENGTH else None
    if parsed is None:
        raise NotFound("TABLE_NOT_FOUND", "no such table", {"field": "table_id"})
    return parsed[0]


def room_from_pb(room: lobby_pb2.Room) -> Room | None:
    """The cash-game room of a lobby entry; None for house games, which this service does not run yet."""
    rake = RakeRule(basis_points=int(room.rake_basis_points), cap=int(room.rake_cap))
    common = {
        "room_id": room.room_id,
        "pool": int(room.pool),
        "seats": int(room.seats_per_table),
        "min_buy_in": int(room.min_buy_in),
        "max_buy_in": int(room.max_buy_in),
        "rake": rake,
        "private": bool(room.private),
    }
    if room.variant == common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM and room.WhichOneof("stakes") == "blinds":
        blinds = room.blinds
        return Room(
            variant=Variant.NO_LIMIT,
            small_blind=int(blinds.small_blind),
            big_blind=int(blinds.big_blind),
            step=int(blinds.step) or 1,
            **common,  # type: ignore[arg-type]
        )
    if room.variant == common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM and room.WhichOneof("stakes") == "limits":
        limits = room.limits
        # Rules (limit-holdem): the blinds are half a small bet and a small bet.
        return Room(
            variant=Variant.FIXED_LIMIT,
            small_blind=int(limits.small_bet) // 2,
            big_blind=int(limits.small_bet),
            step=1,
            small_bet=int(limits.small_bet),
            big_bet=int(limits.big_bet),
            **common,  # type: ignore[arg-type]
        )
    return None


@dataclass(frozen=True, slots=True)
class SeatGrant:
    """The lobby's yes to a seat: the room's revision as it answered, and the name and photo the seat
    shows (the photo "" when the player has none or does not show it)."""

    room_revision: int
    display_name: str
    avatar_url: str = ""


@dataclass(frozen=True, slots=True)
class ViewGrant:
    """The lobby's yes to a reader: the room's revision, its standing table count, and whether every
    player may see the room (then the answer is the room's, not the player's)."""

    room_revision: int
    table_count: int
    everyone: bool = False


class RoomSource(Protocol):
    """Where rooms come from: the lobby in production, the same gRPC face in tests."""

    async def get_room(self, room_id: str) -> Room:
        """The room, or NotFound(ROOM_NOT_FOUND); Unavailable when the lobby cannot be reached."""

    async def list_rooms(self) -> list[Room]:
        """Every cash-game room of the catalogue."""

    async def authorize_seat(self, player_id: str, room_id: str, suggested_name: str = "") -> SeatGrant:
        """Access and maintenance checks for a new seat (or house round); the lobby's refusal is
        raised as is. The room's revision as the lobby answered it, and the player's display name
        (`suggested_name`: the token's suggestion, for a player the lobby has no name for yet) and
        photo."""

    async def get_room_entry(self, room_id: str) -> lobby_pb2.Room:
        """The lobby's entry of the room whatever its game (house-game tables read theirs from it)."""

    async def authorize_view(self, player_id: str, room_id: str) -> ViewGrant:
        """The lobby's visibility rule for a reader: NotFound(ROOM_NOT_FOUND) when the player may not
        see the room; else its revision, standing table count and whether anyone may see it."""


def _seconds(stamp: Timestamp) -> float:
    return stamp.seconds + stamp.nanos / 1e9


class LobbyRoomSource:
    """Rooms through the lobby's GetRoom / ListRooms (called with the table's service token)."""

    def __init__(self, stub: lobby_pb2_grpc.LobbyServiceStub) -> None:
        self._stub = stub

    async def get_room(self, room_id: str) -> Room:
        try:
            reply = await self._stub.GetRoom(lobby_pb2.GetRoomRequest(room_id=room_id))
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "lobby") from error
        room = room_from_pb(reply.room)
        if room is None:
            raise NotFound("ROOM_NOT_FOUND", "the room is not a cash game", {"room_id": room_id})
        return room

    async def get_room_entry(self, room_id: str) -> lobby_pb2.Room:
        try:
            reply = await self._stub.GetRoom(lobby_pb2.GetRoomRequest(room_id=room_id))
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "lobby") from error
        room: lobby_pb2.Room = reply.room
        return room

    async def authorize_seat(self, player_id: str, room_id: str, suggested_name: str = "") -> SeatGrant:
        try:
            reply = await self._stub.AuthorizeSeat(
                lobby_pb2.AuthorizeSeatRequest(
                    player_id=player_id, room_id=room_id, suggested_name=suggested_name
                )
            )
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "lobby") from error
        return SeatGrant(int(reply.room_revision), reply.display_name, reply.avatar_url)

    async def authorize_view(self, player_id: str, room_id: str) -> ViewGrant:
        try:
            reply = await self._stub.AuthorizeView(
                lobby_pb2.AuthorizeViewRequest(player_id=player_id, room_id=room_id)
            )
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "lobby") from error
        return ViewGrant(int(reply.room_revision), int(reply.table_count), reply.everyone)

    async def read_maintenance(self) -> MaintenanceState:
        """The lobby's maintenance switches (lobby-wide and every room's), for `MaintenanceWatcher`."""
        try:
            reply = await self._stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(all_rooms=True))
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "lobby") from error

        def switches(m: lobby_pb2.Maintenance) -> MaintenanceSwitches:
            # A scheduled window's times come along: the shard reads them on its own clock.
            return MaintenanceSwitches(
                m.no_new_seats,
                m.no_new_hands,
                m.message,
                _seconds(m.start_time) if m.HasField("start_time") else None,
                _seconds(m.end_time) if m.HasField("end_time") else None,
            )

        return MaintenanceState(
            lobby=switches(reply.lobby), rooms={r.room_id: switches(r.maintenance) for r in reply.rooms}
        )

    async def list_rooms(self) -> list[Room]:
        rooms: list[Room] = []
        token = ""
        while True:
            try:
                reply = await self._stub.ListRooms(
                    lobby_pb2.ListRoomsRequest(page=common_pb2.PageRequest(page_size=100, page_token=token))
                )
            except grpc.aio.AioRpcError as error:
                raise translate_rpc_error(error, "lobby") from error
            rooms.extend(r for r in (room_from_pb(pb) for pb in reply.rooms) if r is not None)
            token = reply.page.next_page_token
            if not token:
                return rooms
