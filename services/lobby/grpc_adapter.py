"""The gRPC face of the lobby: protobuf in, application calls, protobuf out; nothing decided here.

Who may call what is the access policy in `assembly.py`. Every mutating request is fingerprinted
(its deterministic bytes without the request id) so a retry with other fields is a conflict.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from service_runtime.auth import MAX_SUGGESTED_NAME, current_caller
from service_runtime.errors import InvalidArgument
from service_runtime.proto_time import to_timestamp
from service_runtime.table_directory import MaintenanceSwitches, figures_to_summary
from services.lobby.access import AccessControl, MaintenanceView
from services.lobby.avatars import shown_avatar_url
from services.lobby.catalogue import Catalogue, RoomView
from services.lobby.display_names import suggestion_from
from services.lobby.floor import Floor, Occupancy, TableView
from services.lobby.joining import Joining
from services.lobby.profiles import Profiles
from services.lobby.rooms import MAX_MESSAGE_LENGTH, Pool, Room, RoomSpec, Variant, check_text
from services.lobby.storage import Profile, RoomFilter

SERVICE_NAME = "poker.lobby.v1.LobbyService"

_VARIANTS = {
    common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM: Variant.NO_LIMIT_HOLDEM,
    common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM: Variant.FIXED_LIMIT_HOLDEM,
    common_pb2.GAME_VARIANT_CASINO_HOLDEM: Variant.CASINO_HOLDEM,
    common_pb2.GAME_VARIANT_RUSSIAN_POKER: Variant.RUSSIAN_POKER,
}
_VARIANT_PB = {v: k for k, v in _VARIANTS.items()}
_POOLS = {common_pb2.CHIP_POOL_GRAM: Pool.GRAM, common_pb2.CHIP_POOL_MPX: Pool.MPX}
_POOL_PB = {v: k for k, v in _POOLS.items()}
_STAKES_OF = {
    Variant.NO_LIMIT_HOLDEM: "blinds",
    Variant.FIXED_LIMIT_HOLDEM: "limits",
    Variant.CASINO_HOLDEM: "antes",
    Variant.RUSSIAN_POKER: "antes",
}


def fingerprint(request: Message) -> str:
    """A hash of the request's fields except `request_id`, stable across retries."""
    copy = type(request)()
    copy.CopyFrom(request)
    copy.ClearField("request_id")
    return hashlib.sha256(copy.SerializeToString(deterministic=True)).hexdigest()


def _moment(stamp: Timestamp, field: str) -> datetime:
    """A Timestamp as an aware datetime; FIELD_INVALID outside what a datetime holds."""
    try:
        return stamp.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError, OSError) as exc:
        raise InvalidArgument("FIELD_INVALID", f"{field} is not a valid time", {"field": field}) from exc


def _variant(value: int, field: str, *, required: bool) -> Variant | None:
    if value == common_pb2.GAME_VARIANT_UNSPECIFIED and not required:
        return None
    found: Variant | None = _VARIANTS.get(value)  # type: ignore[call-overload]
    if found is None:
        raise InvalidArgument(
            "FIELD_INVALID" if value else "FIELD_REQUIRED", f"{field} is unknown", {"field": field}
        )
    return found


def _pool(value: int, field: str, *, required: bool) -> Pool | None:
    if value == common_pb2.CHIP_POOL_UNSPECIFIED and not required:
        return None
    found: Pool | None = _POOLS.get(value)  # type: ignore[call-overload]
    if found is None:
        raise InvalidArgument("POOL_INVALID", "the pool must be GRAM or MPX", {"field": field})
    return found


def spec_from_pb(room: lobby_pb2.Room, table_count: int, current: RoomSpec | None = None) -> RoomSpec:
    """The spec a request describes; with `current`, unspecified variant/pool/seats keep theirs."""
    variant: Variant | None
    pool: Pool | None
    if current is not None:
        variant = _variant(room.variant, "room.variant", required=False) or current.variant
        pool = _pool(room.pool, "room.pool", required=False) or current.pool
        seats = room.seats_per_table or current.seats_per_table
        tables = table_count or current.table_count
    else:
        variant = _variant(room.variant, "room.variant", required=True)
        pool = _pool(room.pool, "room.pool", required=True)
        seats, tables = room.seats_per_table, table_count
    assert variant is not None
    assert pool is not None
    which = room.WhichOneof("stakes")
    if which != _STAKES_OF[variant]:
        raise InvalidArgument(
            "FIELD_REQUIRED",
            f"a {variant} room needs room.{_STAKES_OF[variant]}",
            {"field": f"room.{_STAKES_OF[variant]}"},
        )
    stakes: dict[str, int] = {}
    if which == "blinds":
        stakes = {
            "small_blind": room.blinds.small_blind,
            "big_blind": room.blinds.big_blind,
            "step": room.blinds.step,
        }
    elif which == "limits":
        stakes = {"small_bet": room.limits.small_bet, "big_bet": room.limits.big_bet}
    else:
        stakes = {
            "min_ante": room.antes.min_ante,
            "max_ante": room.antes.max_ante,
            "max_payout": room.antes.max_payout,
        }
    return RoomSpec(
        room_id=room.room_id,
        display_name=room.display_name,
        variant=variant,
        pool=pool,
        seats_per_table=seats,
        min_buy_in=room.min_buy_in,
        max_buy_in=room.max_buy_in,
        private=room.private,
        rake_basis_points=room.rake_basis_points,
        rake_cap=room.rake_cap,
        rake_no_flop_no_drop=room.rake_no_flop_no_drop,
        table_count=tables,
        **stakes,
    )


def occupancy_pb(occupancy: Occupancy) -> lobby_pb2.RoomOccupancy:
    return lobby_pb2.RoomOccupancy(
        running_tables=occupancy.running_tables,
        seats_taken=occupancy.seats_taken,
        seats_free=occupancy.seats_free,
        players_waiting=occupancy.players_waiting,
    )


def room_pb(room: Room, occupancy: Occupancy | None = None) -> lobby_pb2.Room:
    spec = room.spec
    message = lobby_pb2.Room(
        room_id=spec.room_id,
        display_name=spec.display_name,
        variant=_VARIANT_PB[spec.variant],
        pool=_POOL_PB[spec.pool],
        seats_per_table=spec.seats_per_table,
        min_buy_in=spec.min_buy_in,
        max_buy_in=spec.max_buy_in,
        private=spec.private,
        rake_basis_points=spec.rake_basis_points,
        rake_cap=spec.rake_cap,
        create_time=to_timestamp(room.created_at),
        rake_no_flop_no_drop=spec.rake_no_flop_no_drop,
        disabled=room.disabled,
        table_count=spec.table_count,
        revision=room.revision,
        update_time=to_timestamp(room.updated_at),
        occupancy=occupancy_pb(occupancy) if occupancy is not None else None,
    )
    if spec.variant is Variant.NO_LIMIT_HOLDEM:
        message.blinds.CopyFrom(
            lobby_pb2.BlindStakes(small_blind=spec.small_blind, big_blind=spec.big_blind, step=spec.step)
        )
    elif spec.variant is Variant.FIXED_LIMIT_HOLDEM:
        message.limits.CopyFrom(lobby_pb2.LimitStakes(small_bet=spec.small_bet, big_bet=spec.big_bet))
    else:
        message.antes.CopyFrom(
            lobby_pb2.AnteStakes(min_ante=spec.min_ante, max_ante=spec.max_ante, max_payout=spec.max_payout)
        )
    return message


def room_view_pb(view: RoomView) -> lobby_pb2.Room:
    return room_pb(view.room, view.occupancy)


def table_view_pb(view: TableView) -> lobby_pb2.TableSummary:
    return figures_to_summary(view.figures, published=view.published)


def maintenance_pb(view: MaintenanceView) -> lobby_pb2.Maintenance:
    return lobby_pb2.Maintenance(
        no_new_seats=view.switches.no_new_seats,
        no_new_hands=view.switches.no_new_hands,
        message=view.switches.message,
        set_by=view.set_by,
        update_time=to_timestamp(view.updated_at),
        start_time=_stamp_of(view.switches.starts_at),
        end_time=_stamp_of(view.switches.ends_at),
        in_force=view.in_force,
    )


def _stamp_of(seconds: float | None) -> Timestamp | None:
    return None if seconds is None else to_timestamp(datetime.fromtimestamp(seconds, UTC))


def profile_pb(profile: Profile) -> lobby_pb2.PlayerProfile:
    return lobby_pb2.PlayerProfile(
        display_name=profile.display_name,
        update_time=to_timestamp(profile.update_time),
        avatar_url=profile.avatar_url,
        show_avatar=profile.show_avatar,
    )


class LobbyServicer(lobby_pb2_grpc.LobbyServiceServicer):
    """One thin handler per RPC over the catalogue, the floor, joining, access control and profiles."""

    def __init__(
        self, catalogue: Catalogue, floor: Floor, joining: Joining, access: AccessControl, profiles: Profiles
    ) -> None:
        self._catalogue = catalogue
        self._floor = floor
        self._joining = joining
        self._access = access
        self._profiles = profiles

    # --- Catalogue. ---

    async def ListRooms(  # noqa: N802 - the generated servicer names methods after the RPCs
        self, request: lobby_pb2.ListRoomsRequest, context: Any
    ) -> lobby_pb2.ListRoomsResponse:
        where = RoomFilter(
            variant=_variant(request.variant, "variant", required=False),
            pool=_pool(request.pool, "pool", required=False),
            min_stake=request.min_stake,
            max_stake=request.max_stake,
            include_disabled=request.include_disabled,
        )
        views, next_token = await self._catalogue.list_rooms(
            current_caller(), where, page_size=request.page.page_size, page_token=request.page.page_token
        )
        return lobby_pb2.ListRoomsResponse(
            rooms=[room_view_pb(v) for v in views], page=common_pb2.PageResponse(next_page_token=next_token)
        )

    async def GetRoom(  # noqa: N802
        self, request: lobby_pb2.GetRoomRequest, context: Any
    ) -> lobby_pb2.GetRoomResponse:
        return lobby_pb2.GetRoomResponse(
            room=room_view_pb(await self._catalogue.get_room(current_caller(), request.room_id))
        )

    async def CreateRoom(  # noqa: N802
        self, request: lobby_pb2.CreateRoomRequest, context: Any
    ) -> lobby_pb2.CreateRoomResponse:
        if not request.HasField("room"):
            raise InvalidArgument("FIELD_REQUIRED", "room is required", {"field": "room"})
        spec = spec_from_pb(request.room, request.table_count)
        room = await self._catalogue.create_room(
            current_caller(), request.request_id, fingerprint(request), spec
        )
        return lobby_pb2.CreateRoomResponse(
            room=room_pb(room), table_ids=[f"{room.room_id}.{n}" for n in range(1, room.spec.table_count + 1)]
        )

    async def UpdateRoom(  # noqa: N802
        self, request: lobby_pb2.UpdateRoomRequest, context: Any
    ) -> lobby_pb2.UpdateRoomResponse:
        if not request.HasField("room"):
            raise InvalidArgument("FIELD_REQUIRED", "room is required", {"field": "room"})
        room = await self._catalogue.update_room(
            current_caller(),
            request.request_id,
            fingerprint(request),
            request.room.room_id,
            lambda current: spec_from_pb(request.room, request.room.table_count, current),
        )
        return lobby_pb2.UpdateRoomResponse(room=room_pb(room))

    async def DisableRoom(  # noqa: N802
        self, request: lobby_pb2.DisableRoomRequest, context: Any
    ) -> lobby_pb2.DisableRoomResponse:
        room = await self._catalogue.set_disabled(
            current_caller(), request.request_id, fingerprint(request), request.room_id, disabled=True
        )
        return lobby_pb2.DisableRoomResponse(room=room_pb(room))

    async def EnableRoom(  # noqa: N802
        self, request: lobby_pb2.EnableRoomRequest, context: Any
    ) -> lobby_pb2.EnableRoomResponse:
        room = await self._catalogue.set_disabled(
            current_caller(), request.request_id, fingerprint(request), request.room_id, disabled=False
        )
        return lobby_pb2.EnableRoomResponse(room=room_pb(room))

    # --- Tables and routing. ---

    async def ListTables(  # noqa: N802
        self, request: lobby_pb2.ListTablesRequest, context: Any
    ) -> lobby_pb2.ListTablesResponse:
        views = await self._joining.list_tables(current_caller(), request.room_id)
        return lobby_pb2.ListTablesResponse(tables=[table_view_pb(v) for v in views])

    async def JoinTable(  # noqa: N802
        self, request: lobby_pb2.JoinTableRequest, context: Any
    ) -> lobby_pb2.JoinTableResponse:
        joined = await self._joining.join_table(
            current_caller(), request.room_id, request.table_id, spectate=request.spectate
        )
        return lobby_pb2.JoinTableResponse(
            table_id=joined.table_id,
            shard_id=joined.owner.shard.shard_id,
            address=joined.owner.shard.address,
            fencing_token=joined.owner.fencing_token,
            new_table=joined.new_table,
        )

    async def AuthorizeSeat(  # noqa: N802
        self, request: lobby_pb2.AuthorizeSeatRequest, context: Any
    ) -> lobby_pb2.AuthorizeSeatResponse:
        check_text(request.suggested_name, "suggested_name", MAX_SUGGESTED_NAME, required=False)
        revision = await self._joining.authorize_seat(request.player_id, request.room_id)
        profile = await self._profiles.ensure_profile(
            request.player_id, suggestion_from(request.suggested_name, request.player_id)
        )
        return lobby_pb2.AuthorizeSeatResponse(
            room_revision=revision,
            display_name=profile.display_name,
            avatar_url=shown_avatar_url(profile.avatar_url, profile.show_avatar),
        )

    async def AuthorizeView(  # noqa: N802
        self, request: lobby_pb2.AuthorizeViewRequest, context: Any
    ) -> lobby_pb2.AuthorizeViewResponse:
        revision, table_count, everyone = await self._joining.authorize_view(
            request.player_id, request.room_id
        )
        return lobby_pb2.AuthorizeViewResponse(
            room_revision=revision, table_count=table_count, everyone=everyone
        )

    # --- Maintenance. ---

    async def SetMaintenance(  # noqa: N802
        self, request: lobby_pb2.SetMaintenanceRequest, context: Any
    ) -> lobby_pb2.SetMaintenanceResponse:
        wanted = request.maintenance
        check_text(wanted.message, "maintenance.message", MAX_MESSAGE_LENGTH, required=False)
        switches = MaintenanceSwitches(wanted.no_new_seats, wanted.no_new_hands, wanted.message)
        window = (
            _moment(wanted.start_time, "maintenance.start_time") if wanted.HasField("start_time") else None,
            _moment(wanted.end_time, "maintenance.end_time") if wanted.HasField("end_time") else None,
        )
        view = await self._access.set_maintenance(
            current_caller(), request.request_id, fingerprint(request), request.room_id, switches, window
        )
        return lobby_pb2.SetMaintenanceResponse(maintenance=maintenance_pb(view))

    async def GetMaintenance(  # noqa: N802
        self, request: lobby_pb2.GetMaintenanceRequest, context: Any
    ) -> lobby_pb2.GetMaintenanceResponse:
        lobby, room, rooms = await self._access.get_maintenance(
            current_caller(), request.room_id, all_rooms=request.all_rooms
        )
        response = lobby_pb2.GetMaintenanceResponse(
            lobby=maintenance_pb(lobby),
            rooms=[lobby_pb2.RoomMaintenance(room_id=r.scope, maintenance=maintenance_pb(r)) for r in rooms],
        )
        if room is not None:
            response.room.CopyFrom(maintenance_pb(room))
        return response

    # --- Access. ---

    async def UpdateAllowList(  # noqa: N802
        self, request: lobby_pb2.UpdateAllowListRequest, context: Any
    ) -> lobby_pb2.UpdateAllowListResponse:
        count = await self._access.update_allow_list(
            current_caller(),
            request.request_id,
            fingerprint(request),
            request.room_id,
            list(request.add_player_ids),
            list(request.remove_player_ids),
        )
        return lobby_pb2.UpdateAllowListResponse(player_count=count)

    async def ListAllowList(  # noqa: N802
        self, request: lobby_pb2.ListAllowListRequest, context: Any
    ) -> lobby_pb2.ListAllowListResponse:
        players, next_token = await self._access.list_allow_list(
            request.room_id, page_size=request.page.page_size, page_token=request.page.page_token
        )
        return lobby_pb2.ListAllowListResponse(
            player_ids=players, page=common_pb2.PageResponse(next_page_token=next_token)
        )

    async def CreateInviteCode(  # noqa: N802
        self, request: lobby_pb2.CreateInviteCodeRequest, context: Any
    ) -> lobby_pb2.CreateInviteCodeResponse:
        expires = _moment(request.expire_time, "expire_time") if request.HasField("expire_time") else None
        code = await self._access.create_invite_code(
            current_caller(),
            request.request_id,
            fingerprint(request),
            request.room_id,
            request.max_uses,
            expires,
        )
        return lobby_pb2.CreateInviteCodeResponse(code=code)

    async def RedeemInviteCode(  # noqa: N802
        self, request: lobby_pb2.RedeemInviteCodeRequest, context: Any
    ) -> lobby_pb2.RedeemInviteCodeResponse:
        room_id = await self._access.redeem_invite_code(
            current_caller(), request.request_id, fingerprint(request), request.code
        )
        return lobby_pb2.RedeemInviteCodeResponse(room_id=room_id)

    # --- Profiles. ---

    async def GetMyProfile(  # noqa: N802
        self, request: lobby_pb2.GetMyProfileRequest, context: Any
    ) -> lobby_pb2.GetMyProfileResponse:
        caller = current_caller()
        profile = await self._profiles.ensure_profile(
            caller.subject, suggestion_from(caller.suggested_name, caller.subject)
        )
        return lobby_pb2.GetMyProfileResponse(profile=profile_pb(profile))

    async def FindPlayers(  # noqa: N802
        self, request: lobby_pb2.FindPlayersRequest, context: Any
    ) -> lobby_pb2.FindPlayersResponse:
        found, next_token = await self._profiles.find(
            request.query, page_size=request.page.page_size, page_token=request.page.page_token
        )
        return lobby_pb2.FindPlayersResponse(
            players=[
                lobby_pb2.PlayerMatch(player_id=p.player_id, display_name=p.display_name) for p in found
            ],
            page=common_pb2.PageResponse(next_page_token=next_token),
        )

    async def SetDisplayName(  # noqa: N802
        self, request: lobby_pb2.SetDisplayNameRequest, context: Any
    ) -> lobby_pb2.SetDisplayNameResponse:
        profile = await self._profiles.set_display_name(
            current_caller(), request.request_id, fingerprint(request), request.display_name
        )
        return lobby_pb2.SetDisplayNameResponse(profile=profile_pb(profile))

    async def SetShowAvatar(  # noqa: N802
        self, request: lobby_pb2.SetShowAvatarRequest, context: Any
    ) -> lobby_pb2.SetShowAvatarResponse:
        profile = await self._profiles.set_show_avatar(
            current_caller(), request.request_id, fingerprint(request), request.show_avatar
        )
        return lobby_pb2.SetShowAvatarResponse(profile=profile_pb(profile))

    async def RecordSignInPhoto(  # noqa: N802
        self, request: lobby_pb2.RecordSignInPhotoRequest, context: Any
    ) -> lobby_pb2.RecordSignInPhotoResponse:
        # Any URL that is not a Telegram photo's (too long, another host, not a URL) is dropped.
        profile = await self._profiles.record_sign_in_photo(
            current_caller(), request.request_id, fingerprint(request), request.photo_url
        )
        return lobby_pb2.RecordSignInPhotoResponse(profile=profile_pb(profile))
