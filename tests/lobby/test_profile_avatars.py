"""Players' Telegram photos in their profiles, over gRPC, on both backends: the gateway's sign-in
records the photo (RecordSignInPhoto; only Telegram's own photo URLs kept, a later sign-in's new photo
replacing it), GetMyProfile shows it with the player's switch, SetShowAvatar turns showing it off and
on, and AuthorizeSeat gives the table the photo only while it is on. Both mutating RPCs are
idempotent by request id (the same id with another field is IDEMPOTENCY_CONFLICT and changes
nothing), and only the player themself calls them. Migration 0004 gives profiles made before it no
photo, shown."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import pytest
import sqlalchemy as sa
from alembic import command

from poker.lobby.v1 import lobby_pb2
from service_runtime.auth import Role, mint_token
from service_runtime.database import create_engine, create_session_factory, sync_url
from service_runtime.migrations import alembic_config
from service_runtime.testing import DEV_KEYS, throwaway_postgres_database
from services.lobby import storage
from services.lobby.storage import MIGRATIONS_DIR, VERSION_TABLE, migrate
from tests.lobby.conftest import ADMIN, TABLE, Lobby, expect_error

ROOM = "nlhe-mpx-duel"
DENIED = grpc.StatusCode.PERMISSION_DENIED
EXISTS = grpc.StatusCode.ALREADY_EXISTS
PHOTO = "https://t.me/i/userpic/320/0HsMKYOWlgnBA2Httlfb3NBMp50KmdI4fD8tsNZu2js.jpg"
NEW_PHOTO = "https://t.me/i/userpic/320/cm409T17pD0hEWX5m_tmMBGNTbHnhP0b6tZG6o887b0.svg"
Metadata = tuple[tuple[str, str], ...]


def player(subject: str, name: str = "") -> Metadata:
    token = mint_token(
        DEV_KEYS, subject, (Role.PLAYER,), now=int(time.time()), ttl_seconds=3600, suggested_name=name
    )
    return (("authorization", f"Bearer {token}"),)


async def profile(lobby: Lobby, who: Metadata) -> lobby_pb2.PlayerProfile:
    reply: lobby_pb2.GetMyProfileResponse = await lobby.stub.GetMyProfile(
        lobby_pb2.GetMyProfileRequest(), metadata=who
    )
    return reply.profile


async def record(lobby: Lobby, who: Metadata, request_id: str, url: str) -> lobby_pb2.PlayerProfile:
    reply: lobby_pb2.RecordSignInPhotoResponse = await lobby.stub.RecordSignInPhoto(
        lobby_pb2.RecordSignInPhotoRequest(request_id=request_id, photo_url=url), metadata=who
    )
    return reply.profile


async def show(lobby: Lobby, who: Metadata, request_id: str, on: bool) -> lobby_pb2.PlayerProfile:
    reply: lobby_pb2.SetShowAvatarResponse = await lobby.stub.SetShowAvatar(
        lobby_pb2.SetShowAvatarRequest(request_id=request_id, show_avatar=on), metadata=who
    )
    return reply.profile


async def seat_photo(lobby: Lobby, player_id: str) -> str:
    request = lobby_pb2.AuthorizeSeatRequest(player_id=player_id, room_id=ROOM)
    reply: lobby_pb2.AuthorizeSeatResponse = await lobby.stub.AuthorizeSeat(request, metadata=TABLE)
    return str(reply.avatar_url)


async def test_a_sign_in_records_the_photo_and_a_later_one_replaces_it(lobby: Lobby) -> None:
    ann = player("tg:9001", "Ann")
    # The first sign-in makes the profile (the token's suggested name) with the photo, shown.
    first = await record(lobby, ann, "sign-in-1", PHOTO)
    assert (first.display_name, first.avatar_url, first.show_avatar) == ("Ann", PHOTO, True)
    assert await profile(lobby, ann) == first
    assert await seat_photo(lobby, "tg:9001") == PHOTO
    # A later sign-in with a new photo replaces it, and the profile's time moves.
    lobby.clock.advance(timedelta(minutes=3))
    again = await record(lobby, ann, "sign-in-2", NEW_PHOTO)
    assert again.avatar_url == NEW_PHOTO
    assert again.update_time.ToDatetime(tzinfo=UTC) == lobby.clock.now
    assert await seat_photo(lobby, "tg:9001") == NEW_PHOTO
    # A URL that is not Telegram's is dropped: no photo at all, never the other host's.
    dropped = await record(lobby, ann, "sign-in-3", "https://evil.example/pixel.gif")
    assert dropped.avatar_url == ""
    assert (await profile(lobby, ann)).avatar_url == ""
    assert await seat_photo(lobby, "tg:9001") == ""
    # A player nobody recorded a photo for has none (development names, bots).
    assert (await profile(lobby, player("alice"))).avatar_url == ""
    assert (await profile(lobby, player("alice"))).show_avatar is True
    assert await seat_photo(lobby, "alice") == ""


async def test_the_switch_hides_the_photo_from_the_seats_and_shows_it_again(lobby: Lobby) -> None:
    bea = player("tg:9101", "Bea")
    await record(lobby, bea, "sign-in-1", PHOTO)
    lobby.clock.advance(timedelta(seconds=5))
    off = await show(lobby, bea, "off-1", False)
    # The player still sees their own photo (the profile keeps it), the table no longer gets it.
    assert (off.avatar_url, off.show_avatar) == (PHOTO, False)
    assert off.update_time.ToDatetime(tzinfo=UTC) == lobby.clock.now
    assert await profile(lobby, bea) == off
    assert await seat_photo(lobby, "tg:9101") == ""
    # A new photo at a later sign-in is kept, and stays hidden: the switch is the player's.
    await record(lobby, bea, "sign-in-2", NEW_PHOTO)
    assert (await profile(lobby, bea)).show_avatar is False
    assert await seat_photo(lobby, "tg:9101") == ""
    on = await show(lobby, bea, "on-1", True)
    assert (on.avatar_url, on.show_avatar) == (NEW_PHOTO, True)
    assert await seat_photo(lobby, "tg:9101") == NEW_PHOTO
    # The switch as it is is no change (the profile's time stays).
    lobby.clock.advance(timedelta(seconds=5))
    assert await show(lobby, bea, "on-2", True) == on
    # Before any photo: the switch is kept for the photo to come.
    cid = player("tg:9102", "Cid")
    assert (await show(lobby, cid, "off-1", False)).show_avatar is False
    await record(lobby, cid, "sign-in-1", PHOTO)
    assert await seat_photo(lobby, "tg:9102") == ""


async def test_both_are_idempotent_by_request_id_and_a_changed_retry_is_a_conflict(lobby: Lobby) -> None:
    dee = player("tg:9201", "Dee")
    first = await record(lobby, dee, "sign-in-1", PHOTO)
    lobby.clock.advance(timedelta(seconds=5))
    assert await record(lobby, dee, "sign-in-1", PHOTO) == first
    await expect_error(record(lobby, dee, "sign-in-1", NEW_PHOTO), EXISTS, "IDEMPOTENCY_CONFLICT")
    assert (await profile(lobby, dee)).avatar_url == PHOTO
    off = await show(lobby, dee, "switch-1", False)
    lobby.clock.advance(timedelta(seconds=5))
    assert await show(lobby, dee, "switch-1", False) == off
    await expect_error(show(lobby, dee, "switch-1", True), EXISTS, "IDEMPOTENCY_CONFLICT")
    assert (await profile(lobby, dee)).show_avatar is False
    # The first answer stays the first answer after later changes.
    await show(lobby, dee, "switch-2", True)
    assert await show(lobby, dee, "switch-1", False) == off
    assert (await profile(lobby, dee)).show_avatar is True
    # Ids are per method and per caller.
    assert (await show(lobby, dee, "sign-in-1", False)).show_avatar is False
    assert (await record(lobby, player("tg:9202", "Eve"), "sign-in-1", NEW_PHOTO)).avatar_url == NEW_PHOTO
    # Concurrent twins of one request: one change, one answer.
    twins = await asyncio.gather(*(show(lobby, dee, "switch-3", True) for _ in range(6)))
    assert len({t.SerializeToString() for t in twins}) == 1
    await expect_error(show(lobby, dee, "", True), grpc.StatusCode.INVALID_ARGUMENT, "FIELD_REQUIRED")
    await expect_error(record(lobby, dee, "", PHOTO), grpc.StatusCode.INVALID_ARGUMENT, "FIELD_REQUIRED")


async def test_only_the_player_themself_records_or_switches_their_photo(lobby: Lobby) -> None:
    for other in (TABLE, ADMIN):
        await expect_error(show(lobby, other, "s1", False), DENIED, "ROLE_REQUIRED")
        await expect_error(record(lobby, other, "r1", PHOTO), DENIED, "ROLE_REQUIRED")
    await expect_error(
        lobby.stub.SetShowAvatar(lobby_pb2.SetShowAvatarRequest(request_id="s1")),
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )


# --- Migration 0004. ---


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_lobby_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{(tmp_path / 'lobby.db').as_posix()}"
        return
    server_url: str = request.getfixturevalue("postgres_server_url")
    with throwaway_postgres_database(server_url, prefix="lobby_avatars") as url:
        yield url


async def test_a_profile_made_before_avatars_has_no_photo_and_would_show_one(
    empty_lobby_database: str,
) -> None:
    url = empty_lobby_database
    await asyncio.to_thread(command.upgrade, alembic_config(url, MIGRATIONS_DIR, VERSION_TABLE), "0003")
    made = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    engine = sa.create_engine(sync_url(url), poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO lobby_player_profiles (player_id, display_name, name_key, update_time)"
                    " VALUES ('tg:1', 'Old Timer', 'old timer', :made)"
                ),
                {"made": made},
            )
    finally:
        engine.dispose()
    await asyncio.to_thread(migrate, url)
    async_engine = create_engine(url)
    try:
        async with create_session_factory(async_engine)() as session:
            old = await storage.get_profile(session, "tg:1")
    finally:
        await async_engine.dispose()
    assert old is not None
    assert (old.display_name, old.update_time, old.avatar_url, old.show_avatar) == (
        "Old Timer",
        made,
        "",
        True,
    )
