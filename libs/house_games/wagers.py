"""Box wagers placed before the deal, shared by both games."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from house_games.errors import InvalidWagerError


@dataclass(frozen=True, slots=True)
class BoxWager:
    """What one box stakes before the deal.

    ``box`` is the box's position at the table (1 = first in dealing order, the dealer's left); boxes
    are dealt in ascending position. ``dark`` and ``bonus`` exist only in Russian Poker: a dark box
    places its bet (two antes) before the deal and plays blind; only a dark box may bet the bonus unless
    the table setting `bonus_on_light_boxes` allows light boxes too (decision 12).
    """

    box: int
    player: str
    ante: int
    dark: bool = False
    bonus: int = 0


def check_common_wagers(wagers: Sequence[BoxWager], max_boxes: int) -> tuple[BoxWager, ...]:
    """Checks both games share; returns the wagers in dealing order (ascending box position)."""
    if not wagers:
        raise InvalidWagerError("a round needs at least one box", reason="NO_BOXES")
    if len(wagers) > max_boxes:
        raise InvalidWagerError(f"at most {max_boxes} boxes", reason="TOO_MANY_BOXES")
    positions = [wager.box for wager in wagers]
    if len(set(positions)) != len(positions):
        raise InvalidWagerError("a box position appears twice", reason="DUPLICATE_BOX")
    for wager in wagers:
        if type(wager.box) is not int or wager.box < 1:
            raise InvalidWagerError(f"bad box position: {wager.box!r}", reason="BAD_BOX")
        if type(wager.ante) is not int or wager.ante <= 0:
            raise InvalidWagerError(f"ante must be a positive integer: {wager.ante!r}", "NON_POSITIVE_STAKE")
        if type(wager.bonus) is not int or wager.bonus < 0:
            raise InvalidWagerError(f"bad bonus: {wager.bonus!r}", "NON_POSITIVE_STAKE")
    return tuple(sorted(wagers, key=lambda wager: wager.box))
