"""Players' profiles over gRPC, on both backends: the display name a player is given first (the
sign-in's suggestion, unique with a number, or `Player <number>`; never a Telegram id), one profile
however many first calls race, SetDisplayName's rules, idempotency and pace, AuthorizeSeat's name,
and who may call what."""

from __future__ import annotations

import asyncio
import re
import time
from datetime import timedelta

import grpc
import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from google.rpc import error_details_pb2, status_pb2

from poker.lobby.v1 import lobby_pb2
from service_runtime.auth import Role, mint_token
from service_runtime.database import sync_url
from service_runtime.testing import DEV_KEYS, reason_of
from services.lobby.storage import VERSION_TABLE
from services.lobby.tables import metadata
from tests.lobby.conftest import ADMIN, ALICE, TABLE, Lobby, expect_error

ROOM = "nlhe-mpx-duel"
INVALID = grpc.StatusCode.INVALID_ARGUMENT
DENIED = grpc.StatusCode.PERMISSION_DENIED
EXISTS = grpc.StatusCode.ALREADY_EXISTS
Metadata = tuple[tuple[str, str], ...]


def player(subject: str, name: str = "") -> Metadata:
    """A player token whose sign-in suggests `name` (the token's `nm` claim)."""
    token = mint_token(
        DEV_KEYS, subject, (Role.PLAYER,), now=int(time.time()), ttl_seconds=3600, suggested_name=name
    )
    return (("authorization", f"Bearer {token}"),)


async def profile(lobby: Lobby, who: Metadata) -> lobby_pb2.PlayerProfile:
    reply: lobby_pb2.GetMyProfileResponse = await lobby.stub.GetMyProfile(
        lobby_pb2.GetMyProfileRequest(), metadata=who
    )
    return reply.profile


async def name_of(lobby: Lobby, who: Metadata) -> str:
    return str((await profile(lobby, who)).display_name)


async def set_name(lobby: Lobby, who: Metadata, request_id: str, name: str) -> lobby_pb2.PlayerProfile:
    reply: lobby_pb2.SetDisplayNameResponse = await lobby.stub.SetDisplayName(
        lobby_pb2.SetDisplayNameRequest(request_id=request_id, display_name=name), metadata=who
    )
    return reply.profile


async def seat(lobby: Lobby, player_id: str, suggested: str = "") -> lobby_pb2.AuthorizeSeatResponse:
    request = lobby_pb2.AuthorizeSeatRequest(player_id=player_id, room_id=ROOM, suggested_name=suggested)
    response: lobby_pb2.AuthorizeSeatResponse = await lobby.stub.AuthorizeSeat(request, metadata=TABLE)
    return response


def error_info(error: grpc.aio.AioRpcError) -> dict[str, str]:
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return dict(info.metadata)
    return {}


# --- The first name. ---


async def test_the_first_name_is_the_suggestion_made_unique_with_a_number_or_player_and_a_number(
    lobby: Lobby,
) -> None:
    ann = player("tg:1001", "Ann")
    first = await profile(lobby, ann)
    assert first.display_name == "Ann"
    assert first.update_time.ToDatetime().replace(tzinfo=lobby.clock.now.tzinfo) == lobby.clock.now
    # The same profile on every later call, whatever the token suggests then.
    lobby.clock.advance(timedelta(minutes=5))
    assert await profile(lobby, player("tg:1001", "Annie")) == first
    # Taken (ignoring case): the suggestion with a number.
    assert re.fullmatch(r"ANN \d{2}", await name_of(lobby, player("tg:1002", "ANN")))
    assert re.fullmatch(r"Ann \d{2}", await name_of(lobby, player("tg:1003", "Ann")))
    # Cleaned leniently: what a name may not hold is dropped.
    assert await name_of(lobby, player("tg:1004", "  Zoë 🌸 ")) == "Zoë"
    # No usable suggestion: `Player <number>`; a Telegram id never becomes a name.
    for subject, suggested in (
        ("tg:1005", ""),
        ("tg:1006", "🌸"),
        ("tg:1007", "tg:1007"),
        ("tg:1008", "Admin"),
    ):
        name = await name_of(lobby, player(subject, suggested))
        assert re.fullmatch(r"Player \d{4,6}", name), (subject, name)
        assert "tg" not in name
        assert subject.removeprefix("tg:") not in name
    # Development and bot ids are names already.
    assert await name_of(lobby, player("alice")) == "alice"
    assert await name_of(lobby, player("bot-7")) == "bot-7"


async def test_concurrent_first_calls_end_with_one_profile_and_distinct_names(lobby: Lobby) -> None:
    erin = player("tg:2001", "Erin")
    profiles = [profile(lobby, erin) for _ in range(8)]
    seats = [seat(lobby, "tg:2001", "Erin") for _ in range(4)]
    answers = await asyncio.gather(asyncio.gather(*profiles), asyncio.gather(*seats))
    assert {a.display_name for group in answers for a in group} == {"Erin"}
    # Many players suggesting the same name at once: each ends with a name of their own.
    racers = [player(f"tg:{3000 + n}", "Sam") for n in range(8)]
    names = await asyncio.gather(*(name_of(lobby, who) for who in racers))
    assert len({n.casefold() for n in names}) == len(racers)
    assert "Sam" in names
    assert all(re.fullmatch(r"Sam( \d{2,})?", n) for n in names)
    # And each keeps it.
    assert await asyncio.gather(*(name_of(lobby, who) for who in racers)) == names


# --- SetDisplayName. ---


async def test_a_player_changes_their_name_within_the_rules(lobby: Lobby) -> None:
    mia = player("tg:4001", "Mia")
    assert await name_of(lobby, mia) == "Mia"
    # The name the profile was made with is no change: the first change is allowed at once.
    changed = await set_name(lobby, mia, "n1", "  Mia   Wallace ")
    assert changed.display_name == "Mia Wallace"
    assert await name_of(lobby, mia) == "Mia Wallace"
    for request_id, bad in enumerate(
        ["Mia\x00", "Mia\nW", "tg:1", "Dealer", "admin", "Player 1234", "M", "x" * 25, "12345", ""]
    ):
        await expect_error(
            set_name(lobby, mia, f"bad-{request_id}", bad),
            INVALID,
            "DISPLAY_NAME_INVALID",
            field="display_name",
        )
    assert await name_of(lobby, mia) == "Mia Wallace"
    await expect_error(set_name(lobby, mia, "", "Mia"), INVALID, "FIELD_REQUIRED", field="request_id")


async def test_a_name_another_player_has_is_taken_but_ones_own_in_another_case_is_not(lobby: Lobby) -> None:
    alice, bob = player("tg:5001", "Alice"), player("tg:5002", "Bob")
    assert (await name_of(lobby, alice), await name_of(lobby, bob)) == ("Alice", "Bob")
    await expect_error(
        set_name(lobby, bob, "b1", "ALICE"), EXISTS, "DISPLAY_NAME_TAKEN", field="display_name"
    )
    await expect_error(set_name(lobby, bob, "b2", " alice "), EXISTS, "DISPLAY_NAME_TAKEN")
    assert await name_of(lobby, bob) == "Bob"
    assert (await set_name(lobby, alice, "a1", "ALICE")).display_name == "ALICE"
    lobby.clock.advance(timedelta(seconds=61))
    assert (await set_name(lobby, bob, "b3", "Bob  B")).display_name == "Bob B"
    lobby.clock.advance(timedelta(seconds=61))
    assert (await set_name(lobby, bob, "b4", "bob b")).display_name == "bob b"
    # The name Alice gave up is free again for anybody.
    lobby.clock.advance(timedelta(seconds=61))
    assert (await set_name(lobby, alice, "a2", "Alicia")).display_name == "Alicia"
    assert (await set_name(lobby, bob, "b5", "Alice")).display_name == "Alice"


async def test_set_display_name_is_idempotent_by_request_id(lobby: Lobby) -> None:
    kim = player("tg:6001", "Kim")
    first = await set_name(lobby, kim, "k1", "Kimberly")
    lobby.clock.advance(timedelta(seconds=5))
    # A retry gets the first answer (no new change, so no wait either).
    assert await set_name(lobby, kim, "k1", "Kimberly") == first
    await expect_error(set_name(lobby, kim, "k1", "Kimmy"), EXISTS, "IDEMPOTENCY_CONFLICT")
    assert await name_of(lobby, kim) == "Kimberly"
    lobby.clock.advance(timedelta(seconds=60))
    assert (await set_name(lobby, kim, "k2", "Kimmy")).display_name == "Kimmy"
    # The first answer stays the first answer after later changes.
    assert await set_name(lobby, kim, "k1", "Kimberly") == first
    assert await name_of(lobby, kim) == "Kimmy"
    # Ids are the caller's own: another player's same id is another request.
    assert (await set_name(lobby, player("tg:6002", "Lee"), "k1", "Kimberly2")).display_name == "Kimberly2"


async def test_a_second_change_within_a_minute_is_refused_with_the_wait(lobby: Lobby) -> None:
    ned = player("tg:7001", "Ned")
    await name_of(lobby, ned)
    assert (await set_name(lobby, ned, "n1", "Eddard")).display_name == "Eddard"
    lobby.clock.advance(timedelta(seconds=20))
    # The name one has is no change.
    assert (await set_name(lobby, ned, "n2", "Eddard")).display_name == "Eddard"
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await set_name(lobby, ned, "n3", "Ned Stark")
    assert (refused.value.code(), reason_of(refused.value)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "DISPLAY_NAME_CHANGED_RECENTLY",
    )
    assert error_info(refused.value)["retry_after_seconds"] == "40"
    assert await name_of(lobby, ned) == "Eddard"
    lobby.clock.advance(timedelta(seconds=40))
    # A refused request stored nothing: the same id is judged afresh.
    assert (await set_name(lobby, ned, "n3", "Ned Stark")).display_name == "Ned Stark"


# --- AuthorizeSeat and access. ---


async def test_authorize_seat_answers_the_players_display_name(lobby: Lobby) -> None:
    answer = await seat(lobby, "tg:8001", "Olga")
    assert (answer.room_revision, answer.display_name) == (1, "Olga")
    # The profile it made is the player's, whatever they are suggested later.
    assert await name_of(lobby, player("tg:8001", "Other")) == "Olga"
    assert re.fullmatch(r"Player \d{4,6}", (await seat(lobby, "tg:8002")).display_name)
    await set_name(lobby, player("tg:8002"), "p1", "Pavel")
    assert (await seat(lobby, "tg:8002", "Whatever")).display_name == "Pavel"
    await expect_error(seat(lobby, "tg:8003", "x" * 65), INVALID, "FIELD_INVALID", field="suggested_name")


async def test_a_refused_seat_makes_no_profile(closed_lobby: Lobby) -> None:
    await expect_error(seat(closed_lobby, "tg:8101", "Robert"), DENIED, "NOT_ON_ALLOW_LIST")
    assert await name_of(closed_lobby, player("tg:8101", "Bobby")) == "Bobby"


async def test_profiles_are_for_players_and_authorize_seat_for_the_table_only(lobby: Lobby) -> None:
    request = lobby_pb2.AuthorizeSeatRequest(player_id="alice", room_id=ROOM, suggested_name="Alice")
    await expect_error(lobby.stub.AuthorizeSeat(request, metadata=ALICE), DENIED, "ROLE_REQUIRED")
    for other in (TABLE, ADMIN):
        await expect_error(set_name(lobby, other, "s1", "Sneaky"), DENIED, "ROLE_REQUIRED")
        await expect_error(
            lobby.stub.GetMyProfile(lobby_pb2.GetMyProfileRequest(), metadata=other), DENIED, "ROLE_REQUIRED"
        )
    await expect_error(
        lobby.stub.GetMyProfile(lobby_pb2.GetMyProfileRequest()),
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )


# --- The schema. ---


def test_the_migrations_match_the_declared_tables(migrated_lobby_database: str) -> None:
    engine = sa.create_engine(sync_url(migrated_lobby_database), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
            assert compare_metadata(context, metadata) == []
    finally:
        engine.dispose()


# --- Staff looking a player up (FindPlayers). ---


async def find(
    lobby: Lobby, query: str, page_size: int = 0, page_token: str = ""
) -> lobby_pb2.FindPlayersResponse:
    from poker.common.v1 import common_pb2

    reply: lobby_pb2.FindPlayersResponse = await lobby.stub.FindPlayers(
        lobby_pb2.FindPlayersRequest(
            query=query, page=common_pb2.PageRequest(page_size=page_size, page_token=page_token)
        ),
        metadata=ADMIN,
    )
    return reply


async def test_staff_find_players_by_id_or_the_start_of_a_name_in_pages(lobby: Lobby) -> None:
    names = {"find-a1": "Марина", "find-a2": "марат", "find-a3": "Mark_1", "find-a4": "Markus"}
    for subject, name in names.items():
        await set_name(lobby, player(subject), f"name-{subject}", name)
    found = await find(lobby, "МАР")
    assert [(p.player_id, p.display_name) for p in found.players] == [
        ("find-a2", "марат"),
        ("find-a1", "Марина"),
    ]
    assert [p.player_id for p in (await find(lobby, "find-a3")).players] == ["find-a3"]
    # `_` and `%` are letters of the name, not patterns.
    assert [p.display_name for p in (await find(lobby, "Mark_")).players] == ["Mark_1"]
    assert (await find(lobby, "Ma%")).players == []
    # Pages: one at a time, each once, in order.
    seen: list[str] = []
    token = ""
    while True:
        page = await find(lobby, "ma", page_size=1, page_token=token)
        seen += [p.player_id for p in page.players]
        token = page.page.next_page_token
        if not token:
            break
    assert seen == ["find-a3", "find-a4"]  # Latin "ma": not the Cyrillic names


async def test_find_players_refuses_bad_input_and_players(lobby: Lobby) -> None:
    await expect_error(find(lobby, "  "), INVALID, "FIELD_REQUIRED", field="query")
    await expect_error(find(lobby, "x" * 65), INVALID, "FIELD_INVALID", field="query")
    await expect_error(find(lobby, "a\x00b"), INVALID, "FIELD_INVALID", field="query")
    await expect_error(find(lobby, "a", page_token="find:bm90LWpzb24"), INVALID, "PAGE_TOKEN_INVALID")
    await expect_error(find(lobby, "a", page_token="elsewhere"), INVALID, "PAGE_TOKEN_INVALID")
    await expect_error(
        lobby.stub.FindPlayers(lobby_pb2.FindPlayersRequest(query="a"), metadata=ALICE),
        DENIED,
        "ROLE_REQUIRED",
    )
