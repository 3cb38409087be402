"""The simple, documented strategies the simulator plays (not optimal; see docs/house-games.md).

Casino Hold'em, after the flop: call with a pair or better that uses a hole card (a flush or straight
made on the flop included), four to a flush, an open-ended straight draw (both using a hole card), or a
nine or better in the hole; otherwise fold (85% of hands call, see docs/house-games.md).

Russian Poker, one light box (figures from simulating each option, see docs/house-games.md):
* play two pairs or better, a pair with a second combination, and a pair of nines or better;
* a pair of eights or lower: keep the pair and exchange the other three cards;
* ace-king: keep the ace and the king and exchange the other three;
* no combination: exchange the odd card of a four-card flush or open-ended straight; otherwise keep
  an ace or a king and exchange the other four; otherwise fold;
* after an exchange play ace-king or better and fold the rest; never buy a sixth card; never insure;
* when the dealer has no game, buy a game with three of a kind or better, otherwise take the ante.
A dark box (no decisions) uses the same no-game rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from house_games.russian_combinations import RussianCombination, RussianHand
from poker_engine.cards import rank_of, suit_of

_NINE = 7
_KING = 11
_ACE = 12


def _ranks_with_low_ace(cards: Sequence[int]) -> set[int]:
    ranks = {rank_of(card) for card in cards}
    # The ace also plays low in A-2-3-4-5: give it the virtual rank -1.
    return ranks | {-1} if _ACE in ranks else ranks


def _open_ended_draw(cards: Sequence[int]) -> tuple[int, ...] | None:
    """Four cards of consecutive ranks that two different cards would complete, or None."""
    ranks = _ranks_with_low_ace(cards)
    for low in range(-1, 9):
        window = set(range(low, low + 4))
        # Open-ended: both ends can still make a straight (not A-2-3-4 nor J-Q-K-A).
        if window <= ranks and low >= 0 and low + 3 < _ACE:
            return tuple(card for card in cards if rank_of(card) in window)
    return None


def _four_flush(cards: Sequence[int]) -> tuple[int, ...] | None:
    """Exactly four cards of one suit (a flush draw), or None."""
    flush = _flush_cards(cards)
    return flush if flush is not None and len(flush) == 4 else None


def _flush_cards(cards: Sequence[int]) -> tuple[int, ...] | None:
    """The cards of a suit held four or five times (a flush draw or a made flush), or None."""
    suit, count = Counter(suit_of(card) for card in cards).most_common(1)[0]
    if count >= 4:
        return tuple(card for card in cards if suit_of(card) == suit)
    return None


def holdem_should_call(hole: Sequence[int], flop: Sequence[int]) -> bool:
    five = tuple(hole) + tuple(flop)
    counts = Counter(rank_of(card) for card in five)
    if any(counts[rank_of(card)] >= 2 for card in hole):
        return True
    # A made flush is "better than a pair" and four to a flush is a draw: both call with a hole card in it.
    flush = _flush_cards(five)
    if flush is not None and set(flush) & set(hole):
        return True
    draw = _open_ended_draw(five)
    if draw is not None and set(draw) & set(hole):
        return True
    return max(rank_of(card) for card in hole) >= _NINE


def russian_cards_to_exchange(hand: RussianHand) -> tuple[int, ...] | None:
    """The cards to exchange on the five dealt cards, or None to play or fold them as they are."""
    kind = hand.main.kind
    if kind >= RussianCombination.TWO_PAIR or hand.second is not None:
        return None
    if kind == RussianCombination.ONE_PAIR:
        if rank_of(hand.main.cards[0]) >= _NINE:
            return None
        keep: tuple[int, ...] | None = hand.main.cards
    elif kind == RussianCombination.ACE_KING:
        keep = hand.main.cards
    else:
        keep = _four_flush(hand.cards) or _open_ended_draw(hand.cards)
        if keep is None:
            highest = max(hand.cards, key=rank_of)
            keep = (highest,) if rank_of(highest) >= _KING else None
    if keep is None:
        return None
    return tuple(card for card in hand.cards if card not in keep)


def russian_should_play(hand: RussianHand) -> bool:
    return hand.main.kind >= RussianCombination.ACE_KING


def russian_should_buy_game(hand: RussianHand) -> bool:
    return hand.main.kind >= RussianCombination.THREE_OF_A_KIND
