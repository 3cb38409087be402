"""The format of a hand's log, which a table that opens reads back to go on with a hand a previous
owner left running.

A hand's log (services/table/log/event_log.py) is, in order:

1. the engine's config entry (`hand_record.config_entry`: seats, stacks, blinds, button, the deck);
2. the table's entry (`table_entry`, `"type": "table"`): what the shell needs to go on with the hand
   that the engine does not hold - the commitment, when the hand started, the seat session of each
   seat dealt in, each player's fair-play signals (rules 17), the seating as the hand began (the
   button and blind positions and debts `plan.table_after` gave), every seated player's time bank,
   and the wall time the first turn started;
3. one entry per accepted decision, in the engine's replay format (`seat`, `action`, `to`), plus the
   shell's own keys the engine's replay ignores: `at` (the wall time it was accepted, which is when
   the next turn started), `bank` (the deciding seat's time bank after it), `ms` (how long the
   decision took, for the record), `own` (the player decided, not the clock), `counted` (a
   timeout of a connected player, which counts toward the sit-out streak) and `rid` (an `Act`'s
   player, request id, action kind and amount as asked: its retry gets the first answer).

The table's core (services/table/cash/core.py) writes these entries and applies them, live and
in a replay alike: `core.replay` rebuilds the hand from its log. A log it cannot read whole - no
config (the hand was only committed), no table entry, an entry the engine refuses - gives None:
that hand is voided.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from poker_engine.seating import Entry, SeatedPlayer
from poker_engine.seating import TableState as Seating


def seating_json(seating: Seating) -> dict[str, Any]:
    return {
        "max_seats": seating.max_seats,
        "small_blind": seating.small_blind,
        "big_blind": seating.big_blind,
        "button": seating.button,
        "small_blind_position": seating.small_blind_position,
        "big_blind_seat": seating.big_blind_seat,
        "players": [
            {
                "seat": p.seat,
                "player_id": p.player_id,
                "stack": p.stack,
                "sitting_out": p.sitting_out,
                "owes_big_blind": p.owes_big_blind,
                "owes_small_blind": p.owes_small_blind,
                "entry": p.entry.value,
            }
            for p in seating.players
        ],
    }


def seating_from_json(data: Mapping[str, Any]) -> Seating:
    def seat_or_none(value: Any) -> int | None:
        return None if value is None else int(value)

    return Seating(
        max_seats=int(data["max_seats"]),
        small_blind=int(data["small_blind"]),
        big_blind=int(data["big_blind"]),
        button=seat_or_none(data.get("button")),
        small_blind_position=seat_or_none(data.get("small_blind_position")),
        big_blind_seat=seat_or_none(data.get("big_blind_seat")),
        players=tuple(
            SeatedPlayer(
                seat=int(p["seat"]),
                player_id=str(p["player_id"]),
                stack=int(p["stack"]),
                sitting_out=bool(p["sitting_out"]),
                owes_big_blind=bool(p["owes_big_blind"]),
                owes_small_blind=bool(p["owes_small_blind"]),
                entry=Entry(p["entry"]),
            )
            for p in data["players"]
        ),
    )


def table_entry(
    *,
    commitment: str,
    started_at: float,
    seating: Seating,
    sessions: Mapping[int, str],
    signals: Mapping[str, tuple[str, str]],
    banks: Mapping[int, float],
    names: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The log's second entry (see the module's docstring); `started_at` is also the first turn's start."""
    return {
        "type": "table",
        "commitment": commitment,
        "started_at": started_at,
        "at": started_at,
        "seating": seating_json(seating),
        "sessions": {str(seat): session for seat, session in sessions.items()},
        "signals": {player: [device, network] for player, (device, network) in signals.items()},
        "banks": {str(seat): bank for seat, bank in banks.items()},
        "names": dict(names or {}),
    }
