"""Database adapter of the lobby: reads and writes rows within a caller's session; decides nothing.

The application opens one short transaction per use case and passes its session in; nothing here
commits. Every stored time is UTC (SQLite hands back naive datetimes, `_utc` fixes them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession

from service_runtime.migrations import upgrade_to_head
from services.lobby.rooms import Pool, Room, RoomSpec, Variant
from services.lobby.tables import (
    allow_list,
    invite_codes,
    invite_redemptions,
    maintenance,
    player_profiles,
    request_replies,
    rooms,
)

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "lobby_alembic_version"
_SPEC_COLUMNS = [name for name in RoomSpec.__dataclass_fields__ if name not in ("variant", "pool")]


def migrate(url: str) -> None:
    """Bring the lobby schema at `url` to the newest revision (synchronous; run it in a thread)."""
    upgrade_to_head(url, MIGRATIONS_DIR, VERSION_TABLE)


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _utc_or_none(moment: datetime | None) -> datetime | None:
    return None if moment is None else _utc(moment)


# --- Rooms. ---


def _room(row: Any) -> Room:
    values = {name: getattr(row, name) for name in _SPEC_COLUMNS}
    for name, value in values.items():
        if isinstance(value, int) and not isinstance(value, bool):
            values[name] = int(value)
    spec = RoomSpec(variant=Variant(row.variant), pool=Pool(row.pool), **values)
    return Room(
        spec=spec,
        disabled=bool(row.disabled),
        revision=int(row.revision),
        created_at=_utc(row.created_at),
        updated_at=_utc(row.updated_at),
    )


def _room_values(room: Room) -> dict[str, Any]:
    values: dict[str, Any] = {name: getattr(room.spec, name) for name in _SPEC_COLUMNS}
    values |= {
        "variant": room.spec.variant.value,
        "pool": room.spec.pool.value,
        "disabled": room.disabled,
        "revision": room.revision,
        "created_at": room.created_at,
        "updated_at": room.updated_at,
    }
    return values


_STAKE = sa.case(
    (rooms.c.variant == Variant.NO_LIMIT_HOLDEM.value, rooms.c.big_blind),
    (rooms.c.variant == Variant.FIXED_LIMIT_HOLDEM.value, rooms.c.small_bet),
    else_=rooms.c.min_ante,
)


@dataclass(frozen=True)
class RoomFilter:
    variant: Variant | None = None
    pool: Pool | None = None
    min_stake: int = 0
    max_stake: int = 0
    include_disabled: bool = False


async def list_rooms(
    session: AsyncSession, where: RoomFilter, *, after_room_id: str, limit: int
) -> list[Room]:
    """Rooms matching `where` with an id above `after_room_id`, ordered by id."""
    query = sa.select(rooms).where(rooms.c.room_id > after_room_id).order_by(rooms.c.room_id).limit(limit)
    if where.variant is not None:
        query = query.where(rooms.c.variant == where.variant.value)
    if where.pool is not None:
        query = query.where(rooms.c.pool == where.pool.value)
    if where.min_stake:
        query = query.where(where.min_stake <= _STAKE)
    if where.max_stake:
        query = query.where(where.max_stake >= _STAKE)
    if not where.include_disabled:
        query = query.where(rooms.c.disabled == sa.false())
    return [_room(row) for row in (await session.execute(query)).all()]


async def all_room_ids(session: AsyncSession) -> list[str]:
    return [
        str(r)
        for r in (await session.execute(sa.select(rooms.c.room_id).order_by(rooms.c.room_id))).scalars()
    ]


async def get_room(session: AsyncSession, room_id: str, *, for_update: bool = False) -> Room | None:
    query = sa.select(rooms).where(rooms.c.room_id == room_id)
    if for_update:
        query = query.with_for_update()
    row = (await session.execute(query)).first()
    return None if row is None else _room(row)


async def insert_room(session: AsyncSession, room: Room) -> None:
    await session.execute(sa.insert(rooms).values(**_room_values(room)))


async def update_room(session: AsyncSession, room: Room) -> None:
    values = _room_values(room)
    del values["room_id"], values["created_at"]
    await session.execute(sa.update(rooms).where(rooms.c.room_id == room.room_id).values(**values))


# --- Request replies (idempotency). ---


@dataclass(frozen=True)
class StoredReply:
    fingerprint: str
    reply: str


async def find_reply(session: AsyncSession, method: str, caller: str, request_id: str) -> StoredReply | None:
    row = (
        await session.execute(
            sa.select(request_replies.c.fingerprint, request_replies.c.reply).where(
                request_replies.c.method == method,
                request_replies.c.caller == caller,
                request_replies.c.request_id == request_id,
            )
        )
    ).first()
    return None if row is None else StoredReply(row.fingerprint, row.reply)


async def insert_reply(
    session: AsyncSession,
    method: str,
    caller: str,
    request_id: str,
    fingerprint: str,
    reply: str,
    at: datetime,
) -> None:
    await session.execute(
        sa.insert(request_replies).values(
            method=method,
            caller=caller,
            request_id=request_id,
            fingerprint=fingerprint,
            reply=reply,
            created_at=at,
        )
    )


# --- Maintenance. ---


@dataclass(frozen=True)
class MaintenanceRow:
    scope: str
    no_new_seats: bool
    no_new_hands: bool
    message: str
    set_by: str
    updated_at: datetime
    starts_at: datetime | None = None
    ends_at: datetime | None = None


def _maintenance(row: Any) -> MaintenanceRow:
    return MaintenanceRow(
        scope=row.scope,
        no_new_seats=bool(row.no_new_seats),
        no_new_hands=bool(row.no_new_hands),
        message=row.message,
        set_by=row.set_by,
        updated_at=_utc(row.updated_at),
        starts_at=_utc_or_none(row.starts_at),
        ends_at=_utc_or_none(row.ends_at),
    )


async def get_maintenance(session: AsyncSession, scope: str) -> MaintenanceRow | None:
    row = (await session.execute(sa.select(maintenance).where(maintenance.c.scope == scope))).first()
    return None if row is None else _maintenance(row)


async def all_maintenance(session: AsyncSession) -> list[MaintenanceRow]:
    rows = (await session.execute(sa.select(maintenance).order_by(maintenance.c.scope))).all()
    return [_maintenance(row) for row in rows]


async def put_maintenance(session: AsyncSession, row: MaintenanceRow) -> None:
    values = {
        "no_new_seats": row.no_new_seats,
        "no_new_hands": row.no_new_hands,
        "message": row.message,
        "set_by": row.set_by,
        "updated_at": row.updated_at,
        "starts_at": row.starts_at,
        "ends_at": row.ends_at,
    }
    changed = await session.execute(
        sa.update(maintenance).where(maintenance.c.scope == row.scope).values(**values)
    )
    if changed.rowcount == 0:  # type: ignore[attr-defined]
        await session.execute(sa.insert(maintenance).values(scope=row.scope, **values))


# --- Allow-lists and invite codes. ---


async def is_allowed(session: AsyncSession, list_id: str, player_id: str) -> bool:
    row = (
        await session.execute(
            sa.select(allow_list.c.player_id).where(
                allow_list.c.list_id == list_id, allow_list.c.player_id == player_id
            )
        )
    ).first()
    return row is not None


async def add_to_allow_list(
    session: AsyncSession, list_id: str, player_ids: list[str], by: str, at: datetime
) -> None:
    if not player_ids:
        return
    present = set(
        (
            await session.execute(
                sa.select(allow_list.c.player_id).where(
                    allow_list.c.list_id == list_id, allow_list.c.player_id.in_(player_ids)
                )
            )
        ).scalars()
    )
    new = [p for p in dict.fromkeys(player_ids) if p not in present]
    if new:
        await session.execute(
            sa.insert(allow_list),
            [{"list_id": list_id, "player_id": p, "added_by": by, "added_at": at} for p in new],
        )


async def remove_from_allow_list(session: AsyncSession, list_id: str, player_ids: list[str]) -> None:
    if player_ids:
        await session.execute(
            sa.delete(allow_list).where(
                allow_list.c.list_id == list_id, allow_list.c.player_id.in_(player_ids)
            )
        )


async def allow_list_size(session: AsyncSession, list_id: str) -> int:
    count = await session.scalar(
        sa.select(sa.func.count()).select_from(allow_list).where(allow_list.c.list_id == list_id)
    )
    return int(count or 0)


async def allow_list_page(session: AsyncSession, list_id: str, *, after: str, limit: int) -> list[str]:
    rows = await session.execute(
        sa.select(allow_list.c.player_id)
        .where(allow_list.c.list_id == list_id, allow_list.c.player_id > after)
        .order_by(allow_list.c.player_id)
        .limit(limit)
    )
    return [str(p) for p in rows.scalars()]


@dataclass(frozen=True)
class InviteCode:
    code: str
    list_id: str
    max_uses: int
    uses: int
    expires_at: datetime | None
    created_by: str
    created_at: datetime


async def insert_invite_code(session: AsyncSession, invite: InviteCode) -> None:
    await session.execute(
        sa.insert(invite_codes).values(
            code=invite.code,
            list_id=invite.list_id,
            max_uses=invite.max_uses,
            uses=invite.uses,
            expires_at=invite.expires_at,
            created_by=invite.created_by,
            created_at=invite.created_at,
        )
    )


async def get_invite_code(session: AsyncSession, code: str, *, for_update: bool = False) -> InviteCode | None:
    query = sa.select(invite_codes).where(invite_codes.c.code == code)
    if for_update:
        query = query.with_for_update()
    row = (await session.execute(query)).first()
    if row is None:
        return None
    return InviteCode(
        code=row.code,
        list_id=row.list_id,
        max_uses=int(row.max_uses),
        uses=int(row.uses),
        expires_at=_utc_or_none(row.expires_at),
        created_by=row.created_by,
        created_at=_utc(row.created_at),
    )


async def has_redeemed(session: AsyncSession, code: str, player_id: str) -> bool:
    row = (
        await session.execute(
            sa.select(invite_redemptions.c.code).where(
                invite_redemptions.c.code == code, invite_redemptions.c.player_id == player_id
            )
        )
    ).first()
    return row is not None


async def record_redemption(session: AsyncSession, code: str, player_id: str, at: datetime) -> None:
    await session.execute(
        sa.insert(invite_redemptions).values(code=code, player_id=player_id, redeemed_at=at)
    )
    await session.execute(
        sa.update(invite_codes).where(invite_codes.c.code == code).values(uses=invite_codes.c.uses + 1)
    )


# --- Player profiles. ---


@dataclass(frozen=True)
class Profile:
    player_id: str
    display_name: str
    update_time: datetime
    # The player's last change of the name (None: never changed since the profile was made).
    name_changed_at: datetime | None = None
    # The player's Telegram photo as their last sign-in with one gave it ("": none), and whether
    # their seats show it (`avatars.shown_avatar_url`).
    avatar_url: str = ""
    show_avatar: bool = True


async def get_profile(session: AsyncSession, player_id: str, *, for_update: bool = False) -> Profile | None:
    query = sa.select(player_profiles).where(player_profiles.c.player_id == player_id)
    if for_update:
        query = query.with_for_update()
    row = (await session.execute(query)).first()
    if row is None:
        return None
    return Profile(
        row.player_id,
        row.display_name,
        _utc(row.update_time),
        _utc_or_none(row.name_changed_at),
        row.avatar_url,
        bool(row.show_avatar),
    )


async def name_owner(session: AsyncSession, key: str) -> str | None:
    """The player whose name has this key, if any."""
    owner = await session.scalar(
        sa.select(player_profiles.c.player_id).where(player_profiles.c.name_key == key)
    )
    return None if owner is None else str(owner)


async def find_profiles(
    session: AsyncSession, *, player_id: str, key_prefix: str, after: tuple[str, str] | None, limit: int
) -> list[tuple[str, str, str]]:
    """(name key, player id, display name) of the players whose id is `player_id` or whose name's key
    starts with `key_prefix`, in (name key, player id) order after `after`, at most `limit`."""
    escaped = key_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    c = player_profiles.c
    query = (
        sa.select(c.name_key, c.player_id, c.display_name)
        .where(sa.or_(c.player_id == player_id, c.name_key.like(f"{escaped}%", escape="\\")))
        .order_by(c.name_key, c.player_id)
        .limit(limit)
    )
    if after is not None:
        query = query.where(
            sa.tuple_(c.name_key, c.player_id) > sa.tuple_(sa.literal(after[0]), sa.literal(after[1]))
        )
    rows = (await session.execute(query)).all()
    return [(str(r.name_key), str(r.player_id), str(r.display_name)) for r in rows]


async def insert_profile(session: AsyncSession, profile: Profile, key: str) -> None:
    """IntegrityError when the player has a profile or another player the name's key."""
    await session.execute(
        sa.insert(player_profiles).values(
            player_id=profile.player_id,
            display_name=profile.display_name,
            name_key=key,
            update_time=profile.update_time,
            name_changed_at=profile.name_changed_at,
            avatar_url=profile.avatar_url,
            show_avatar=profile.show_avatar,
        )
    )


async def update_profile(session: AsyncSession, profile: Profile, key: str) -> None:
    """IntegrityError when another player has the name's key."""
    await session.execute(
        sa.update(player_profiles)
        .where(player_profiles.c.player_id == profile.player_id)
        .values(
            display_name=profile.display_name,
            name_key=key,
            update_time=profile.update_time,
            name_changed_at=profile.name_changed_at,
        )
    )


async def update_avatar(session: AsyncSession, profile: Profile) -> None:
    """The profile's photo and whether it is shown, and its update time, as `profile` has them."""
    await session.execute(
        sa.update(player_profiles)
        .where(player_profiles.c.player_id == profile.player_id)
        .values(
            avatar_url=profile.avatar_url,
            show_avatar=profile.show_avatar,
            update_time=profile.update_time,
        )
    )
