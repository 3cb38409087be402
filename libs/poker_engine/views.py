"""What one recipient may see of a hand record: a seated player, a spectator, or the full record.

Rules 14-16: a spectator never sees a hidden card; a player sees their own hole cards and cards shown
at showdown, never another player's unshown or mucked cards. The full record (operator, verification)
is the events unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from poker_engine.events import CardsMucked, Event, HoleCardsDealt


def player_view(events: Iterable[Event], seat: int) -> tuple[Event, ...]:
    """The record as seated player ``seat`` may see it: own hole and mucked cards, nobody else's."""
    return tuple(_redact(event, seat) for event in events)


def spectator_view(events: Iterable[Event]) -> tuple[Event, ...]:
    """The record with every hidden card removed (only the board and shown cards remain)."""
    return tuple(_redact(event, None) for event in events)


def full_record(events: Iterable[Event]) -> tuple[Event, ...]:
    """Everything, for the operator and for verification against the revealed deck."""
    return tuple(events)


def _redact(event: Event, seat: int | None) -> Event:
    if isinstance(event, HoleCardsDealt) and event.seat != seat and event.cards:
        return HoleCardsDealt(event.seat, ())
    if isinstance(event, CardsMucked) and event.seat != seat and event.cards:
        return CardsMucked(event.seat, ())
    return event


def events_to_json(events: Iterable[Event]) -> list[dict[str, Any]]:
    return [event.to_dict() for event in events]
