"""Deck order given by the caller (the fairness service) and a cursor that deals it front to back.

The library never shuffles: a round is a pure function of its deck order and its decisions, so the
table service (or an auditor) can re-derive a round from the revealed deck.
"""

from __future__ import annotations

from collections.abc import Sequence

from house_games.errors import InvalidDeckError

DECK_SIZE = 52


def validate_deck(deck: Sequence[int]) -> tuple[int, ...]:
    """Return the deck as a tuple, or raise if it is not a permutation of 0..51."""
    order = tuple(deck)
    if len(order) != DECK_SIZE or sorted(order) != list(range(DECK_SIZE)):
        raise InvalidDeckError("a deck must be a permutation of the card codes 0..51")
    return order


class DeckCursor:
    """Deals cards from the front of a validated deck and remembers the next position."""

    def __init__(self, deck: Sequence[int]) -> None:
        self._deck = validate_deck(deck)
        self._position = 0

    @property
    def position(self) -> int:
        """Index of the next card to be dealt."""
        return self._position

    @property
    def remaining(self) -> int:
        return DECK_SIZE - self._position

    def deal(self, count: int) -> tuple[int, ...]:
        if count > self.remaining:
            # Cannot happen within the table limits (see the box-count checks); guard anyway.
            raise InvalidDeckError("the deck ran out of cards", reason="DECK_EXHAUSTED")
        cards = self._deck[self._position : self._position + count]
        self._position += count
        return cards
