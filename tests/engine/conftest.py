"""Shared builders for engine tests: stacked decks that follow the documented dealing order."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from poker_engine.cards import parse_cards
from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.hand import Hand

DeckBuilder = Callable[..., tuple[int, ...]]
HandBuilder = Callable[..., Hand]


def build_deck(seats: list[int], button: int, holes: Mapping[int, str], board: str = "") -> tuple[int, ...]:
    """A deck whose deal gives ``holes`` (seat -> "AsKd") and ``board`` (up to five cards).

    Dealing order (docs/engine.md): one card at a time clockwise from the seat left of the button, two
    rounds; then burn, flop (3), burn, turn, burn, river. Unnamed positions get unused cards ascending.
    """
    order = sorted(seats, key=lambda seat: (seat - button - 1) % 10)
    wanted: list[int | None] = []
    named = {seat: parse_cards(text) for seat, text in holes.items()}
    for round_number in range(2):
        for seat in order:
            wanted.append(named[seat][round_number] if seat in named else None)
    board_cards = parse_cards(board) if board else ()
    layout = [None, 0, 1, 2, None, 3, None, 4]  # burn, flop x3, burn, turn, burn, river
    for slot in layout:
        wanted.append(board_cards[slot] if slot is not None and slot < len(board_cards) else None)
    used = {card for card in wanted if card is not None}
    assert len(used) == sum(card is not None for card in wanted), "a card is named twice"
    spare = iter(card for card in range(52) if card not in used)
    deck = [card if card is not None else next(spare) for card in wanted]
    deck.extend(spare)
    return tuple(deck)


@pytest.fixture
def make_hand() -> HandBuilder:
    """make_hand(stacks={seat: chips}, button=0, holes={seat: "AsKd"}, board="...", **config)."""

    def build(
        stacks: Mapping[int, int],
        button: int = 0,
        holes: Mapping[int, str] | None = None,
        board: str = "",
        variant: Variant = Variant.NO_LIMIT,
        small_blind: int = 5,
        big_blind: int = 10,
        step: int = 5,
        rake: RakeRule | None = None,
        **extra: object,
    ) -> Hand:
        seats = sorted(stacks)
        config = HandConfig(
            variant=variant,
            seats=tuple(SeatConfig(seat, f"player-{seat}", stacks[seat]) for seat in seats),
            button=button,
            small_blind=small_blind,
            big_blind=big_blind,
            deck=build_deck(seats, button, holes or {}, board),
            step=step,
            rake=rake or RakeRule(),
            **extra,  # type: ignore[arg-type]
        )
        return Hand(config)

    return build
