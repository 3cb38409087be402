"""Time banks of players who left a table, kept for their return (rules 9; issue 25 item 3).

Rules 9: the unused remainder of a seat's time bank stays with it; there is no refill. Leaving the
table and sitting down again must not refill it either, so when a player stands up the table keeps
what was left of their bank for `keep_seconds`, and a player who sits down again at that table within
that time gets that remainder back instead of a full bank (as card rooms keep a returning player's
obligations at a table for a while). Pure: the time is passed in; the memory is bounded by dropping
what is older than `keep_seconds` whenever something is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class KeptTimeBanks:
    """Per player id: (seconds of bank left, when they stood up), at one table."""

    keep_seconds: float
    _kept: dict[str, tuple[float, float]] = field(default_factory=dict)

    def keep(self, player_id: str, bank_seconds: float, now: float) -> None:
        """The player stood up with `bank_seconds` left."""
        self._kept = {p: kept for p, kept in self._kept.items() if now - kept[1] < self.keep_seconds}
        self._kept[player_id] = (bank_seconds, now)

    def bank_for(self, player_id: str, full_seconds: float, now: float) -> float:
        """The bank of a player sitting down now: what they left with, if they left within the keep
        time (never more than a full bank, should the room's bank have shrunk), else a full one."""
        kept = self._kept.pop(player_id, None)
        if kept is None or now - kept[1] >= self.keep_seconds:
            return full_seconds
        return min(kept[0], full_seconds)
