"""Streams to callers who take no part in a table, bounded so that seated players always have room
(issue 23, item 5).

A viewer is a SpectateTable stream, or a WatchTable stream of a player with no seat at that cash
table (no round they staked on, at a house table: `table_access.holds_own_stream`). A shard serves at most `max_viewer_streams` of them together (the server's stream bound minus
`seated_stream_reserve`): the rest of the server's streams are kept for seated players' own
WatchTable streams, which no spectator load can take, so a seated player whose connection dropped
always watches again within the seat reserve. One account holds at most `spectator_streams_per_account`
viewer streams at one table (and, through the server's per-player stream share, a bounded number
across the shard), so one account cannot take a table's spectator slots from everyone else.

Pure bookkeeping (no I/O): the adapter takes a ticket before it opens a viewer stream and gives it
back when the stream ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from service_runtime.errors import ResourceExhausted


@dataclass(frozen=True, slots=True)
class ViewerTicket:
    player_id: str
    table_id: str


class ViewerStreams:
    def __init__(self, *, max_viewer_streams: int, per_account_at_table: int) -> None:
        self.max_viewer_streams = max_viewer_streams
        self.per_account_at_table = per_account_at_table
        self.open = 0
        self._held: dict[tuple[str, str], int] = {}

    def admit(self, player_id: str, table_id: str) -> ViewerTicket:
        key = (player_id, table_id)
        if self._held.get(key, 0) >= self.per_account_at_table:
            raise ResourceExhausted(
                "SPECTATOR_QUOTA_EXCEEDED",
                f"you already watch this table on {self.per_account_at_table} streams without a seat; close one first",
                {"limit": str(self.per_account_at_table)},
            )
        if self.open >= self.max_viewer_streams:
            raise ResourceExhausted(
                "VIEWERS_FULL",
                "this shard serves its most streams to callers without a seat (the rest is kept for "
                "seated players); try again later",
                {"limit": str(self.max_viewer_streams)},
            )
        self._held[key] = self._held.get(key, 0) + 1
        self.open += 1
        return ViewerTicket(player_id, table_id)

    def release(self, ticket: ViewerTicket | None) -> None:
        if ticket is None:
            return
        key = (ticket.player_id, ticket.table_id)
        held = self._held.get(key, 0) - 1
        if held > 0:
            self._held[key] = held
        else:
            self._held.pop(key, None)
        self.open -= 1
