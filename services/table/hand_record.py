"""The completed hand as history stores it, and the config of a live hand in the event log's format."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from poker.history.v1 import history_pb2
from poker_engine.cards import card_text
from poker_engine.config import HandConfig
from poker_engine.events import (
    Event,
)
from service_runtime.history_records import hand_record_from_events
from services.table.rooms import Room


def config_entry(config: HandConfig) -> dict[str, Any]:
    """The first entry of a hand's event log: `poker_engine.replay.config_from_json` reads it back."""
    return {
        "type": "config",
        "variant": config.variant.value,
        "hand_id": config.hand_id,
        "seats": [{"seat": s.seat, "player_id": s.player_id, "stack": s.stack} for s in config.seats],
        "button": config.button,
        "small_blind": config.small_blind,
        "big_blind": config.big_blind,
        "small_bet": config.small_bet,
        "big_bet": config.big_bet,
        "step": config.step,
        "rake": {"basis_points": config.rake.basis_points, "cap": config.rake.cap},
        "small_blind_seat": config.small_blind_seat,
        "big_blind_seat": config.big_blind_seat,
        "extra_posts": [{"seat": p.seat, "kind": p.kind.value} for p in config.extra_posts],
        "deck": [card_text(c) for c in config.deck],
    }


def hand_record(
    *,
    room: Room,
    table_id: str,
    config: HandConfig,
    events: Sequence[Event],
    commitment: str,
    started_at: float,
    ended_at: float | None = None,
    signals: Mapping[str, tuple[str, str]] | None = None,
    decision_ms: Mapping[int, int] | None = None,
) -> history_pb2.HandRecord:
    """The full record (every hole card included: history filters per viewer, rules 14-16), built
    by the one shared builder history's tests also use, so both read the same contract.

    `signals` maps each player to the (device, network) signals of the token they sat down with
    (rules 17, fair play: the record is the only place they leave the table, and history shows them
    to operators only); `decision_ms` maps an event's position to the milliseconds its decision took.
    """
    seat_signals = signals or {}
    return hand_record_from_events(
        events,
        hand_id=config.hand_id,
        table_id=table_id,
        room_id=room.room_id,
        pool=room.pool,  # type: ignore[arg-type]
        start_time=datetime.fromtimestamp(started_at, UTC),
        end_time=datetime.fromtimestamp(ended_at if ended_at is not None else time.time(), UTC),
        table_size=room.seats,
        client_fingerprints={player: device for player, (device, _) in seat_signals.items() if device},
        network_fingerprints={player: network for player, (_, network) in seat_signals.items() if network},
        decision_ms=decision_ms,
        seed_commitment=commitment,
    )
