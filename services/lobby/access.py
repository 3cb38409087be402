"""Who may sit down (rules 18): closed access, private rooms, invite codes, maintenance switches.

Closed access (a setting) limits seats everywhere to the lobby-wide allow-list (list id ''); a
private room limits its seats to its own list. Invite codes add the redeemer to the list they belong
to; redeeming is idempotent per player. Maintenance switches are stored here and published to the
shards (`service_runtime.table_directory`) on every change and by a periodic republish.
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from service_runtime.auth import Caller
from service_runtime.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from service_runtime.table_directory import MaintenanceState, MaintenanceSwitches
from service_runtime.validation import require_player_id
from services.lobby import storage
from services.lobby.catalogue import after_of, page_size_of, player_may_see
from services.lobby.replies import RequestReplies
from services.lobby.rooms import Room, check_room_id, check_text

LOBBY_SCOPE = ""
MAX_PLAYERS_PER_UPDATE = 500
MAX_INVITE_USES = 100_000
MAX_CODE_LENGTH = 32
_ALLOW_TOKEN_PREFIX = "players-after:"


class MaintenancePublisher(Protocol):
    async def publish(self, state: MaintenanceState) -> None: ...


# How far ahead a maintenance window may be scheduled.
MAX_WINDOW_AHEAD = timedelta(days=366)


@dataclass(frozen=True)
class MaintenanceView:
    scope: str
    switches: MaintenanceSwitches
    set_by: str = ""
    updated_at: datetime | None = None
    in_force: bool = False  # inside the switches' window now (a switch on, or a window not yet open)


def _switches(row: storage.MaintenanceRow) -> MaintenanceSwitches:
    return MaintenanceSwitches(
        row.no_new_seats,
        row.no_new_hands,
        row.message,
        None if row.starts_at is None else row.starts_at.timestamp(),
        None if row.ends_at is None else row.ends_at.timestamp(),
    )


def _view(row: storage.MaintenanceRow | None, scope: str, now: datetime) -> MaintenanceView:
    if row is None:
        return MaintenanceView(scope, MaintenanceSwitches())
    switches = _switches(row)
    active = switches.at(now.timestamp())
    return MaintenanceView(
        scope, switches, row.set_by, row.updated_at, active.no_new_seats or active.no_new_hands
    )


def check_window(starts_at: datetime | None, ends_at: datetime | None, now: datetime) -> None:
    """A window's times: the end after the start and after now, neither more than a year ahead
    (FIELD_INVALID naming the field). A start in the past is a window open from now."""
    for moment, field in ((starts_at, "maintenance.start_time"), (ends_at, "maintenance.end_time")):
        if moment is not None and moment > now + MAX_WINDOW_AHEAD:
            raise InvalidArgument("FIELD_INVALID", f"{field} is more than a year ahead", {"field": field})
    if ends_at is None:
        return
    if ends_at <= now:
        raise InvalidArgument(
            "FIELD_INVALID", "maintenance.end_time has passed", {"field": "maintenance.end_time"}
        )
    if starts_at is not None and ends_at <= starts_at:
        raise InvalidArgument(
            "FIELD_INVALID",
            "maintenance.end_time must be later than maintenance.start_time",
            {"field": "maintenance.end_time"},
        )


def new_invite_code() -> str:
    """16 characters of base32 (80 random bits): easy to type, impossible to guess."""
    return base64.b32encode(secrets.token_bytes(10)).decode("ascii")


class AccessControl:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        replies: RequestReplies,
        clock: Callable[[], datetime],
        *,
        closed_access: bool,
        board: MaintenancePublisher | None = None,
        make_code: Callable[[], str] = new_invite_code,
    ) -> None:
        self._sessions = sessions
        self._replies = replies
        self._clock = clock
        self.closed_access = closed_access
        self._board = board
        self._make_code = make_code

    async def _list_scope(self, session: AsyncSession, room_id: str) -> str:
        """'' for the lobby-wide list, else an existing room's id (ROOM_NOT_FOUND otherwise)."""
        if not room_id:
            return LOBBY_SCOPE
        check_room_id(room_id)
        if await storage.get_room(session, room_id) is None:
            raise NotFound("ROOM_NOT_FOUND", "no such room", {"room_id": room_id})
        return room_id

    # --- The seat check JoinTable and the shards' AuthorizeSeat share. ---

    async def check_seat(self, session: AsyncSession, player_id: str, room: Room) -> None:
        if room.disabled:
            raise FailedPrecondition("ROOM_DISABLED", "the room is closed", {"room_id": room.room_id})
        if self.closed_access and not await storage.is_allowed(session, LOBBY_SCOPE, player_id):
            raise PermissionDenied("NOT_ON_ALLOW_LIST", "access is limited to invited players")
        if room.spec.private and not await storage.is_allowed(session, room.room_id, player_id):
            raise PermissionDenied("NOT_ON_ALLOW_LIST", "the room is private", {"room_id": room.room_id})
        now = self._clock()
        lobby = _view(await storage.get_maintenance(session, LOBBY_SCOPE), LOBBY_SCOPE, now).switches
        own = _view(await storage.get_maintenance(session, room.room_id), room.room_id, now).switches
        switches = lobby.at(now.timestamp()).combined(own.at(now.timestamp()))
        if switches.no_new_seats:
            raise FailedPrecondition(
                "MAINTENANCE_NO_NEW_SEATS",
                switches.message or "no new seats during maintenance",
                {"room_id": room.room_id},
            )

    # --- Maintenance. ---

    async def maintenance_state(self) -> MaintenanceState:
        async with self._sessions() as session:
            rows = await storage.all_maintenance(session)
        lobby = MaintenanceSwitches()
        rooms: dict[str, MaintenanceSwitches] = {}
        for row in rows:
            switches = _switches(row)
            if row.scope == LOBBY_SCOPE:
                lobby = switches
            elif switches != MaintenanceSwitches():
                rooms[row.scope] = switches
        return MaintenanceState(lobby=lobby, rooms=rooms)

    async def publish_maintenance(self) -> None:
        if self._board is not None:
            await self._board.publish(await self.maintenance_state())

    async def set_maintenance(
        self,
        caller: Caller,
        request_id: str,
        fingerprint: str,
        room_id: str,
        switches: MaintenanceSwitches,
        window: tuple[datetime | None, datetime | None] = (None, None),
    ) -> MaintenanceView:
        """Put the scope's switches in force, now or for the `window` (start, end); checked on the
        first call only (a retry answers as the first did, even once its window has passed)."""
        starts_at, ends_at = window

        async def work(session: AsyncSession) -> str:
            scope = await self._list_scope(session, room_id)
            now = self._clock()
            check_window(starts_at, ends_at, now)
            row = storage.MaintenanceRow(
                scope,
                switches.no_new_seats,
                switches.no_new_hands,
                switches.message,
                caller.subject,
                now,
                starts_at,
                ends_at,
            )
            await storage.put_maintenance(session, row)
            return json.dumps({"set_by": row.set_by, "at": row.updated_at.isoformat()})

        reply = json.loads(
            await self._replies.once("SetMaintenance", caller.subject, request_id, fingerprint, work)
        )
        # Shards poll the board every second; if Redis is away now, the periodic republish catches up.
        with contextlib.suppress(Exception):
            await self.publish_maintenance()
        row = storage.MaintenanceRow(
            room_id,
            switches.no_new_seats,
            switches.no_new_hands,
            switches.message,
            reply["set_by"],
            datetime.fromisoformat(reply["at"]),
            starts_at,
            ends_at,
        )
        return _view(row, room_id, self._clock())

    async def get_maintenance(
        self, caller: Caller, room_id: str, *, all_rooms: bool
    ) -> tuple[MaintenanceView, MaintenanceView | None, list[MaintenanceView]]:
        async with self._sessions() as session:
            now = self._clock()
            lobby = _view(await storage.get_maintenance(session, LOBBY_SCOPE), LOBBY_SCOPE, now)
            # A room's switches only for a caller who may see the room (ROOM_NOT_FOUND otherwise,
            # as GetRoom answers), so they tell no stranger that a private room exists.
            # Admins and services see every room (a shard without Redis polls every room's switches
            # every second: no query per room for it).
            everything = caller.is_staff or caller.service is not None
            room = None
            if room_id:
                check_room_id(room_id)
                found = await storage.get_room(session, room_id)
                if found is None or not (everything or await player_may_see(session, caller.subject, found)):
                    raise NotFound("ROOM_NOT_FOUND", "no such room", {"room_id": room_id})
                room = _view(await storage.get_maintenance(session, room_id), room_id, now)
            rooms = []
            if all_rooms:
                for row in await storage.all_maintenance(session):
                    if not row.scope:
                        continue
                    listed = None if everything else await storage.get_room(session, row.scope)
                    if everything or (
                        listed is not None and await player_may_see(session, caller.subject, listed)
                    ):
                        rooms.append(_view(row, row.scope, now))
        return lobby, room, rooms

    # --- Allow-lists. ---

    async def update_allow_list(
        self,
        caller: Caller,
        request_id: str,
        fingerprint: str,
        room_id: str,
        add: list[str],
        remove: list[str],
    ) -> int:
        for field, ids in (("add_player_ids", add), ("remove_player_ids", remove)):
            if len(ids) > MAX_PLAYERS_PER_UPDATE:
                raise InvalidArgument(
                    "FIELD_INVALID", f"at most {MAX_PLAYERS_PER_UPDATE} players per request", {"field": field}
                )
            for player_id in ids:
                # Only ids a player can have (the cashier's rule): anything else could never sit.
                require_player_id(player_id, field)

        async def work(session: AsyncSession) -> str:
            scope = await self._list_scope(session, room_id)
            await storage.remove_from_allow_list(session, scope, remove)
            await storage.add_to_allow_list(session, scope, add, caller.subject, self._clock())
            return str(await storage.allow_list_size(session, scope))

        return int(await self._replies.once("UpdateAllowList", caller.subject, request_id, fingerprint, work))

    async def list_allow_list(
        self, room_id: str, *, page_size: int, page_token: str
    ) -> tuple[list[str], str]:
        size = page_size_of(page_size, 100)
        after = after_of(page_token, _ALLOW_TOKEN_PREFIX)
        async with self._sessions() as session:
            scope = await self._list_scope(session, room_id)
            players = await storage.allow_list_page(session, scope, after=after, limit=size + 1)
        if len(players) > size:
            return players[:size], f"{_ALLOW_TOKEN_PREFIX}{players[size - 1]}"
        return players, ""

    # --- Invite codes. ---

    async def create_invite_code(
        self,
        caller: Caller,
        request_id: str,
        fingerprint: str,
        room_id: str,
        max_uses: int,
        expires_at: datetime | None,
    ) -> str:
        if not 1 <= max_uses <= MAX_INVITE_USES:
            raise InvalidArgument(
                "FIELD_INVALID", f"max_uses is 1 to {MAX_INVITE_USES}", {"field": "max_uses"}
            )
        if expires_at is not None and expires_at <= self._clock():
            raise InvalidArgument(
                "FIELD_INVALID", "expire_time must be in the future", {"field": "expire_time"}
            )

        async def work(session: AsyncSession) -> str:
            scope = await self._list_scope(session, room_id)
            code = self._make_code()
            invite = storage.InviteCode(code, scope, max_uses, 0, expires_at, caller.subject, self._clock())
            await storage.insert_invite_code(session, invite)
            return code

        return await self._replies.once("CreateInviteCode", caller.subject, request_id, fingerprint, work)

    async def redeem_invite_code(self, caller: Caller, request_id: str, fingerprint: str, code: str) -> str:
        check_text(code, "code", MAX_CODE_LENGTH)
        code = code.strip().upper()
        player_id = caller.subject

        async def work(session: AsyncSession) -> str:
            invite = await storage.get_invite_code(session, code, for_update=True)
            if invite is None:
                raise NotFound("INVITE_CODE_INVALID", "no such invite code")
            if await storage.has_redeemed(session, code, player_id):
                return invite.list_id  # the same player again: same answer, no use consumed
            if invite.expires_at is not None and invite.expires_at <= self._clock():
                raise FailedPrecondition("INVITE_CODE_EXPIRED", "the invite code has expired")
            if invite.uses >= invite.max_uses:
                raise FailedPrecondition("INVITE_CODE_EXHAUSTED", "the invite code has no uses left")
            now = self._clock()
            await storage.record_redemption(session, code, player_id, now)
            await storage.add_to_allow_list(session, invite.list_id, [player_id], f"invite:{code}", now)
            return invite.list_id

        return await self._replies.once("RedeemInviteCode", player_id, request_id, fingerprint, work)
