"""The live side of the lobby: which tables run in a room, how full they are, and which shard owns it.

Figures come from the table shards (`service_runtime.table_directory`: Redis with a short TTL, or the
one shard over RPC); ownership from the shard registry. A room's standing tables (1..table_count)
are listed even before any shard published them, as empty tables of the owning shard.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Protocol

from service_runtime.errors import DomainError, Unavailable
from service_runtime.shard_registry import NoShardAvailable, RoomOwner, ShardRegistry
from service_runtime.table_directory import TableFigures, parse_table_id, table_id_for
from services.lobby.rooms import Room


class TableSource(Protocol):
    async def tables_of_room(self, room_id: str) -> list[TableFigures]: ...


@dataclass(frozen=True)
class Occupancy:
    running_tables: int = 0
    seats_taken: int = 0
    seats_free: int = 0
    players_waiting: int = 0


@dataclass(frozen=True)
class TableView:
    figures: TableFigures
    # False for a standing table no shard has published yet.
    published: bool


class Floor:
    def __init__(self, registry: ShardRegistry, source: TableSource) -> None:
        self.registry = registry
        self._source = source

    async def owner(self, room_id: str) -> RoomOwner:
        try:
            return await self.registry.owner_of(room_id)
        except DomainError:
            raise
        except Exception as exc:  # Redis away: nobody can say who owns the room right now
            raise Unavailable("UNAVAILABLE", "the shard registry cannot be read right now") from exc

    async def tables(self, room: Room) -> list[TableView]:
        """Every table of the room, by number: published figures plus unpublished standing tables."""
        try:
            published = await self._source.tables_of_room(room.room_id)
        except DomainError:
            raise
        except Exception as exc:  # Redis or the shard away: say so, do not guess
            raise Unavailable("UNAVAILABLE", "the live table figures cannot be read right now") from exc
        views: dict[str, TableView] = {}
        for figures in published:
            parsed = parse_table_id(figures.table_id)
            if figures.room_id == room.room_id and parsed is not None and parsed[0] == room.room_id:
                views[figures.table_id] = TableView(figures, True)
        missing = [table_id_for(room.room_id, n) for n in range(1, room.spec.table_count + 1)]
        missing = [t for t in missing if t not in views]
        if missing:
            shard_id = ""
            with contextlib.suppress(NoShardAvailable):
                shard_id = (await self.owner(room.room_id)).shard.shard_id
            for table_id in missing:
                empty = TableFigures(
                    table_id=table_id,
                    room_id=room.room_id,
                    shard_id=shard_id,
                    seats=room.spec.seats_per_table,
                    published_at=0.0,
                )
                views[table_id] = TableView(empty, False)
        return sorted(views.values(), key=lambda v: (parse_table_id(v.figures.table_id) or ("", 0))[1])

    async def occupancy(self, room: Room) -> Occupancy:
        """The room's counts; when the figures cannot be read, only the standing tables' seats count."""
        try:
            views = await self.tables(room)
        except Unavailable:
            return Occupancy(seats_free=room.spec.table_count * room.spec.seats_per_table)
        return Occupancy(
            running_tables=sum(1 for v in views if v.figures.seated_players > 0),
            seats_taken=sum(v.figures.seated_players for v in views),
            seats_free=sum(v.figures.free_seats for v in views),
            players_waiting=sum(v.figures.waiting_players for v in views),
        )
