"""The catalogue through a real gRPC server on port 0: list, filter, page, get, create, update,
disable; roles; bad input answered with its code and reason and nothing changed."""

from __future__ import annotations

import grpc

from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2
from service_runtime.testing import auth_metadata, token_for
from tests.lobby.conftest import ADMIN, ALICE, Lobby, expect_error

INVALID = grpc.StatusCode.INVALID_ARGUMENT


def _new_room(room_id: str = "nlhe-gram-test", **changes: object) -> lobby_pb2.Room:
    room = lobby_pb2.Room(
        room_id=room_id,
        display_name="Test room",
        variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
        pool=common_pb2.CHIP_POOL_GRAM,
        seats_per_table=6,
        blinds=lobby_pb2.BlindStakes(small_blind=25, big_blind=50, step=25),
        min_buy_in=2_000,
        max_buy_in=5_000,
        rake_cap=30,
    )
    for name, value in changes.items():
        if isinstance(value, (lobby_pb2.BlindStakes, lobby_pb2.LimitStakes, lobby_pb2.AnteStakes)):
            getattr(room, name).CopyFrom(value)
        else:
            setattr(room, name, value)
    return room


async def _all_rooms(
    lobby: Lobby, request: lobby_pb2.ListRoomsRequest, metadata: object = ALICE
) -> list[lobby_pb2.Room]:
    rooms: list[lobby_pb2.Room] = []
    token = ""
    while True:
        request.page.page_token = token
        page = await lobby.stub.ListRooms(request, metadata=metadata)
        rooms.extend(page.rooms)
        token = page.page.next_page_token
        if not token:
            return rooms


async def test_list_rooms_pages_through_the_whole_catalogue_in_id_order(lobby: Lobby) -> None:
    rooms = await _all_rooms(lobby, lobby_pb2.ListRoomsRequest(page=common_pb2.PageRequest(page_size=3)))
    ids = [r.room_id for r in rooms]
    assert len(ids) == 20
    assert ids == sorted(ids)
    duel = next(r for r in rooms if r.room_id == "nlhe-gram-duel")
    assert (duel.blinds.small_blind, duel.blinds.big_blind, duel.blinds.step) == (5, 10, 5)
    assert (duel.min_buy_in, duel.seats_per_table, duel.table_count) == (1_000, 2, 1)
    # One standing table with nobody at it: two free seats, nothing running.
    assert (duel.occupancy.running_tables, duel.occupancy.seats_free) == (0, 2)


async def test_list_rooms_filters_by_variant_pool_and_stake(lobby: Lobby) -> None:
    mpx_limit = await _all_rooms(
        lobby,
        lobby_pb2.ListRoomsRequest(
            variant=common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM, pool=common_pb2.CHIP_POOL_MPX
        ),
    )
    assert sorted(r.room_id for r in mpx_limit) == [
        "flhe-mpx-10max-10-20", "flhe-mpx-10max-50-100", "flhe-mpx-6max-10-20", "flhe-mpx-6max-50-100",
    ]  # fmt: skip
    big = await _all_rooms(
        lobby,
        lobby_pb2.ListRoomsRequest(
            variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM, min_stake=50, max_stake=100
        ),
    )
    assert sorted(r.room_id for r in big) == [
        "nlhe-gram-high-roller", "nlhe-gram-prestige", "nlhe-mpx-high-roller", "nlhe-mpx-prestige",
    ]  # fmt: skip
    house = await _all_rooms(lobby, lobby_pb2.ListRoomsRequest(variant=common_pb2.GAME_VARIANT_RUSSIAN_POKER))
    assert [(r.room_id, r.antes.max_payout) for r in house] == [
        ("russian-poker-gram", 50_000),
        ("russian-poker-mpx", 50_000),
    ]


BAD_FILTERS = [
    (lobby_pb2.ListRoomsRequest(page=common_pb2.PageRequest(page_token="forged")), "PAGE_TOKEN_INVALID"),
    (lobby_pb2.ListRoomsRequest(page=common_pb2.PageRequest(page_size=-1)), "FIELD_INVALID"),
    (lobby_pb2.ListRoomsRequest(min_stake=-5), "FIELD_INVALID"),
    (lobby_pb2.ListRoomsRequest(min_stake=100, max_stake=10), "FIELD_INVALID"),
    (lobby_pb2.ListRoomsRequest(variant=99), "FIELD_INVALID"),  # type: ignore[arg-type]
    (lobby_pb2.ListRoomsRequest(pool=7), "POOL_INVALID"),  # type: ignore[arg-type]
]


async def test_bad_filters_are_refused_with_their_reason(lobby: Lobby) -> None:
    for request, reason in BAD_FILTERS:
        await expect_error(lobby.stub.ListRooms(request, metadata=ALICE), INVALID, reason)


async def test_get_room_and_unknown_or_malformed_rooms(lobby: Lobby) -> None:
    room = (
        await lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="casino-holdem-gram"), metadata=ALICE)
    ).room
    assert (room.variant, room.pool, room.antes.max_payout) == (
        common_pb2.GAME_VARIANT_CASINO_HOLDEM, common_pb2.CHIP_POOL_GRAM, 50_000,
    )  # fmt: skip
    await expect_error(
        lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="no-such-room"), metadata=ALICE),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )
    for bad in ("x" * 129, "Bad Room", "room\x00id", ""):
        await expect_error(
            lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id=bad), metadata=ALICE),
            INVALID,
            "FIELD_REQUIRED" if not bad else "FIELD_INVALID",
        )


async def test_tokens_are_checked_on_every_rpc(lobby: Lobby) -> None:
    request = lobby_pb2.GetRoomRequest(room_id="nlhe-gram-duel")
    await expect_error(lobby.stub.GetRoom(request), grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")
    expired = token_for("alice", "player", ttl_seconds=-10)
    await expect_error(
        lobby.stub.GetRoom(request, metadata=(("authorization", f"Bearer {expired}"),)),
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_EXPIRED",
    )
    head, claims, _ = token_for("alice", "admin").split(".")
    forged = f"{head}.{claims}.{'A' * 43}"
    await expect_error(
        lobby.stub.CreateRoom(
            lobby_pb2.CreateRoomRequest(request_id="r1", room=_new_room(), table_count=1),
            metadata=(("authorization", f"Bearer {forged}"),),
        ),
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_INVALID_SIGNATURE",
    )


async def test_admin_rpcs_refuse_players_and_change_nothing(lobby: Lobby) -> None:
    calls = [
        lobby.stub.CreateRoom(
            lobby_pb2.CreateRoomRequest(request_id="r", room=_new_room(), table_count=1), metadata=ALICE
        ),
        lobby.stub.UpdateRoom(
            lobby_pb2.UpdateRoomRequest(request_id="r", room=_new_room("nlhe-gram-duel")), metadata=ALICE
        ),
        lobby.stub.DisableRoom(
            lobby_pb2.DisableRoomRequest(request_id="r", room_id="nlhe-gram-duel"), metadata=ALICE
        ),
        lobby.stub.EnableRoom(
            lobby_pb2.EnableRoomRequest(request_id="r", room_id="nlhe-gram-duel"), metadata=ALICE
        ),
        lobby.stub.SetMaintenance(
            lobby_pb2.SetMaintenanceRequest(
                request_id="r", maintenance=lobby_pb2.Maintenance(no_new_seats=True)
            ),
            metadata=ALICE,
        ),
        lobby.stub.UpdateAllowList(
            lobby_pb2.UpdateAllowListRequest(request_id="r", add_player_ids=["alice"]), metadata=ALICE
        ),
        lobby.stub.ListAllowList(lobby_pb2.ListAllowListRequest(), metadata=ALICE),
        lobby.stub.CreateInviteCode(
            lobby_pb2.CreateInviteCodeRequest(request_id="r", max_uses=5), metadata=ALICE
        ),
        lobby.stub.AuthorizeSeat(
            lobby_pb2.AuthorizeSeatRequest(player_id="alice", room_id="nlhe-gram-duel"), metadata=ALICE
        ),
        lobby.stub.ListRooms(lobby_pb2.ListRoomsRequest(include_disabled=True), metadata=ALICE),
    ]
    for call in calls:
        await expect_error(call, grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED")
    await expect_error(
        lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="nlhe-gram-test"), metadata=ADMIN),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )
    maintenance = await lobby.stub.GetMaintenance(lobby_pb2.GetMaintenanceRequest(), metadata=ALICE)
    assert not maintenance.lobby.no_new_seats


async def test_create_room_is_idempotent_and_a_changed_retry_conflicts(lobby: Lobby) -> None:
    request = lobby_pb2.CreateRoomRequest(request_id="create-1", room=_new_room(), table_count=2)
    first = await lobby.stub.CreateRoom(request, metadata=ADMIN)
    assert list(first.table_ids) == ["nlhe-gram-test.1", "nlhe-gram-test.2"]
    assert first.room.revision == 1
    lobby.clock.now = lobby.clock.now.replace(hour=13)
    again = await lobby.stub.CreateRoom(request, metadata=ADMIN)
    assert again == first
    changed = lobby_pb2.CreateRoomRequest(
        request_id="create-1", room=_new_room(display_name="Other"), table_count=2
    )
    await expect_error(
        lobby.stub.CreateRoom(changed, metadata=ADMIN), grpc.StatusCode.ALREADY_EXISTS, "IDEMPOTENCY_CONFLICT"
    )
    other_request = lobby_pb2.CreateRoomRequest(request_id="create-2", room=_new_room(), table_count=2)
    await expect_error(
        lobby.stub.CreateRoom(other_request, metadata=ADMIN),
        grpc.StatusCode.ALREADY_EXISTS,
        "ROOM_ALREADY_EXISTS",
    )
    stored = (
        await lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="nlhe-gram-test"), metadata=ALICE)
    ).room
    assert stored.display_name == "Test room"
    assert stored.occupancy.seats_free == 12


BAD_ROOMS = [
    (
        _new_room(blinds=lobby_pb2.BlindStakes(small_blind=25, big_blind=50, step=7)),
        1,
        "FIELD_INVALID",
        "room.blinds.step",
    ),
    (_new_room(seats_per_table=11), 1, "FIELD_INVALID", "room.seats_per_table"),
    (_new_room(rake_basis_points=501), 1, "FIELD_INVALID", "room.rake_basis_points"),
    (_new_room(rake_cap=31), 1, "FIELD_INVALID", "room.rake_cap"),
    (_new_room(min_buy_in=6_000), 1, "FIELD_INVALID", "room.max_buy_in"),
    (_new_room(display_name="x" * 65), 1, "FIELD_INVALID", "room.display_name"),
    (_new_room(display_name="bad\x07name"), 1, "FIELD_INVALID", "room.display_name"),
    (_new_room(display_name=""), 1, "FIELD_REQUIRED", "room.display_name"),
    (_new_room(room_id="Has Spaces"), 1, "FIELD_INVALID", "room.room_id"),
    (_new_room(pool=common_pb2.CHIP_POOL_UNSPECIFIED), 1, "POOL_INVALID", "room.pool"),
    (
        _new_room(limits=lobby_pb2.LimitStakes(small_bet=10, big_bet=20)),
        1,
        "FIELD_REQUIRED",
        "room.blinds",
    ),
    (_new_room(), 0, "FIELD_INVALID", "table_count"),
    (_new_room(), 101, "FIELD_INVALID", "table_count"),
]


async def test_bad_rooms_are_refused_and_nothing_is_created(lobby: Lobby) -> None:
    for room, table_count, reason, field in BAD_ROOMS:
        request = lobby_pb2.CreateRoomRequest(request_id="bad", room=room, table_count=table_count)
        await expect_error(lobby.stub.CreateRoom(request, metadata=ADMIN), INVALID, reason, field=field)
    listed = await _all_rooms(lobby, lobby_pb2.ListRoomsRequest(include_disabled=True), metadata=ADMIN)
    assert len(listed) == 20


async def test_update_room_changes_stakes_and_rake_and_grows_the_revision(lobby: Lobby) -> None:
    current = (
        await lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="nlhe-gram-classic"), metadata=ADMIN)
    ).room
    wanted = lobby_pb2.Room()
    wanted.CopyFrom(current)
    wanted.ClearField("occupancy")
    wanted.rake_basis_points = 500
    wanted.blinds.CopyFrom(lobby_pb2.BlindStakes(small_blind=25, big_blind=50, step=25))
    wanted.min_buy_in = wanted.max_buy_in = 5_000
    request = lobby_pb2.UpdateRoomRequest(request_id="upd-1", room=wanted)
    updated = (await lobby.stub.UpdateRoom(request, metadata=ADMIN)).room
    assert (updated.revision, updated.rake_basis_points, updated.blinds.big_blind) == (2, 500, 50)
    assert (await lobby.stub.UpdateRoom(request, metadata=ADMIN)).room.revision == 2, (
        "a retry changes nothing"
    )
    wanted.variant = common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM
    await expect_error(
        lobby.stub.UpdateRoom(lobby_pb2.UpdateRoomRequest(request_id="upd-2", room=wanted), metadata=ADMIN),
        INVALID,
        "FIELD_REQUIRED",
    )
    await expect_error(
        lobby.stub.UpdateRoom(
            lobby_pb2.UpdateRoomRequest(request_id="upd-3", room=_new_room("no-such")), metadata=ADMIN
        ),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )
    stored = (
        await lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="nlhe-gram-classic"), metadata=ADMIN)
    ).room
    assert (stored.revision, stored.variant) == (2, common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM)


async def test_a_disabled_room_is_hidden_from_players_and_listed_to_admins(lobby: Lobby) -> None:
    disabled = await lobby.stub.DisableRoom(
        lobby_pb2.DisableRoomRequest(request_id="d1", room_id="nlhe-mpx-prestige"), metadata=ADMIN
    )
    assert disabled.room.disabled
    await expect_error(
        lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="nlhe-mpx-prestige"), metadata=ALICE),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )
    assert len(await _all_rooms(lobby, lobby_pb2.ListRoomsRequest())) == 19
    assert (
        len(await _all_rooms(lobby, lobby_pb2.ListRoomsRequest(include_disabled=True), metadata=ADMIN)) == 20
    )
    await lobby.stub.EnableRoom(
        lobby_pb2.EnableRoomRequest(request_id="e1", room_id="nlhe-mpx-prestige"), metadata=ADMIN
    )
    room = (
        await lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="nlhe-mpx-prestige"), metadata=ALICE)
    ).room
    assert (room.disabled, room.revision) == (False, 3)


async def test_a_private_room_is_invisible_to_strangers(lobby: Lobby) -> None:
    await lobby.stub.CreateRoom(
        lobby_pb2.CreateRoomRequest(request_id="p1", room=_new_room("vip", private=True), table_count=1),
        metadata=ADMIN,
    )
    await expect_error(
        lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="vip"), metadata=ALICE),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )
    assert "vip" not in [r.room_id for r in await _all_rooms(lobby, lobby_pb2.ListRoomsRequest())]
    await lobby.stub.UpdateAllowList(
        lobby_pb2.UpdateAllowListRequest(request_id="a1", room_id="vip", add_player_ids=["alice"]),
        metadata=ADMIN,
    )
    assert (await lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="vip"), metadata=ALICE)).room.private
    bob = auth_metadata("bob", "player")
    await expect_error(
        lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="vip"), metadata=bob),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )
