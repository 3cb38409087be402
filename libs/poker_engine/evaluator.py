"""Poker hand evaluator: best five of 5, 6 or 7 cards as one comparable integer, plus words for people.

Design (table lookup, built once at import):

* Each card has a key: a rank key in the low bits and a count for its suit above them. The sum of a
  hand's keys holds, in its low bits, a number unique to the hand's rank multiset and, above them, the
  count of each suit. Seven-card rank sums index a flat int32 array, and a bias in the first card's key
  makes any flush show as one bit; five- and six-card hands use base-5 rank keys and a dict.
* With at most seven cards a flush excludes quads and full houses (five suited cards leave only two
  others), so a hand with five or more cards of one suit is exactly a flush or straight flush, looked
  up in a 8192-entry table indexed by that suit's rank bitmask. Every other hand is looked up by its
  rank multiset (49,205 seven-rank multisets; 24,570 of five or six).

A strength is ``category << 20`` followed by up to five 4-bit tie-break ranks, so higher wins, equal
splits, and strengths of 5-, 6- and 7-card hands compare with each other.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum

from poker_engine.cards import RANK_NAMES, RANK_PLURALS, check_card
from poker_engine.errors import InvalidCardError, InvalidHandSizeError


class HandCategory(IntEnum):
    HIGH_CARD = 0
    ONE_PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9


_CATEGORY_SHIFT = 20
_WHEEL_HIGH = 3  # A-2-3-4-5 is a straight with the five (rank 3) as its high card.
_ACE = 12


def _pack(category: int, ranks: Sequence[int]) -> int:
    value = category
    for index in range(5):
        value = (value << 4) | (ranks[index] if index < len(ranks) else 0)
    return value


def _straight_high(present_mask: int) -> int:
    """Highest straight in a 13-bit rank mask, or -1. The ace also plays low (A-2-3-4-5)."""
    for high in range(_ACE, _WHEEL_HIGH, -1):
        window = 0b11111 << (high - 4)
        if present_mask & window == window:
            return high
    wheel = 0b1111 | (1 << _ACE)
    return _WHEEL_HIGH if present_mask & wheel == wheel else -1


_STRAIGHT_HIGH: tuple[int, ...] = tuple(_straight_high(mask) for mask in range(1 << 13))


def _best_without_flush(counts: Sequence[int]) -> int:
    """Strength of the best five cards from rank counts, assuming no flush is possible.

    Called once per rank multiset while the tables are built, so it is written for speed.
    """
    by_count: tuple[list[int], list[int], list[int], list[int], list[int]] = ([], [], [], [], [])
    mask = 0
    for rank in range(12, -1, -1):
        count = counts[rank]
        if count:
            by_count[count].append(rank)
            mask |= 1 << rank
    _, singles, pairs, trips, quads = by_count
    if quads:
        quad = quads[0]
        kicker = (mask & ~(1 << quad)).bit_length() - 1
        return HandCategory.FOUR_OF_A_KIND << 20 | quad << 16 | kicker << 12
    if trips and (len(trips) > 1 or pairs):
        pair = max(trips[1:2] + pairs[:1])
        return HandCategory.FULL_HOUSE << 20 | trips[0] << 16 | pair << 12
    high = _STRAIGHT_HIGH[mask]
    if high >= 0:
        return HandCategory.STRAIGHT << 20 | high << 16
    if trips:
        return HandCategory.THREE_OF_A_KIND << 20 | trips[0] << 16 | singles[0] << 12 | singles[1] << 8
    if len(pairs) >= 2:
        first, second = pairs[0], pairs[1]
        kicker = (mask & ~(1 << first | 1 << second)).bit_length() - 1
        return HandCategory.TWO_PAIR << 20 | first << 16 | second << 12 | kicker << 8
    if pairs:
        return (
            HandCategory.ONE_PAIR << 20
            | pairs[0] << 16
            | singles[0] << 12
            | singles[1] << 8
            | singles[2] << 4
        )
    return _pack(HandCategory.HIGH_CARD, singles)


def _best_flush(mask: int) -> int:
    high = _STRAIGHT_HIGH[mask]
    if high == _ACE:
        return _pack(HandCategory.ROYAL_FLUSH, [high])
    if high >= 0:
        return _pack(HandCategory.STRAIGHT_FLUSH, [high])
    return _pack(HandCategory.FLUSH, [rank for rank in range(12, -1, -1) if mask >> rank & 1][:5])


# Rank keys whose sums are distinct for every multiset of seven ranks (each rank at most four times), so
# the sum indexes a flat array directly (max sum 7,825,759: a 31 MB int32 array, faster than a dict
# because a random lookup touches one cache line instead of three or four). Published with SKPokerEval.
_SEVEN_RANK_KEYS = (0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181)
_SEVEN_RANK_BITS = 23
_SEVEN_RANK_MASK = (1 << _SEVEN_RANK_BITS) - 1


def _rank_multisets(size: int, rank_keys: Sequence[int]) -> Iterator[tuple[list[int], int]]:
    """Every list of 13 rank counts (each 0..4) summing to ``size``, with its key sum(count * key)."""
    counts = [0] * 13

    def fill(rank: int, left: int, key: int) -> Iterator[tuple[list[int], int]]:
        if rank == 12:
            if left <= 4:
                counts[12] = left
                yield counts, key + left * rank_keys[12]
                counts[12] = 0
            return
        rank_key = rank_keys[rank]
        for count in range(min(4, left) + 1):
            counts[rank] = count
            yield from fill(rank + 1, left - count, key + count * rank_key)
        counts[rank] = 0

    return fill(0, size, 0)


def _build_seven_table() -> array[int]:
    seven = array("i", bytes(4 * (_SEVEN_RANK_MASK + 1)))
    for counts, key in _rank_multisets(7, _SEVEN_RANK_KEYS):
        seven[key] = _best_without_flush(counts)
    return seven


_FEWER_TABLE: dict[int, int] = {}


def _fewer_table() -> dict[int, int]:
    """Five- and six-card rank table, built on first use: the engine itself only evaluates seven."""
    if not _FEWER_TABLE:
        base5 = [5**rank for rank in range(13)]
        for size in (5, 6):
            for counts, key in _rank_multisets(size, base5):
                _FEWER_TABLE[key] = _best_without_flush(counts)
    return _FEWER_TABLE


# Seven-card keys: the rank key in the low 23 bits, then one 4-bit field per suit counting its cards.
# The first card's key also carries 3 in every suit field, so a field reaches 8 (its top bit) exactly
# when the suit has five or more cards: one AND detects any flush.
_SUIT_FIELD_BITS = 4
_SEVEN_CARD_KEY: tuple[int, ...] = tuple(
    _SEVEN_RANK_KEYS[card >> 2] + (1 << (_SEVEN_RANK_BITS + _SUIT_FIELD_BITS * (card & 3)))
    for card in range(52)
)
_FLUSH_BIAS = sum(3 << (_SEVEN_RANK_BITS + _SUIT_FIELD_BITS * suit) for suit in range(4))
_FIRST_CARD_KEY: tuple[int, ...] = tuple(key + _FLUSH_BIAS for key in _SEVEN_CARD_KEY)
_FLUSH_BITS = sum(8 << (_SEVEN_RANK_BITS + _SUIT_FIELD_BITS * suit) for suit in range(4))
_FIRST_FLUSH_BIT_LENGTH = _SEVEN_RANK_BITS + 4  # bit_length of the flag of suit 0 (clubs)
# Five- and six-card keys: base-5 rank digits, then the count of each suit in base 8 above bit 32.
_CARD_KEY5: tuple[int, ...] = tuple(5 ** (card >> 2) + ((1 << (3 * (card & 3))) << 32) for card in range(52))
_RANK_BIT: tuple[int, ...] = tuple(1 << (card >> 2) for card in range(52))
_RANK_TABLE7 = _build_seven_table()
_FLUSH_TABLE: tuple[int, ...] = tuple(_best_flush(m) if m.bit_count() >= 5 else 0 for m in range(1 << 13))
# Suit whose count is five or more, indexed by the suit-count part of a five- or six-card key; -1 if none.
_FLUSH_SUIT: tuple[int, ...] = tuple(
    next((suit for suit in range(4) if (part >> (3 * suit)) & 7 >= 5), -1) for part in range(1 << 12)
)


def strength7(c0: int, c1: int, c2: int, c3: int, c4: int, c5: int, c6: int) -> int:
    """Trusted fast path: the strength of seven distinct valid cards, equal to ``evaluate(...).strength``.

    No validation (use ``evaluate`` for untrusted input); positional ints because that is the fastest
    call shape in CPython.
    """
    key = (
        _FIRST_CARD_KEY[c0] + _SEVEN_CARD_KEY[c1] + _SEVEN_CARD_KEY[c2] + _SEVEN_CARD_KEY[c3]
        + _SEVEN_CARD_KEY[c4] + _SEVEN_CARD_KEY[c5] + _SEVEN_CARD_KEY[c6]
    )  # fmt: skip
    flush = key & _FLUSH_BITS
    if not flush:
        return _RANK_TABLE7[key & _SEVEN_RANK_MASK]
    # Seven cards hold at most one suit of five or more.
    suit = (flush.bit_length() - _FIRST_FLUSH_BIT_LENGTH) // _SUIT_FIELD_BITS
    mask = 0
    for card in (c0, c1, c2, c3, c4, c5, c6):
        if card & 3 == suit:
            mask |= _RANK_BIT[card]
    return _FLUSH_TABLE[mask]


def strength_of(cards: Sequence[int]) -> int:
    """Trusted fast path for 5, 6 or 7 distinct valid cards given as a sequence (no validation)."""
    if len(cards) == 7:
        return strength7(*cards)
    key = 0
    for card in cards:
        key += _CARD_KEY5[card]
    suit = _FLUSH_SUIT[key >> 32]
    if suit < 0:
        return _fewer_table()[key & 0xFFFFFFFF]
    mask = 0
    for card in cards:
        if card & 3 == suit:
            mask |= _RANK_BIT[card]
    return _FLUSH_TABLE[mask]


def category_of(strength: int) -> HandCategory:
    return HandCategory(strength >> _CATEGORY_SHIFT)


def _tiebreak_ranks(strength: int) -> list[int]:
    return [(strength >> shift) & 15 for shift in (16, 12, 8, 4, 0)]


def _straight_ranks(high: int) -> list[int]:
    if high == _WHEEL_HIGH:
        return [3, 2, 1, 0, _ACE]
    return [high - offset for offset in range(5)]


def _five_ranks(category: HandCategory, tie: list[int]) -> list[int]:
    """The ranks of the best five cards, most important first."""
    if category in (HandCategory.STRAIGHT, HandCategory.STRAIGHT_FLUSH, HandCategory.ROYAL_FLUSH):
        return _straight_ranks(tie[0])
    if category == HandCategory.FOUR_OF_A_KIND:
        return [tie[0]] * 4 + [tie[1]]
    if category == HandCategory.FULL_HOUSE:
        return [tie[0]] * 3 + [tie[1]] * 2
    if category == HandCategory.THREE_OF_A_KIND:
        return [tie[0]] * 3 + tie[1:3]
    if category == HandCategory.TWO_PAIR:
        return [tie[0], tie[0], tie[1], tie[1], tie[2]]
    if category == HandCategory.ONE_PAIR:
        return [tie[0], tie[0], *tie[1:4]]
    return tie


@dataclass(frozen=True, slots=True)
class HandValue:
    """The value of a hand: compare ``strength`` (higher wins, equal splits)."""

    strength: int
    category: HandCategory
    best_five: tuple[int, ...]

    def describe(self) -> str:
        return describe_strength(self.strength)


def describe_strength(strength: int) -> str:
    """Words for people: "Two pair, Aces and Kings", "Straight, Five high", "Royal flush"."""
    category = category_of(strength)
    tie = _tiebreak_ranks(strength)
    if category == HandCategory.ROYAL_FLUSH:
        return "Royal flush"
    if category == HandCategory.STRAIGHT_FLUSH:
        return f"Straight flush, {RANK_NAMES[tie[0]]} high"
    if category == HandCategory.FOUR_OF_A_KIND:
        return f"Four of a kind, {RANK_PLURALS[tie[0]]}"
    if category == HandCategory.FULL_HOUSE:
        return f"Full house, {RANK_PLURALS[tie[0]]} full of {RANK_PLURALS[tie[1]]}"
    if category == HandCategory.FLUSH:
        return f"Flush, {RANK_NAMES[tie[0]]} high"
    if category == HandCategory.STRAIGHT:
        return f"Straight, {RANK_NAMES[tie[0]]} high"
    if category == HandCategory.THREE_OF_A_KIND:
        return f"Three of a kind, {RANK_PLURALS[tie[0]]}"
    if category == HandCategory.TWO_PAIR:
        return f"Two pair, {RANK_PLURALS[tie[0]]} and {RANK_PLURALS[tie[1]]}"
    if category == HandCategory.ONE_PAIR:
        return f"One pair, {RANK_PLURALS[tie[0]]}"
    return f"High card, {RANK_NAMES[tie[0]]}"


_CATEGORIES: tuple[HandCategory, ...] = tuple(HandCategory)
_SUITED_CATEGORIES = frozenset((HandCategory.FLUSH, HandCategory.STRAIGHT_FLUSH, HandCategory.ROYAL_FLUSH))
_FIVE_RANKS: dict[int, tuple[int, ...]] = {}


def evaluate(cards: Sequence[int]) -> HandValue:
    """Validate 5, 6 or 7 distinct cards and return their best five as a HandValue."""
    hand = tuple(cards)
    for card in hand:
        check_card(card)
    if not 5 <= len(hand) <= 7:
        raise InvalidHandSizeError(f"need 5, 6 or 7 cards, got {len(hand)}")
    if len(set(hand)) != len(hand):
        raise InvalidCardError("duplicate card in hand")
    strength = strength_of(hand)
    category = _CATEGORIES[strength >> _CATEGORY_SHIFT]
    ranks = _FIVE_RANKS.get(strength)
    if ranks is None:
        ranks = _FIVE_RANKS[strength] = tuple(_five_ranks(category, _tiebreak_ranks(strength)))
    pool = hand
    if category in _SUITED_CATEGORIES:
        suit = _FLUSH_SUIT[sum(_CARD_KEY5[card] for card in hand) >> 32]
        pool = tuple(card for card in hand if card & 3 == suit)
    # Cards of each rank, highest suit first, so the choice among equal ranks is deterministic.
    by_rank: dict[int, list[int]] = {}
    for card in sorted(pool, reverse=True):
        by_rank.setdefault(card >> 2, []).append(card)
    best = tuple(by_rank[rank].pop(0) for rank in ranks)
    return HandValue(strength=strength, category=category, best_five=best)
