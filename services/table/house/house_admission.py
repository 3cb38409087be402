"""Before a house-game round takes any stake: the lobby's seat check, and the room as it is now.

A house round is what a seat is at a cash table, so it passes the same question, the lobby's
AuthorizeSeat (rules 18: closed access, a private room's allow-list, a disabled room, maintenance
with no new seats), and its refusal is the answer to PlaceHouseBets, before a chip moves. The answer
carries the room's revision: when it changed since the table last read the room, the room is read
again and its new ante range, maximum payout and boxes apply from this round on (rules 11, as at
cash tables between hands). A change of game or pool never applies to a running table: the table
keeps the room it has, as a cash table keeps its seats, variant and pool.
"""

from __future__ import annotations

from service_runtime.structured_logging import get_logger
from services.table.house.house_round import HouseRoom
from services.table.house.house_table import house_room_from_pb
from services.table.ports.rooms import RoomSource

log = get_logger("table.house")


class HouseAdmission:
    def __init__(self, rooms: RoomSource, room: HouseRoom, revision: int) -> None:
        self._rooms = rooms
        self.room = room
        self.revision = revision

    async def admit(self, player_id: str) -> HouseRoom:
        """The room this player's next round plays under; the lobby's refusal raised as is."""
        revision = (await self._rooms.authorize_seat(player_id, self.room.room_id)).room_revision
        if revision != self.revision:
            entry = await self._rooms.get_room_entry(self.room.room_id)
            fresh = house_room_from_pb(entry)
            if fresh is not None and (fresh.game, fresh.pool) == (self.room.game, self.room.pool):
                self.room = fresh
            else:
                log.warning("house room change not applied: game or pool changed", room_id=self.room.room_id)
            self.revision = int(entry.revision)
        return self.room
