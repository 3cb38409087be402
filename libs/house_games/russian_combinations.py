"""Russian Poker combinations built on the shared evaluator: ace-king, the cards a combination uses,
the two-combination rule, and the dealer's "game".

The evaluator's strength already orders ace-king correctly (an A-K high hand beats every other high
card hand and loses to every pair) and breaks ties by the higher cards, which is exactly the rule
"equal combinations compare by the higher cards"; this module adds what the evaluator does not know.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import combinations

from poker_engine.cards import rank_of
from poker_engine.evaluator import HandCategory, HandValue, evaluate

ACE = 12
KING = 11


class RussianCombination(IntEnum):
    """Player combinations of Russian Poker, weakest first; ACE_KING sits between high card and pair."""

    NO_COMBINATION = 0
    ACE_KING = 1
    ONE_PAIR = 2
    TWO_PAIR = 3
    THREE_OF_A_KIND = 4
    STRAIGHT = 5
    FLUSH = 6
    FULL_HOUSE = 7
    FOUR_OF_A_KIND = 8
    STRAIGHT_FLUSH = 9
    ROYAL_FLUSH = 10


# How many of the best five (evaluator order: combination cards first, then kickers) form the
# combination; the rest are kickers and do not belong to it (two-combination rule).
_COMBINATION_CARD_COUNT = {
    HandCategory.ONE_PAIR: 2,
    HandCategory.TWO_PAIR: 4,
    HandCategory.THREE_OF_A_KIND: 3,
    HandCategory.FOUR_OF_A_KIND: 4,
    HandCategory.STRAIGHT: 5,
    HandCategory.FLUSH: 5,
    HandCategory.FULL_HOUSE: 5,
    HandCategory.STRAIGHT_FLUSH: 5,
    HandCategory.ROYAL_FLUSH: 5,
}


@dataclass(frozen=True, slots=True)
class Combination:
    """A combination and the cards that make it (kickers excluded); NO_COMBINATION has no cards."""

    kind: RussianCombination
    cards: tuple[int, ...]


NO_COMBINATION = Combination(RussianCombination.NO_COMBINATION, ())


@dataclass(frozen=True, slots=True)
class RussianHand:
    """A player's or dealer's 5 or 6 cards assessed for Russian Poker.

    ``value`` is the evaluator's best five (compare ``value.strength`` with the dealer's); ``main`` is
    the combination of that best five; ``second`` is the best other combination that uses at least one
    card not in ``main`` (paid only together with a winning ``main``), or None.
    """

    cards: tuple[int, ...]
    value: HandValue
    main: Combination
    second: Combination | None

    @property
    def strength(self) -> int:
        return self.value.strength

    @property
    def has_game(self) -> bool:
        """Ace-king or better: the dealer's minimum game, and the least a player needs to be paid."""
        return self.main.kind >= RussianCombination.ACE_KING


def _ace_kings(cards: Sequence[int]) -> list[Combination]:
    aces = [card for card in cards if rank_of(card) == ACE]
    kings = [card for card in cards if rank_of(card) == KING]
    return [Combination(RussianCombination.ACE_KING, (ace, king)) for ace in aces for king in kings]


def combination_of(value: HandValue) -> Combination:
    """The Russian combination of an evaluated best five."""
    category = value.category
    if category == HandCategory.HIGH_CARD:
        ace_kings = _ace_kings(value.best_five)
        return ace_kings[0] if ace_kings else NO_COMBINATION
    kind = RussianCombination(int(category) + 1)
    return Combination(kind, value.best_five[: _COMBINATION_CARD_COUNT[category]])


def _second_combination(cards: tuple[int, ...], main: Combination) -> Combination | None:
    """Best combination that includes at least one card outside ``main``.

    Candidates are the combinations of every five-card subset plus every ace-king pair, so on five
    cards only ace-king can qualify (the rule says so) and on six cards two full combinations can.
    Among candidates the higher kind wins; the pay table pays by kind, so that is the better payout.
    """
    if main.kind == RussianCombination.NO_COMBINATION:
        return None
    used = set(main.cards)
    candidates = _ace_kings(cards)
    if len(cards) > 5:
        for five in combinations(cards, 5):
            candidate = combination_of(evaluate(five))
            if candidate.kind >= RussianCombination.ONE_PAIR:
                candidates.append(candidate)
    best: Combination | None = None
    for candidate in candidates:
        if not set(candidate.cards) - used:
            continue
        if best is None or candidate.kind > best.kind:
            best = candidate
    return best


def assess_hand(cards: Sequence[int]) -> RussianHand:
    """Assess 5 or 6 cards: best five, main combination and the second combination if any."""
    hand = tuple(cards)
    value = evaluate(hand)
    main = combination_of(value)
    return RussianHand(hand, value, main, _second_combination(hand, main))


def five_card_bonus_combination(cards: Sequence[int]) -> RussianCombination:
    """The combination of the five dealt cards, for the bonus bet (paid before any exchange)."""
    return combination_of(evaluate(tuple(cards))).kind
