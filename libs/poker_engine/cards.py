"""Card encoding shared with the fairness service and house games: an int 0..51 = 4 * rank + suit.

Rank 0..12 is 2, 3, ..., T, J, Q, K, A; suit 0..3 is c, d, h, s. So 0 is ``2c`` and 51 is ``As``.
"""

from __future__ import annotations

from collections.abc import Iterable

from poker_engine.errors import InvalidCardError

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
RANK_NAMES = (
    "Two",
    "Three",
    "Four",
    "Five",
    "Six",
    "Seven",
    "Eight",
    "Nine",
    "Ten",
    "Jack",
    "Queen",
    "King",
    "Ace",
)
RANK_PLURALS = ("Twos", "Threes", "Fours", "Fives", "Sixes", "Sevens", "Eights", "Nines", "Tens", "Jacks",
                "Queens", "Kings", "Aces")  # fmt: skip

FULL_DECK: tuple[int, ...] = tuple(range(52))

_TEXT: tuple[str, ...] = tuple(RANK_CHARS[c >> 2] + SUIT_CHARS[c & 3] for c in FULL_DECK)
_BY_TEXT: dict[str, int] = {text: card for card, text in enumerate(_TEXT)}
# Accept lower-case ranks ("ts") and upper-case suits ("AS") too: people type hand histories by hand.
for _card, _text in enumerate(_TEXT):
    _BY_TEXT[_text[0].lower() + _text[1]] = _card
    _BY_TEXT[_text[0] + _text[1].upper()] = _card
    _BY_TEXT[_text[0].lower() + _text[1].upper()] = _card


def check_card(card: object) -> int:
    """Return ``card`` if it is an int 0..51, else raise InvalidCardError."""
    if type(card) is not int or not 0 <= card < 52:
        raise InvalidCardError(f"not a card: {card!r}")
    return card


def parse_card(text: str) -> int:
    """``"As"`` -> 51. Raises InvalidCardError on anything else."""
    card = _BY_TEXT.get(text.strip()) if isinstance(text, str) else None
    if card is None:
        raise InvalidCardError(f"not a card: {text!r}")
    return card


def parse_cards(text: str) -> tuple[int, ...]:
    """``"As Kd"`` or ``"AsKd"`` -> (51, 45). Duplicates are refused: a deck has each card once."""
    if not isinstance(text, str):
        raise InvalidCardError(f"not card text: {text!r}")
    compact = "".join(text.replace(",", " ").split())
    if len(compact) % 2:
        raise InvalidCardError(f"card text has an odd length: {text!r}")
    cards = tuple(parse_card(compact[i : i + 2]) for i in range(0, len(compact), 2))
    if len(set(cards)) != len(cards):
        raise InvalidCardError(f"duplicate card in {text!r}")
    return cards


def card_text(card: int) -> str:
    """51 -> ``"As"``."""
    return _TEXT[check_card(card)]


def cards_text(cards: Iterable[int]) -> str:
    """(51, 45) -> ``"As Kd"``."""
    return " ".join(card_text(card) for card in cards)


def rank_of(card: int) -> int:
    """0 (two) .. 12 (ace)."""
    return check_card(card) >> 2


def suit_of(card: int) -> int:
    """0 (clubs), 1 (diamonds), 2 (hearts), 3 (spades)."""
    return check_card(card) & 3


def make_card(rank: int, suit: int) -> int:
    """The inverse of rank_of / suit_of."""
    if not (0 <= rank < 13 and 0 <= suit < 4):
        raise InvalidCardError(f"no card with rank {rank} and suit {suit}")
    return 4 * rank + suit
