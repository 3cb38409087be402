"""What the shard and the access rules need of a table, whatever its game (issue 42: "one shell for
every game"): the cash table (`services/table/cash/actor.py`) and the house-game table
(`services/table/house/house_table.py`) both are one. The shard opens, hands over, closes and stops
tables through this protocol alone; only the RPCs of one game ask for that game's table
(`table_access.cash_table`, `house_table`).
"""

from __future__ import annotations

from typing import Protocol


class RoomOfTable(Protocol):
    @property
    def room_id(self) -> str: ...


class Table(Protocol):
    table_id: str
    # The room's fencing token when the shard opened the table (the room is released with it).
    fencing_token: int

    @property
    def room(self) -> RoomOfTable: ...

    @property
    def closed(self) -> bool:
        """Takes no command any more (closed, fenced, stopping or ended)."""

    @property
    def between_hands(self) -> bool:
        """Nothing in play and nothing owed: the table can stop without leaving work to a next owner."""

    @property
    def has_seat_sessions(self) -> bool:
        """Its players sit with seat sessions in the cashier (a cash table): a room's other tables with
        open sessions are opened with its first, so their players are seated again at once."""

    def start(self) -> None: ...

    async def stop(self) -> None: ...

    def hand_over(self) -> None:
        """No new hand or round from now on: the room moves to another shard."""

    def keep(self) -> None:
        """The room stays after all: hands and rounds start again."""

    async def quiet_for_handover(self) -> bool:
        """Close for the room's handover if nothing is in play, after any command under way (False:
        not yet, the next round asks again)."""

    def takes_part(self, player_id: str) -> bool:
        """Seated at the table, or with a round (or a committed next round) there."""

    def holds_own_stream(self, player_id: str) -> bool:
        """Whose WatchTable stream comes out of the seated players' reserve, not the viewers' share."""
