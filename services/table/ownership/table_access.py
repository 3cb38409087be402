"""Which table a call reaches, who may read it, and which calls may open one (issue 23, items 4, 6).

One check for every read of every table kind (GetTableSnapshot, WatchTable, SpectateTable, the
house-game views): a player who has no seat (no round, at a house table) sees a table only if the
lobby's visibility rule lets them see its room (`AuthorizeView`: a private room for its allow-list, a
disabled room for nobody), the rule ListRooms and ListTables apply. A stranger gets
TABLE_NOT_FOUND, the answer for a table that does not exist, so a private room's tables do not even
show that they are there. Admins and services read every table. The lobby's answers are kept
`ANSWER_SECONDS` per player and room, so a watcher polling snapshots costs the lobby one call in
that time (a change of the allow-list reaches the table within it).

A stream already open keeps obeying the rule: while it runs, a player without a seat is asked about
again every `view_recheck_seconds` (at the next update after that, through the same cached answer),
and a room that turned private, or a player taken off its allow-list, ends their stream with
TABLE_NOT_FOUND before another update reaches them.

No read and no player's command opens a table beyond a room's standing ones (`<room>.1` to
`.table_count`, which the catalogue lists whether they run or not): such a table opens only when
the lobby's JoinTable routes a player there (ShardDirectoryService.OpenTable, within the lobby's
bound per room), or when the shard reopens a table that still has seated players after a restart.
"""

from __future__ import annotations

from collections.abc import Callable

from service_runtime.auth import Caller
from service_runtime.errors import FailedPrecondition, NotFound
from service_runtime.table_directory import parse_table_id
from services.table.cash.actor import TableActor
from services.table.house.house_table import HouseTable
from services.table.ownership.shard import TableShard
from services.table.ports.clock import WALL_CLOCK
from services.table.ports.rooms import RoomSource, room_of_table

ANSWER_SECONDS = 2.0
MAX_ANSWERS = 50_000

AnyTable = TableActor | HouseTable


def _no_table() -> NotFound:
    return NotFound("TABLE_NOT_FOUND", "no such table", {"field": "table_id"})


def cash_table(table: AnyTable) -> TableActor:
    if isinstance(table, HouseTable):
        raise FailedPrecondition("HOUSE_GAME_TABLE", "this table plays a house game against the dealer")
    return table


def house_table(table: AnyTable) -> HouseTable:
    if not isinstance(table, HouseTable):
        raise FailedPrecondition("NOT_A_HOUSE_TABLE", "this table is a cash table")
    return table


def takes_part(table: AnyTable, player_id: str) -> bool:
    """Seated at the cash table, or with a round (or a committed next round) at the house table."""
    return table.takes_part(player_id)


def holds_own_stream(table: AnyTable, player_id: str) -> bool:
    """Whose WatchTable stream comes out of the seated players' reserve, not the viewers' share
    (`stream_budget`): a player seated at the cash table, or with a round they staked on at the house
    table. A committed next round alone (SetPlayerSeed, which costs nothing) does not count, or any
    account could take the reserve."""
    return table.holds_own_stream(player_id)


class TableAccess:
    def __init__(
        self,
        shard: TableShard,
        rooms: RoomSource,
        *,
        answer_seconds: float = ANSWER_SECONDS,
        clock: Callable[[], float] = WALL_CLOCK.now,
    ) -> None:
        self._shard = shard
        self._rooms = rooms
        self._answer_seconds = answer_seconds
        self._clock = clock
        # (player, room) -> (until, the room's standing table count; None: the player may not see it)
        self._answers: dict[tuple[str, str], tuple[float, int | None]] = {}
        # room -> (until, its standing table count) for a room every player may see (the lobby says
        # so): one lobby call a room per `answer_seconds`, not one a reader (issue 45: spectators).
        self._open_rooms: dict[str, tuple[float, int]] = {}

    async def for_command(self, table_id: str) -> AnyTable:
        """The table a player's command (or an admin's) goes to: a running one, or a standing one
        opened now; TABLE_NOT_FOUND for any other (ask the lobby's JoinTable)."""
        running = self._shard.running(table_id)
        if running is not None:
            return running
        room_id = room_of_table(table_id)
        try:
            entry = await self._rooms.get_room_entry(room_id)
        except NotFound as error:
            raise _no_table() from error
        return await self._open_standing(table_id, int(entry.table_count))

    async def for_player_command(self, caller: Caller, table_id: str) -> AnyTable:
        """`for_command`, and for a player who takes no part at the table the room's visibility rule
        too: a stranger's command at a private room's table answers TABLE_NOT_FOUND, as for a table
        that does not exist (NOT_SEATED or a seat refusal would tell them it is there)."""
        table = await self.for_command(table_id)
        if caller.is_staff or caller.service is not None or takes_part(table, caller.subject):
            return table
        if await self._visible(caller.subject, room_of_table(table_id)) is None:
            raise _no_table()
        return table

    async def for_read(self, caller: Caller, table_id: str) -> AnyTable:
        """The table a read goes to, if the caller may see it (see the module docstring)."""
        room_id = room_of_table(table_id)
        running = self._shard.running(table_id)
        if caller.is_staff or caller.service is not None:
            return running or await self.for_command(table_id)
        if running is not None and takes_part(running, caller.subject):
            return running
        standing = await self._visible(caller.subject, room_id)
        if standing is None:
            raise _no_table()
        return running or await self._open_standing(table_id, standing)

    async def still_sees(self, caller: Caller, table: AnyTable) -> bool:
        """Whether a reader whose stream is open may still see the table (the module docstring)."""
        if caller.is_staff or caller.service is not None or takes_part(table, caller.subject):
            return True
        return await self._visible(caller.subject, room_of_table(table.table_id)) is not None

    def view_guard(self, caller: Caller, table: AnyTable, every_seconds: float) -> ViewGuard:
        return ViewGuard(self, caller, table, every_seconds, self._clock)

    async def open_routed(self, table_id: str) -> AnyTable:
        """The lobby's JoinTable routed a player to this table (it checked the room's bound)."""
        return self._shard.running(table_id) or await self._shard.any_table(table_id)

    async def _open_standing(self, table_id: str, table_count: int) -> AnyTable:
        parsed = parse_table_id(table_id)
        if parsed is None or parsed[1] > max(1, table_count):
            raise _no_table()
        return await self._shard.any_table(table_id)

    async def _visible(self, player_id: str, room_id: str) -> int | None:
        now = self._clock()
        open_room = self._open_rooms.get(room_id)
        if open_room is not None and open_room[0] > now:
            return open_room[1]
        key = (player_id, room_id)
        kept = self._answers.get(key)
        if kept is not None and kept[0] > now:
            return kept[1]
        try:
            grant = await self._rooms.authorize_view(player_id, room_id)
            answer: int | None = grant.table_count
        except NotFound:
            answer = None
        else:
            if grant.everyone:
                if len(self._open_rooms) >= MAX_ANSWERS:
                    self._open_rooms = {r: v for r, v in self._open_rooms.items() if v[0] > now}
                self._open_rooms[room_id] = (now + self._answer_seconds, grant.table_count)
                return grant.table_count
        if len(self._answers) >= MAX_ANSWERS:
            self._answers = {k: v for k, v in self._answers.items() if v[0] > now}
            if len(self._answers) >= MAX_ANSWERS:
                self._answers.clear()
        self._answers[key] = (now + self._answer_seconds, answer)
        return answer


class ViewGuard:
    """One open stream's recurring visibility check: `check()` before each update is cheap (a clock
    read) until `every_seconds` have passed since the last real check."""

    def __init__(
        self,
        access: TableAccess,
        caller: Caller,
        table: AnyTable,
        every_seconds: float,
        clock: Callable[[], float],
    ) -> None:
        self._access = access
        self._caller = caller
        self._table = table
        self._every = every_seconds
        self._clock = clock
        self._next = clock() + every_seconds

    async def check(self) -> None:
        """NotFound(TABLE_NOT_FOUND) once the caller may no longer see the table."""
        now = self._clock()
        if now < self._next:
            return
        self._next = now + self._every
        if not await self._access.still_sees(self._caller, self._table):
            raise _no_table()
