"""The house-game bots' pure part: the library's basic strategy as table decisions, and the deck
positions of the cards a round showed (docs/house-games.md, "Card encoding and dealing order"), so
a round can be checked afterwards with fairness `VerifyHand`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from house_games import assess_hand
from house_games.basic_strategy import (
    holdem_should_call,
    russian_cards_to_exchange,
    russian_should_buy_game,
    russian_should_play,
)

# Deck positions: Casino Hold'em deals the box's two cards, the dealer's two, then the five-card
# board; Russian Poker deals the box's five, the dealer's five (the first face up), then exchanges.
HOLDEM_DEALER_AT = 2
HOLDEM_BOARD_AT = 4
RUSSIAN_DEALER_AT = 5
RUSSIAN_EXCHANGE_AT = 10


def holdem_calls(hole: Sequence[int], flop: Sequence[int]) -> bool:
    """Casino Hold'em: call (True) or fold, on the two hole cards and the flop."""
    return holdem_should_call(hole, flop)


def russian_exchange(cards: Sequence[int]) -> tuple[int, ...]:
    """Russian Poker: the positions (0..4) of the box's cards to exchange, none to keep them all."""
    discard = russian_cards_to_exchange(assess_hand(cards))
    if not discard:
        return ()
    return tuple(i for i, card in enumerate(cards) if card in discard)


def russian_plays(cards: Sequence[int]) -> bool:
    """Russian Poker: play (True) or fold the box's (final) five cards."""
    return russian_should_play(assess_hand(cards))


def russian_buys_game(cards: Sequence[int]) -> bool:
    """Russian Poker, the dealer has no game: buy a game for the dealer (True) or take the ante."""
    return russian_should_buy_game(assess_hand(cards))


def holdem_dealt(hole: Sequence[int], dealer: Sequence[int], board: Sequence[int]) -> list[tuple[int, int]]:
    """(deck position, card) of every card a settled Casino Hold'em round showed."""
    shown = [(i, c) for i, c in enumerate(hole)]
    shown += [(HOLDEM_DEALER_AT + i, c) for i, c in enumerate(dealer)]
    shown += [(HOLDEM_BOARD_AT + i, c) for i, c in enumerate(board)]
    return shown


@dataclass
class RussianDeal:
    """The positions a Russian Poker round showed, collected as the round goes."""

    first: tuple[int, ...]
    upcard: int | None  # the dealer's face-up first card (None in a room without the upcard)
    dealt: list[tuple[int, int]] = field(default_factory=list)
    _next: int = RUSSIAN_EXCHANGE_AT

    def __post_init__(self) -> None:
        self.dealt = list(enumerate(self.first))

    def exchanged(self, indexes: Sequence[int], now: Sequence[int]) -> None:
        """The new cards come from the next deck positions, in the order of the box's cards."""
        for i in sorted(indexes):
            self.dealt.append((self._next, now[i]))
            self._next += 1

    def settled(self, dealer: Sequence[int], bought_game: bool) -> list[tuple[int, int]]:
        """All positions, once the round is settled. A bought game replaces dealer cards from further
        down the deck, so then only the upcard's position is certain."""
        if bought_game:
            upcard = [] if self.upcard is None else [(RUSSIAN_DEALER_AT, self.upcard)]
            return [*self.dealt, *upcard]
        return [*self.dealt, *((RUSSIAN_DEALER_AT + i, c) for i, c in enumerate(dealer))]
