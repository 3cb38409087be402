"""Stacked decks for worked examples: the named cards first, in dealing order, then the rest ascending."""

from __future__ import annotations

from poker_engine.cards import parse_cards


def stacked_deck(*groups: str) -> list[int]:
    """``stacked_deck("As Kd", "2c 3c")`` puts As Kd 2c 3c at positions 0..3 and the rest after them."""
    front: list[int] = []
    for group in groups:
        front.extend(parse_cards(group))
    if len(set(front)) != len(front):
        raise AssertionError(f"a card appears twice in {groups}")
    return front + [card for card in range(52) if card not in front]


def cards(text: str) -> tuple[int, ...]:
    return parse_cards(text)
