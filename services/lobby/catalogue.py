"""The catalogue use cases: list, get, create, update, disable and enable rooms.

One short transaction each; admin mutations are idempotent by request id through `RequestReplies`.
Occupancy comes from the live tables (`Floor`), never from this database.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from service_runtime.auth import STAFF_ROLES, Caller
from service_runtime.errors import AlreadyExists, InvalidArgument, NotFound
from services.lobby import storage
from services.lobby.floor import Floor, Occupancy
from services.lobby.replies import RequestReplies
from services.lobby.rooms import Pool, Room, RoomSpec, Variant, check_room_id, validate_spec, with_changes
from services.lobby.storage import RoomFilter

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
MAX_STAKE_FILTER = 10**12
_PAGE_TOKEN_PREFIX = "rooms-after:"


@dataclass(frozen=True)
class RoomView:
    room: Room
    occupancy: Occupancy


def room_to_json(room: Room) -> str:
    raw = asdict(room)
    raw["created_at"] = room.created_at.isoformat()
    raw["updated_at"] = room.updated_at.isoformat()
    return json.dumps(raw)


def room_from_json(text: str) -> Room:
    raw = json.loads(text)
    spec = raw.pop("spec")
    spec["variant"], spec["pool"] = Variant(spec["variant"]), Pool(spec["pool"])
    return Room(
        spec=RoomSpec(**spec),
        disabled=raw["disabled"],
        revision=raw["revision"],
        created_at=datetime.fromisoformat(raw["created_at"]),
        updated_at=datetime.fromisoformat(raw["updated_at"]),
    )


def page_size_of(requested: int, default: int = DEFAULT_PAGE_SIZE) -> int:
    if requested < 0:
        raise InvalidArgument("FIELD_INVALID", "page_size must not be negative", {"field": "page.page_size"})
    return min(requested or default, MAX_PAGE_SIZE)


def after_of(page_token: str, prefix: str) -> str:
    if not page_token:
        return ""
    if not page_token.startswith(prefix) or len(page_token) > 256:
        raise InvalidArgument("PAGE_TOKEN_INVALID", "the page token was not issued by this RPC")
    return page_token.removeprefix(prefix)


async def player_may_see(session: AsyncSession, player_id: str, room: Room) -> bool:
    """The visibility rule for a player, here, at GetMaintenance and at the table shards
    (AuthorizeView): a disabled room for nobody, a private room for its allow-list only."""
    if room.disabled:
        return False
    return not room.spec.private or await storage.is_allowed(session, room.room_id, player_id)


async def may_see(session: AsyncSession, caller: Caller, room: Room) -> bool:
    # Staff, and any named service (a table shard reads every room it serves, private or
    # disabled ones included; the access policy decides which services reach this at all).
    if caller.is_staff or caller.service is not None:
        return True
    return await player_may_see(session, caller.subject, room)


class Catalogue:
    """Rooms: read by anyone (private rooms only by those allowed), changed by admins."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        replies: RequestReplies,
        floor: Floor,
        clock: Callable[[], datetime],
    ) -> None:
        self._sessions = sessions
        self._replies = replies
        self._floor = floor
        self._clock = clock

    async def visible_room(self, session: AsyncSession, caller: Caller, room_id: str) -> Room:
        """The room, or ROOM_NOT_FOUND also when the caller may not see it (no existence leak)."""
        check_room_id(room_id)
        room = await storage.get_room(session, room_id)
        if room is None or not await may_see(session, caller, room):
            raise NotFound("ROOM_NOT_FOUND", "no such room", {"room_id": room_id})
        return room

    async def list_rooms(
        self, caller: Caller, where: RoomFilter, *, page_size: int, page_token: str
    ) -> tuple[list[RoomView], str]:
        size = page_size_of(page_size)
        after = after_of(page_token, _PAGE_TOKEN_PREFIX)
        for name in ("min_stake", "max_stake"):
            if not 0 <= getattr(where, name) <= MAX_STAKE_FILTER:
                raise InvalidArgument("FIELD_INVALID", f"{name} is 0 to {MAX_STAKE_FILTER}", {"field": name})
        if where.max_stake and where.min_stake > where.max_stake:
            raise InvalidArgument("FIELD_INVALID", "min_stake is above max_stake", {"field": "min_stake"})
        if where.include_disabled:
            caller.require(*STAFF_ROLES)
        async with self._sessions() as session:
            found = await storage.list_rooms(session, where, after_room_id=after, limit=size + 1)
            more = len(found) > size
            found = found[:size]
            visible = [room for room in found if await may_see(session, caller, room)]
        views = [RoomView(room, await self._floor.occupancy(room)) for room in visible]
        next_token = f"{_PAGE_TOKEN_PREFIX}{found[-1].room_id}" if more and found else ""
        return views, next_token

    async def get_room(self, caller: Caller, room_id: str) -> RoomView:
        async with self._sessions() as session:
            room = await self.visible_room(session, caller, room_id)
        return RoomView(room, await self._floor.occupancy(room))

    async def create_room(self, caller: Caller, request_id: str, fingerprint: str, spec: RoomSpec) -> Room:
        validate_spec(spec)

        async def work(session: AsyncSession) -> str:
            if await storage.get_room(session, spec.room_id) is not None:
                raise AlreadyExists(
                    "ROOM_ALREADY_EXISTS", "a room with this id exists", {"room_id": spec.room_id}
                )
            now = self._clock()
            room = Room(spec=spec, disabled=False, revision=1, created_at=now, updated_at=now)
            await storage.insert_room(session, room)
            return room_to_json(room)

        try:
            reply = await self._replies.once("CreateRoom", caller.subject, request_id, fingerprint, work)
        except IntegrityError as exc:
            # Another request created the same room id between our check and insert.
            raise AlreadyExists(
                "ROOM_ALREADY_EXISTS", "a room with this id exists", {"room_id": spec.room_id}
            ) from exc
        return room_from_json(reply)

    async def _change(
        self,
        method: str,
        caller: Caller,
        request_id: str,
        fingerprint: str,
        room_id: str,
        change: Callable[[Room], Room],
    ) -> Room:
        check_room_id(room_id)

        async def work(session: AsyncSession) -> str:
            room = await storage.get_room(session, room_id, for_update=True)
            if room is None:
                raise NotFound("ROOM_NOT_FOUND", "no such room", {"room_id": room_id})
            changed = change(room)
            if changed != room:
                changed = replace(changed, revision=room.revision + 1, updated_at=self._clock())
                await storage.update_room(session, changed)
            return room_to_json(changed)

        return room_from_json(await self._replies.once(method, caller.subject, request_id, fingerprint, work))

    async def update_room(
        self,
        caller: Caller,
        request_id: str,
        fingerprint: str,
        room_id: str,
        build: Callable[[RoomSpec], RoomSpec],
    ) -> Room:
        """`build` makes the new spec from the stored one (the adapter fills what the request left out)."""
        check_room_id(room_id, "room.room_id")

        def change(room: Room) -> Room:
            current = room.spec
            spec = build(current)
            for name in ("variant", "pool", "seats_per_table"):
                if getattr(spec, name) != getattr(current, name):
                    raise InvalidArgument(
                        "FIELD_INVALID", f"a room's {name} cannot change", {"field": f"room.{name}"}
                    )
            return replace(room, spec=validate_spec(with_changes(current, spec)))

        return await self._change("UpdateRoom", caller, request_id, fingerprint, room_id, change)

    async def set_disabled(
        self, caller: Caller, request_id: str, fingerprint: str, room_id: str, *, disabled: bool
    ) -> Room:
        method = "DisableRoom" if disabled else "EnableRoom"
        return await self._change(
            method, caller, request_id, fingerprint, room_id, lambda room: replace(room, disabled=disabled)
        )
