"""Listing a room's tables and routing a player to one: the table and the shard that owns its room.

JoinTable takes no seat: it checks access and maintenance, picks a table (the requested one, else
the one where the player holds a seat, else the fullest with a free seat, else the next table
number, up to the room's bound of tables) and
resolves the room's owner in the shard registry. A table that is not running yet is opened here, by
asking the owning shard (`table_opener`): the only way a table beyond the standing ones opens.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from service_runtime.auth import Caller, Role
from service_runtime.errors import FailedPrecondition, InvalidArgument, NotFound, Unavailable
from service_runtime.shard_registry import RoomOwner
from service_runtime.table_directory import parse_table_id, table_id_for
from service_runtime.validation import require_player_id
from services.lobby import storage
from services.lobby.access import AccessControl
from services.lobby.catalogue import Catalogue, player_may_see
from services.lobby.floor import Floor, TableView
from services.lobby.rooms import check_id, check_room_id
from services.lobby.table_opener import TableOpener

# Tables one room may run at most (its standing tables count if the room has more).
DEFAULT_MAX_TABLES_PER_ROOM = 20
# How long a player the lobby sent to a table counts as a seat taken there when the table's figures
# do not show them yet (they sit down within this, or were not going to).
ROUTED_SECONDS = 10.0


@dataclass(frozen=True)
class Joined:
    table_id: str
    owner: RoomOwner
    new_table: bool


def _number(view: TableView) -> int:
    parsed = parse_table_id(view.figures.table_id)
    return parsed[1] if parsed else 0


def pick_table(views: list[TableView], routed: Mapping[str, int] | None = None) -> TableView | None:
    """The fullest table that still has a free seat (lowest number on a tie), or None. `routed`: the
    players sent to each table (by id) that its figures do not count yet, counted as seated."""
    extra = routed or {}

    def seated(v: TableView) -> int:
        return v.figures.seated_players + extra.get(v.figures.table_id, 0)

    open_tables = [v for v in views if v.figures.free_seats - extra.get(v.figures.table_id, 0) > 0]
    if not open_tables:
        return None
    return min(open_tables, key=lambda v: (-seated(v), _number(v)))


def next_table_number(views: list[TableView]) -> int:
    taken = {_number(v) for v in views}
    number = 1
    while number in taken:
        number += 1
    return number


class RoutedPlayers:
    """The players this lobby sent to each table lately, whom the table's figures do not list yet: a
    shard publishes its figures every second or so, and every player asking in between would be sent
    to the same table and find it full (tables then opened at one a second a room). A player counts
    at the table they were sent to last until that table's figures list them (seated, or their seat
    held while the cashier opens it; from then on the figures count them), else for `keep_seconds`
    (they sit down within this, or were not going to). Figures merely newer than the routing do not
    end it: a player between JoinTable and SitDown (a buy-in dialog, a slow cashier) is in neither,
    and the next player was sent to a full table. In memory: a second lobby replica counts its own
    players (and tables may open a little early, never late)."""

    def __init__(self, clock: Callable[[], float] = time.time, keep_seconds: float = ROUTED_SECONDS) -> None:
        self._clock = clock
        self._keep = keep_seconds
        self._rooms: dict[str, dict[str, tuple[str, float]]] = {}

    def route(self, room_id: str, player_id: str, table_id: str) -> None:
        self._rooms.setdefault(room_id, {})[player_id] = (table_id, self._clock())

    def forget(self, room_id: str, player_id: str, table_id: str) -> None:
        """The routing did not happen (the table could not be opened): the player is not on the way."""
        players = self._rooms.get(room_id, {})
        if players.get(player_id, ("", 0.0))[0] == table_id:
            del players[player_id]

    def counts(self, room_id: str, views: list[TableView], asking: str = "") -> dict[str, int]:
        """Per table id, the players sent there whom its figures do not list yet; not `asking` (a
        player asking again is not in their own way)."""
        players = self._rooms.get(room_id)
        if not players:
            return {}
        now = self._clock()
        listed = {v.figures.table_id: set(v.figures.player_ids) for v in views if v.published}
        for player in [
            p
            for p, (table_id, at) in players.items()
            if now - at > self._keep or p in listed.get(table_id, ())
        ]:
            del players[player]
        if not players:
            del self._rooms[room_id]
            return {}
        counts: dict[str, int] = {}
        for player, (table_id, _) in players.items():
            if player != asking:
                counts[table_id] = counts.get(table_id, 0) + 1
        return counts


def with_routed_tables(views: list[TableView], routed: Mapping[str, int], seats: int) -> list[TableView]:
    """`views` and, as empty unpublished tables, those the lobby sent players to that no figures list
    yet (just opened), so the next number is not one of them."""
    listed = {v.figures.table_id for v in views}
    extra = [
        TableView(replace(views[0].figures, table_id=t, taken_seats=(), seats=seats, published_at=0.0), False)
        for t in sorted(routed)
        if t not in listed and views
    ]
    return sorted([*views, *extra], key=_number)


class Joining:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        catalogue: Catalogue,
        floor: Floor,
        access: AccessControl,
        *,
        opener: TableOpener | None = None,
        max_tables_per_room: int = DEFAULT_MAX_TABLES_PER_ROOM,
        routed: RoutedPlayers | None = None,
    ) -> None:
        self._sessions = sessions
        self._catalogue = catalogue
        self._floor = floor
        self._access = access
        self._opener = opener
        self._max_tables = max_tables_per_room
        self._routed = routed if routed is not None else RoutedPlayers()

    async def list_tables(self, caller: Caller, room_id: str) -> list[TableView]:
        async with self._sessions() as session:
            room = await self._catalogue.visible_room(session, caller, room_id)
        return await self._floor.tables(room)

    async def join_table(self, caller: Caller, room_id: str, table_id: str, *, spectate: bool) -> Joined:
        check_id(table_id, "table_id", required=False)
        if not caller.has(Role.PLAYER) and not (spectate and table_id):
            # Staff (the staff door finding the shard of a table a staff member views) watch a table
            # they name; only players take a seat or are sent to (or open) a room's next table.
            raise InvalidArgument(
                "FIELD_INVALID",
                "staff watch a named table: spectate with its table_id (only players take a seat)",
                {"field": "spectate" if not spectate else "table_id"},
            )
        async with self._sessions() as session:
            room = await self._catalogue.visible_room(session, caller, room_id)
            if not spectate:
                await self._access.check_seat(session, caller.subject, room)
        owner = await self._floor.owner(room.room_id)
        try:
            views = await self._floor.tables(room)
        except Unavailable:
            # The figures cannot be read (the shard is not there yet, is paused, or Redis is away):
            # take the table asked for, else the room's first standing table, opened at the room's
            # owner (idempotent), which answers UNAVAILABLE if it cannot be reached. Never a success
            # without a table (issue 41: a paused shard's room answered OK with an empty table id).
            parsed = parse_table_id(table_id) if table_id else None
            if table_id and (parsed is None or parsed[0] != room.room_id):
                raise NotFound(
                    "TABLE_NOT_FOUND", "no such table in this room", {"table_id": table_id}
                ) from None
            if not table_id:
                if room.spec.table_count < 1:
                    raise
                table_id = table_id_for(room.room_id, 1)
            if self._opener is not None:
                await self._opener.open(owner.shard.address, table_id)
            return Joined(table_id, owner, False)
        new_table = False
        # The players this lobby sent to each table that its figures do not show yet, and the tables
        # it opened that publish no figures yet (a player may be sent to one by name).
        routed = self._routed.counts(room.room_id, views, caller.subject) if not spectate else {}
        views = with_routed_tables(views, routed, room.spec.seats_per_table)
        if table_id:
            parsed = parse_table_id(table_id)
            chosen = next((v for v in views if v.figures.table_id == table_id), None)
            if parsed is None or parsed[0] != room.room_id or chosen is None:
                raise NotFound("TABLE_NOT_FOUND", "no such table in this room", {"table_id": table_id})
            if not spectate and chosen.figures.free_seats - routed.get(table_id, 0) <= 0:
                # Full, counting the players sent there who are not seated yet.
                raise FailedPrecondition("TABLE_FULL", "the table has no free seat", {"table_id": table_id})
            running = _runs_at_owner(chosen, owner)
        else:
            # A player who holds a seat in the room goes back to it (a client that lost track of
            # its table, say its SitDown's answer timed out as a shard died): it is where they can
            # act, or leave, even at a full table. Otherwise the fullest table with a free seat.
            own = (
                None if spectate else next((v for v in views if caller.subject in v.figures.player_ids), None)
            )
            picked = own or pick_table(views, routed)
            if spectate:
                picked = max(views, key=lambda v: (v.figures.seated_players, -_number(v)), default=picked)
            if picked is None:
                number = next_table_number(views)
                if number > max(self._max_tables, room.spec.table_count):
                    raise FailedPrecondition(
                        "ROOM_FULL",
                        "every table of the room is full and it runs the most tables it may",
                        {
                            "room_id": room.room_id,
                            "max_tables": str(max(self._max_tables, room.spec.table_count)),
                        },
                    )
                table_id, new_table, running = table_id_for(room.room_id, number), True, False
            else:
                table_id, running = picked.figures.table_id, _runs_at_owner(picked, owner)
        # Counted before anything is awaited: the players asking at the same moment are routed one
        # after the other, each counting those before it (counted after the shard's call, they were
        # all sent to one table).
        if not spectate:
            self._routed.route(room.room_id, caller.subject, table_id)
        if self._opener is not None and not running:
            try:
                await self._opener.open(owner.shard.address, table_id)
            except BaseException:
                if not spectate:
                    self._routed.forget(room.room_id, caller.subject, table_id)
                raise
        return Joined(table_id, owner, new_table)

    async def authorize_view(self, player_id: str, room_id: str) -> tuple[int, int, bool]:
        """For a shard about to show `player_id` a table: the lobby's visibility rule (ROOM_NOT_FOUND
        when the player may not see the room); the room's revision, standing table count, and
        whether every player may see it (public and enabled: the answer holds for anyone)."""
        require_player_id(player_id, "player_id")
        check_room_id(room_id)
        async with self._sessions() as session:
            room = await storage.get_room(session, room_id)
            if room is None or not await player_may_see(session, player_id, room):
                raise NotFound("ROOM_NOT_FOUND", "no such room", {"room_id": room_id})
        return room.revision, room.spec.table_count, not room.spec.private and not room.disabled

    async def authorize_seat(self, player_id: str, room_id: str) -> int:
        """For a shard about to seat `player_id`: the checks of JoinTable; the room's revision."""
        require_player_id(player_id, "player_id")
        check_room_id(room_id)
        async with self._sessions() as session:
            room = await storage.get_room(session, room_id)
            if room is None:
                raise NotFound("ROOM_NOT_FOUND", "no such room", {"room_id": room_id})
            await self._access.check_seat(session, player_id, room)
        return room.revision


def _runs_at_owner(view: TableView, owner: RoomOwner) -> bool:
    """Whether the table runs at the room's owner: figures it published. Figures a shard that lost the
    room published stay listed until they expire; the table is opened at the owner then (idempotent)."""
    return view.published and view.figures.shard_id == owner.shard.shard_id
