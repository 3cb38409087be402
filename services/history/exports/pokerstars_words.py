"""PokerStars' own words for a hand and for times, so trackers that read its files read ours.

Hand names as PokerStars writes them in `shows [..] (...)` and in the summary's `with ...`: "high card
Ace", "a pair of Eights", "two pair, Aces and Kings", "three of a kind, Eights", "a straight, Five to
Nine", "a flush, Ace high", "a full house, Eights full of Kings", "four of a kind, Eights", "a straight
flush, Five to Nine", "a Royal Flush". Times: PokerStars writes every hand's time in Eastern Time
(`[2026/11/01 7:00:00 ET]` after the local time); trackers read that one.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from poker_engine.cards import RANK_NAMES, RANK_PLURALS
from poker_engine.evaluator import HandCategory, category_of

EASTERN = ZoneInfo("America/New_York")
_WHEEL_HIGH = 3  # A-2-3-4-5: the five is the high card, the ace the low one
_ACE = 12


def _ranks(strength: int) -> list[int]:
    return [(strength >> shift) & 15 for shift in (16, 12, 8, 4, 0)]


def _straight(high: int) -> str:
    low = _ACE if high == _WHEEL_HIGH else high - 4
    return f"{RANK_NAMES[low]} to {RANK_NAMES[high]}"


def hand_name(strength: int) -> str:
    """PokerStars' name of the best five cards of `strength` (the engine's evaluator value)."""
    category = category_of(strength)
    top, second = _ranks(strength)[:2]
    names = {
        HandCategory.ROYAL_FLUSH: "a Royal Flush",
        HandCategory.STRAIGHT_FLUSH: f"a straight flush, {_straight(top)}",
        HandCategory.FOUR_OF_A_KIND: f"four of a kind, {RANK_PLURALS[top]}",
        HandCategory.FULL_HOUSE: f"a full house, {RANK_PLURALS[top]} full of {RANK_PLURALS[second]}",
        HandCategory.FLUSH: f"a flush, {RANK_NAMES[top]} high",
        HandCategory.STRAIGHT: f"a straight, {_straight(top)}",
        HandCategory.THREE_OF_A_KIND: f"three of a kind, {RANK_PLURALS[top]}",
        HandCategory.TWO_PAIR: f"two pair, {RANK_PLURALS[top]} and {RANK_PLURALS[second]}",
        HandCategory.ONE_PAIR: f"a pair of {RANK_PLURALS[top]}",
    }
    return names.get(category, f"high card {RANK_NAMES[top]}")


def stars_time(moment: datetime, zone: str) -> str:
    """`2026/11/01 7:00:00 <zone>` (PokerStars does not pad the hour)."""
    return f"{moment:%Y/%m/%d} {moment.hour}:{moment:%M:%S} {zone}"


def header_time(utc: datetime) -> str:
    """The header's time: UTC, then the Eastern Time trackers read, `UTC [... ET]`."""
    return f"{stars_time(utc, 'UTC')} [{stars_time(utc.astimezone(EASTERN), 'ET')}]"
