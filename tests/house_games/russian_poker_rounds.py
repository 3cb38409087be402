"""Builders for Russian Poker worked examples: one stacked deck per scenario, boxes in dealing order."""

from __future__ import annotations

from collections.abc import Sequence

from house_games.russian_poker import RussianPokerRound
from house_games.settings import RussianPokerSettings
from house_games.wagers import BoxWager

from .house_games_decks import stacked_deck

# Dealer hands used across the examples.
DEALER_ACE_KING = "Ac Kc 4d 3h 2s"  # the least game
DEALER_NO_GAME = "Qh Jd 7c 5s 2h"  # queen high: no game; the queen is the card a bought game replaces


def russian_round(
    hands: Sequence[str],
    dealer: str,
    then: str = "",
    *,
    wagers: Sequence[BoxWager] | None = None,
    settings: RussianPokerSettings | None = None,
    jackpot: int = 0,
) -> RussianPokerRound:
    """One box per hand (boxes 1, 2, ... of players p1, p2, ... with ante 10 unless ``wagers``)."""
    deck = stacked_deck(*hands, dealer, then)
    if wagers is None:
        wagers = [BoxWager(index + 1, f"p{index + 1}", 10) for index in range(len(hands))]
    return RussianPokerRound(deck, wagers, settings, jackpot=jackpot)
