"""Who saw which deal positions of a version 3 hand, as the table reports at its end, and so which
openings each reader gets (docs/fairness.md, "Who gets which openings"). No I/O.

A participant gets the public positions (the board, cards shown at showdown) and their own; any
other reader the public positions only; admins all 52, for disputes. Folded, mucked and undealt
positions are in nobody's set but the admins'.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from service_runtime.errors import InvalidArgument
from services.fairness.shuffle import DECK_SIZE

ALL_POSITIONS = frozenset(range(DECK_SIZE))


def _positions(values: Iterable[int], field_name: str) -> frozenset[int]:
    found = frozenset(values)
    if any(not 0 <= p < DECK_SIZE for p in found):
        raise InvalidArgument("FIELD_INVALID", "a deal position is 0..51", {"field": field_name})
    return found


@dataclass(frozen=True)
class Visibility:
    """The public deal positions and, per participant, the positions they saw privately."""

    public: frozenset[int] = frozenset()
    seen: tuple[tuple[str, frozenset[int]], ...] = field(default=())

    @classmethod
    def reported(
        cls, public: Iterable[int], seen: Iterable[tuple[str, Iterable[int]]], participants: Iterable[str]
    ) -> Visibility:
        """From the table's report, validated: positions 0..51, each player a participant, once."""
        allowed = set(participants)
        by_player: dict[str, frozenset[int]] = {}
        for player, positions in seen:
            if player not in allowed:
                raise InvalidArgument(
                    "FIELD_INVALID",
                    "a player who saw cards is not a participant",
                    {"field": "seen.player_id"},
                )
            if player in by_player:
                raise InvalidArgument("FIELD_INVALID", "a player is named twice", {"field": "seen.player_id"})
            by_player[player] = _positions(positions, "seen.positions")
        return cls(_positions(public, "public_positions"), tuple(sorted(by_player.items())))

    def own(self, player_id: str) -> frozenset[int]:
        return next((positions for player, positions in self.seen if player == player_id), frozenset())

    def positions_for(self, *, admin: bool, participant: str | None) -> frozenset[int]:
        """What one reader may have opened: `participant` is the reader's id if they played the hand."""
        if admin:
            return ALL_POSITIONS
        return self.public | (self.own(participant) if participant else frozenset())

    def to_text(self) -> str:
        if not self.public and not self.seen:
            return ""
        return json.dumps(
            {"public": sorted(self.public), "seen": {p: sorted(s) for p, s in self.seen}}, sort_keys=True
        )

    @classmethod
    def from_text(cls, text: str) -> Visibility:
        """The stored form read back; a damaged one opens nothing to anyone but admins (it fails
        closed, and the hand still answers: no read of it becomes an INTERNAL error)."""
        if not text:
            return cls()
        try:
            data = json.loads(text)
            public, seen = data["public"], data["seen"]
            if not isinstance(public, list) or not isinstance(seen, dict):
                return cls()
            parsed = cls(
                frozenset(int(p) for p in public),
                tuple(sorted((str(k), frozenset(int(p) for p in v)) for k, v in seen.items())),
            )
        except (ValueError, TypeError, KeyError):
            return cls()
        everything = parsed.public.union(*(positions for _, positions in parsed.seen))
        return parsed if everything <= ALL_POSITIONS else cls()
