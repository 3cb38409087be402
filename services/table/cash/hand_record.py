"""The completed hand as history stores it, and the config of a live hand in the event log's format."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from google.protobuf.message import Message

from poker.history.v1 import history_pb2
from poker_engine.cards import card_text
from poker_engine.config import HandConfig
from poker_engine.events import (
    BoardDealt,
    CardsShown,
    Event,
    HoleCardsDealt,
)
from service_runtime.history_records import hand_record_from_events

if TYPE_CHECKING:
    from services.table.ports.rooms import Room


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
    ended_at: float,
    signals: Mapping[str, tuple[str, str]] | None = None,
    decision_ms: Mapping[int, int] | None = None,
    names: Mapping[str, str] | None = None,
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
        end_time=datetime.fromtimestamp(ended_at, UTC),
        table_size=room.seats,
        client_fingerprints={player: device for player, (device, _) in seat_signals.items() if device},
        network_fingerprints={player: network for player, (_, network) in seat_signals.items() if network},
        decision_ms=decision_ms,
        seed_commitment=commitment,
        display_names=names,
    )


@dataclass(frozen=True)
class SeenPositions:
    """Which deal positions of a hand were public and which each player saw privately, as fairness
    version 3 opens them after the hand (docs/fairness.md, "Who gets which openings")."""

    public: tuple[int, ...] = ()
    seen: tuple[tuple[str, tuple[int, ...]], ...] = ()


def _card_indexes(message: Message) -> list[int]:
    """Every `poker.common.v1.Card` index inside a record, depth first."""
    found: list[int] = []
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        items = value if descriptor.is_repeated else [value]
        for item in items:
            if isinstance(item, Message):
                if item.DESCRIPTOR.full_name == "poker.common.v1.Card":
                    found.append(int(getattr(item, "index")))  # noqa: B009 - any Card-shaped message
                else:
                    found.extend(_card_indexes(item))
    return found


def seen_positions(record: history_pb2.HandRecord, deck: Sequence[int]) -> SeenPositions:
    """From the full record and the dealt deck: a cash hand's board and the hole cards shown at
    showdown are public, each player saw their own hole cards, and burnt, folded and mucked cards
    and the undealt rest are nobody's; a house-game round's player saw every card it dealt."""
    where = {card: position for position, card in enumerate(deck)}

    def positions(cards: Sequence[int]) -> tuple[int, ...]:
        return tuple(sorted({where[c] for c in cards if c in where}))

    if record.HasField("house_game"):
        # A house round deals from the front of the deck with no burn cards and shows its player
        # every card it dealt by the end, exchanged-out cards and the dealer's replaced ones
        # included, though the record holds only the final hands; the last card dealt is always in
        # a final hand (only a later card can replace it), so the player saw every position up to
        # the highest the record holds.
        players = [s.player_id for s in record.seats]
        dealt = positions(_card_indexes(record))
        shown = tuple(range(dealt[-1] + 1)) if dealt else ()
        return SeenPositions(seen=tuple((p, shown) for p in players[:1]))
    public = [int(c.index) for c in record.board]
    for seat in record.seats:
        if seat.shown:
            public.extend(int(c.index) for c in seat.hole_cards)
    seen = tuple(
        (seat.player_id, positions([int(c.index) for c in seat.hole_cards]))
        for seat in record.seats
        if seat.player_id
    )
    return SeenPositions(positions(public), seen)


def seen_so_far(config: HandConfig, events: Sequence[Event]) -> SeenPositions:
    """A hand that ended with no record (voided after the deal), from its config and the events its
    log replays to: the board dealt so far and any card shown are public, each player saw their own
    hole cards, and the rest (burnt, undealt) is nobody's."""
    where = {card: position for position, card in enumerate(config.deck)}
    players = {s.seat: s.player_id for s in config.seats}

    def positions(cards: Sequence[int]) -> tuple[int, ...]:
        return tuple(sorted({where[c] for c in cards if c in where}))

    public: list[int] = []
    own: dict[str, list[int]] = {}
    for event in events:
        if isinstance(event, BoardDealt | CardsShown):
            public.extend(event.cards)
        elif isinstance(event, HoleCardsDealt) and event.seat in players:
            own.setdefault(players[event.seat], []).extend(event.cards)
    return SeenPositions(
        positions(public), tuple((player, positions(cards)) for player, cards in own.items())
    )
