"""Closed access and invite codes (rules 18) over gRPC: the allow-list, codes with expiry and uses,
redeeming idempotent per player, a distinct reason for unknown, expired and used-up codes."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from poker.lobby.v1 import lobby_pb2
from service_runtime.shard_registry import ShardInfo
from service_runtime.testing import auth_metadata, reason_of
from tests.lobby.conftest import ADMIN, ALICE, BOB, TABLE, Lobby, expect_error

ROOM = "nlhe-mpx-duel"
SHARD = ShardInfo("shard-a", "127.0.0.1:7201")
DENIED = grpc.StatusCode.PERMISSION_DENIED
INVALID = grpc.StatusCode.INVALID_ARGUMENT


async def _join(lobby: Lobby, metadata: object, room_id: str = ROOM) -> lobby_pb2.JoinTableResponse:
    response: lobby_pb2.JoinTableResponse = await lobby.stub.JoinTable(
        lobby_pb2.JoinTableRequest(room_id=room_id), metadata=metadata
    )
    return response


async def _code(
    lobby: Lobby, request_id: str, *, max_uses: int = 1, room_id: str = "", expire: Timestamp | None = None
) -> str:
    request = lobby_pb2.CreateInviteCodeRequest(request_id=request_id, room_id=room_id, max_uses=max_uses)
    if expire is not None:
        request.expire_time.CopyFrom(expire)
    return str((await lobby.stub.CreateInviteCode(request, metadata=ADMIN)).code)


async def _redeem(
    lobby: Lobby, metadata: object, request_id: str, code: str
) -> lobby_pb2.RedeemInviteCodeResponse:
    response: lobby_pb2.RedeemInviteCodeResponse = await lobby.stub.RedeemInviteCode(
        lobby_pb2.RedeemInviteCodeRequest(request_id=request_id, code=code), metadata=metadata
    )
    return response


async def test_closed_access_refuses_a_stranger_until_an_invite_code_lets_them_in(
    closed_lobby: Lobby,
) -> None:
    lobby = closed_lobby
    await lobby.registry.heartbeat(SHARD)
    await expect_error(_join(lobby, ALICE), DENIED, "NOT_ON_ALLOW_LIST")
    # Watching needs no seat, so closed access does not stop it.
    assert (
        await lobby.stub.JoinTable(lobby_pb2.JoinTableRequest(room_id=ROOM, spectate=True), metadata=ALICE)
    ).address
    code = await _code(lobby, "code-1", max_uses=1)
    assert (await _redeem(lobby, ALICE, "redeem-1", code)).room_id == ""
    assert (await _join(lobby, ALICE)).shard_id == "shard-a"
    # Idempotent per player: the same request, or a new request of the same player, uses nothing more.
    await _redeem(lobby, ALICE, "redeem-1", code)
    await _redeem(lobby, ALICE, "redeem-2", code)
    await expect_error(
        _redeem(lobby, BOB, "redeem-3", code), grpc.StatusCode.FAILED_PRECONDITION, "INVITE_CODE_EXHAUSTED"
    )
    await expect_error(_join(lobby, BOB), DENIED, "NOT_ON_ALLOW_LIST")
    listed = await lobby.stub.ListAllowList(lobby_pb2.ListAllowListRequest(), metadata=ADMIN)
    assert list(listed.player_ids) == ["alice"]


async def test_the_shard_asks_the_same_question_before_sitdown(closed_lobby: Lobby) -> None:
    lobby = closed_lobby
    request = lobby_pb2.AuthorizeSeatRequest(player_id="bob", room_id=ROOM)
    await expect_error(lobby.stub.AuthorizeSeat(request, metadata=TABLE), DENIED, "NOT_ON_ALLOW_LIST")
    await lobby.stub.UpdateAllowList(
        lobby_pb2.UpdateAllowListRequest(request_id="u1", add_player_ids=["bob"]), metadata=ADMIN
    )
    assert (await lobby.stub.AuthorizeSeat(request, metadata=TABLE)).room_revision == 1
    await expect_error(
        lobby.stub.AuthorizeSeat(
            lobby_pb2.AuthorizeSeatRequest(player_id="bob", room_id="nope"), metadata=TABLE
        ),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )
    await expect_error(
        lobby.stub.AuthorizeSeat(lobby_pb2.AuthorizeSeatRequest(player_id="", room_id=ROOM), metadata=TABLE),
        INVALID,
        "FIELD_REQUIRED",
    )


async def test_expired_and_unknown_codes_have_their_own_reasons(closed_lobby: Lobby) -> None:
    lobby = closed_lobby
    expire = Timestamp()
    expire.FromDatetime(lobby.clock.now + timedelta(hours=1))
    code = await _code(lobby, "code-exp", max_uses=10, expire=expire)
    lobby.clock.advance(timedelta(hours=2))
    await expect_error(
        _redeem(lobby, ALICE, "r1", code), grpc.StatusCode.FAILED_PRECONDITION, "INVITE_CODE_EXPIRED"
    )
    await expect_error(
        _redeem(lobby, ALICE, "r2", "NOSUCHCODE"), grpc.StatusCode.NOT_FOUND, "INVITE_CODE_INVALID"
    )
    await expect_error(_redeem(lobby, ALICE, "r3", ""), INVALID, "FIELD_REQUIRED")
    await expect_error(_redeem(lobby, ALICE, "r4", "x" * 33), INVALID, "FIELD_INVALID")
    await expect_error(_redeem(lobby, ALICE, "r5", "AB\x00CD"), INVALID, "FIELD_INVALID")
    past = Timestamp()
    past.FromDatetime(lobby.clock.now - timedelta(seconds=1))
    for request, field in (
        (lobby_pb2.CreateInviteCodeRequest(request_id="c1", max_uses=0), "max_uses"),
        (lobby_pb2.CreateInviteCodeRequest(request_id="c2", max_uses=100_001), "max_uses"),
        (lobby_pb2.CreateInviteCodeRequest(request_id="c3", max_uses=1, expire_time=past), "expire_time"),
        (lobby_pb2.CreateInviteCodeRequest(request_id="c4", max_uses=1, room_id="Bad Room"), "room_id"),
    ):
        await expect_error(
            lobby.stub.CreateInviteCode(request, metadata=ADMIN), INVALID, "FIELD_INVALID", field=field
        )
    listed = await lobby.stub.ListAllowList(lobby_pb2.ListAllowListRequest(), metadata=ADMIN)
    assert list(listed.player_ids) == []


async def test_a_code_for_a_private_room_opens_that_room_only(lobby: Lobby) -> None:
    await lobby.registry.heartbeat(SHARD)
    room = (
        await lobby.stub.GetRoom(lobby_pb2.GetRoomRequest(room_id="nlhe-mpx-prestige"), metadata=ADMIN)
    ).room
    room.private = True
    room.ClearField("occupancy")
    await lobby.stub.UpdateRoom(lobby_pb2.UpdateRoomRequest(request_id="priv", room=room), metadata=ADMIN)
    await expect_error(_join(lobby, ALICE, "nlhe-mpx-prestige"), grpc.StatusCode.NOT_FOUND, "ROOM_NOT_FOUND")
    code = await _code(lobby, "code-room", max_uses=2, room_id="nlhe-mpx-prestige")
    assert (await _redeem(lobby, ALICE, "r1", code)).room_id == "nlhe-mpx-prestige"
    assert (await _join(lobby, ALICE, "nlhe-mpx-prestige")).address == SHARD.address
    # The shard's question for a reader: alice may see it, and the answer is hers, not everyone's
    # (a shard keeps an `everyone` answer for every reader of the room).
    seen = await lobby.stub.AuthorizeView(
        lobby_pb2.AuthorizeViewRequest(player_id="alice", room_id="nlhe-mpx-prestige"), metadata=TABLE
    )
    assert not seen.everyone
    await expect_error(
        lobby.stub.CreateInviteCode(
            lobby_pb2.CreateInviteCodeRequest(request_id="code-x", room_id="no-such-room", max_uses=1),
            metadata=ADMIN,
        ),
        grpc.StatusCode.NOT_FOUND,
        "ROOM_NOT_FOUND",
    )


async def test_the_last_use_of_a_code_goes_to_exactly_one_of_many_players(closed_lobby: Lobby) -> None:
    lobby = closed_lobby
    code = await _code(lobby, "code-race", max_uses=1)
    players = [f"racer-{n}" for n in range(6)]
    results = await asyncio.gather(
        *(_redeem(lobby, auth_metadata(p, "player"), f"race-{p}", code) for p in players),
        return_exceptions=True,
    )
    won = [r for r in results if isinstance(r, lobby_pb2.RedeemInviteCodeResponse)]
    lost = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(won) == 1
    assert {(e.code(), reason_of(e)) for e in lost} == {
        (grpc.StatusCode.FAILED_PRECONDITION, "INVITE_CODE_EXHAUSTED")
    }
    listed = await lobby.stub.ListAllowList(lobby_pb2.ListAllowListRequest(), metadata=ADMIN)
    assert len(listed.player_ids) == 1


async def test_allow_list_updates_are_idempotent_paged_and_checked(lobby: Lobby) -> None:
    players = [f"p{n:03d}" for n in range(7)]
    request = lobby_pb2.UpdateAllowListRequest(request_id="al-1", add_player_ids=players)
    assert (await lobby.stub.UpdateAllowList(request, metadata=ADMIN)).player_count == 7
    assert (await lobby.stub.UpdateAllowList(request, metadata=ADMIN)).player_count == 7
    changed = lobby_pb2.UpdateAllowListRequest(request_id="al-1", add_player_ids=players[:3])
    await expect_error(
        lobby.stub.UpdateAllowList(changed, metadata=ADMIN),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    removed = lobby_pb2.UpdateAllowListRequest(request_id="al-2", remove_player_ids=["p000", "p001"])
    assert (await lobby.stub.UpdateAllowList(removed, metadata=ADMIN)).player_count == 5
    seen: list[str] = []
    token = ""
    while True:
        page = await lobby.stub.ListAllowList(
            lobby_pb2.ListAllowListRequest(page={"page_size": 2, "page_token": token}), metadata=ADMIN
        )
        seen += page.player_ids
        token = page.page.next_page_token
        if not token:
            break
    assert seen == players[2:]
    for bad, reason in (
        (lobby_pb2.UpdateAllowListRequest(request_id="b1", add_player_ids=["x" * 129]), "FIELD_INVALID"),
        (lobby_pb2.UpdateAllowListRequest(request_id="b2", add_player_ids=["has space"]), "FIELD_INVALID"),
        (
            lobby_pb2.UpdateAllowListRequest(request_id="b3", add_player_ids=[f"q{n}" for n in range(501)]),
            "FIELD_INVALID",
        ),
        (lobby_pb2.UpdateAllowListRequest(request_id="", add_player_ids=["ok"]), "FIELD_REQUIRED"),
    ):
        await expect_error(lobby.stub.UpdateAllowList(bad, metadata=ADMIN), INVALID, reason)
    await expect_error(
        lobby.stub.ListAllowList(
            lobby_pb2.ListAllowListRequest(page={"page_token": "forged"}), metadata=ADMIN
        ),
        INVALID,
        "PAGE_TOKEN_INVALID",
    )
    final = await lobby.stub.ListAllowList(lobby_pb2.ListAllowListRequest(), metadata=ADMIN)
    assert list(final.player_ids) == players[2:]


async def test_a_disabled_room_takes_no_new_seats(lobby: Lobby) -> None:
    await lobby.stub.DisableRoom(lobby_pb2.DisableRoomRequest(request_id="off", room_id=ROOM), metadata=ADMIN)
    await expect_error(
        lobby.stub.AuthorizeSeat(
            lobby_pb2.AuthorizeSeatRequest(player_id="alice", room_id=ROOM), metadata=TABLE
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "ROOM_DISABLED",
    )
    # A player does not even see it.
    await expect_error(_join(lobby, ALICE), grpc.StatusCode.NOT_FOUND, "ROOM_NOT_FOUND")


async def test_create_invite_code_retries_return_the_first_code(lobby: Lobby) -> None:
    first = await _code(lobby, "same-code", max_uses=3)
    assert await _code(lobby, "same-code", max_uses=3) == first
    await expect_error(
        _code(lobby, "same-code", max_uses=4), grpc.StatusCode.ALREADY_EXISTS, "IDEMPOTENCY_CONFLICT"
    )
    assert await _code(lobby, "other-code", max_uses=3) != first


async def test_an_expiry_outside_the_calendar_is_refused(lobby: Lobby) -> None:
    for seconds, nanos in ((2**62, 0), (-(2**62), 0), (0, -5), (253_402_300_800, 0)):
        request = lobby_pb2.CreateInviteCodeRequest(
            request_id=f"t{seconds}{nanos}", max_uses=1, expire_time=Timestamp(seconds=seconds, nanos=nanos)
        )
        await expect_error(
            lobby.stub.CreateInviteCode(request, metadata=ADMIN),
            INVALID,
            "FIELD_INVALID",
            field="expire_time",
        )


async def test_a_caller_whose_token_names_an_oversized_subject_changes_nothing(lobby: Lobby) -> None:
    code = await _code(lobby, "long-subject", max_uses=5)
    giant = auth_metadata("p" * 300, "player")
    await expect_error(_redeem(lobby, giant, "r1", code), INVALID, "FIELD_INVALID", field="caller")
    listed = await lobby.stub.ListAllowList(lobby_pb2.ListAllowListRequest(), metadata=ADMIN)
    assert list(listed.player_ids) == []
