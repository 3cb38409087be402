"""Presence of a seated player at one table: connected or not, sitting out, hands lost to timeouts.

Pure: every time is passed in (the table's loop clock), nothing here does I/O or knows grpc.

The heartbeat (rules 13, docs/table.md "Presence"): a seated player is present while at least one of
their WatchTable streams to the table is open. The stream is the heartbeat: gRPC's HTTP/2 keepalive
ends it when the client's connection dies, and closing the app ends it too. When the last stream ends
the player is disconnected; the seat and stack are reserved for `reserve_seconds`; a new WatchTable
within the reserve reconnects. A player who has never opened a stream since taking the seat (a client
that only makes unary calls, or a seat restored after a shard restart) is not known to be away and
counts as present; the timeouts and the sit-out timeout still bound such a seat.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PresenceRules:
    reserve_seconds: float = 90.0  # rules 13: the seat of a disconnected player is kept this long
    sit_out_seconds: float = 600.0  # a player sitting out longer is removed and cashed out
    timeout_hands: int = 3  # hands in a row lost to timeouts that put a player in sit-out


class Expiry(enum.Enum):
    RESERVE = "RESERVE"  # disconnected longer than the reserve
    SIT_OUT = "SIT_OUT"  # sitting out longer than the sit-out limit


# The notice (and the metric's reason) of each expiry: the only names a removed seat is given, so
# the shard's figures can show every one at 0 from the start (services/table/metrics.py).
EXPIRY_CODES: dict[Expiry, str] = {
    Expiry.RESERVE: "SEAT_RESERVE_EXPIRED",
    Expiry.SIT_OUT: "SIT_OUT_EXPIRED",
}


@dataclass(slots=True)
class SeatPresence:
    """The presence of the player in one seat."""

    disconnected_at: float | None = None
    out_since: float | None = None  # sitting out by choice or after timeouts; None when in
    timeout_streak: int = 0

    @property
    def disconnected(self) -> bool:
        return self.disconnected_at is not None

    @property
    def sitting_out(self) -> bool:
        return self.out_since is not None

    def came_back(self) -> bool:
        """A stream of the player opened; True when it ends a disconnection."""
        if self.disconnected_at is None:
            return False
        self.disconnected_at = None
        return True

    def went_away(self, now: float) -> bool:
        """The player's last open stream ended; True when this starts a disconnection."""
        if self.disconnected_at is not None:
            return False
        self.disconnected_at = now
        return True

    def sit_out(self, now: float) -> bool:
        """True when this starts a sit-out (the clock of the sit-out limit starts then)."""
        if self.out_since is not None:
            return False
        self.out_since = now
        return True

    def sit_in(self) -> None:
        self.out_since = None
        self.timeout_streak = 0

    def hand_played(self, *, timed_out: bool, acted: bool, rules: PresenceRules) -> bool:
        """Count a finished hand the player was dealt; True when the streak puts them in sit-out.

        A hand in which they decided for themselves ends the streak, even if they also timed out in it
        (timed out on the turn, then all-in on the river: they are at the table); a hand with a timeout
        of the player (while connected) and no decision of theirs extends it; a hand with neither
        leaves it as it is.
        """
        if acted:
            self.timeout_streak = 0
        elif timed_out:
            self.timeout_streak += 1
        return self.timeout_streak >= rules.timeout_hands and self.out_since is None

    def due(self, rules: PresenceRules) -> float | None:
        """When this seat next expires (reserve or sit-out limit), if it can."""
        times = []
        if self.disconnected_at is not None:
            times.append(self.disconnected_at + rules.reserve_seconds)
        if self.out_since is not None:
            times.append(self.out_since + rules.sit_out_seconds)
        return min(times) if times else None

    def expiry(self, now: float, rules: PresenceRules) -> Expiry | None:
        if self.disconnected_at is not None and now >= self.disconnected_at + rules.reserve_seconds:
            return Expiry.RESERVE
        if self.out_since is not None and now >= self.out_since + rules.sit_out_seconds:
            return Expiry.SIT_OUT
        return None
