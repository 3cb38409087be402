"""PokerKit's PokerStars parser, taught the fixed-limit header.

PokerKit 0.7's PokerStarsParser reads only "Hold'em No Limit" hands. PokerStars writes fixed-limit
hands as "Hold'em Limit (small bet/big bet)"; this subclass maps that header to PokerKit's fixed-limit
Texas hold'em ('FT') and passes the small and big bets PokerKit's fixed-limit game needs. Everything
else (seats, stacks, blinds, actions, showdowns, winnings) is PokerKit's own parsing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from pokerkit import notation
from pokerkit.notation import HandHistory, PokerStarsParser

_LIMITS = re.compile(r"Hold'em Limit \((\d+)/(\d+)\)")


class PokerStarsWithFixedLimitParser(PokerStarsParser):
    VARIANT = re.compile(r" (?P<variant>Hold'em (?:No )?Limit) ")
    VARIANTS: ClassVar[dict[str, str]] = {"Hold'em No Limit": "NT", "Hold'em Limit": "FT"}

    def _parse(self, s: str, parse_value: Callable[[str], int]) -> HandHistory:
        limits = _LIMITS.search(s)
        if limits is None:
            return super()._parse(s, parse_value)
        small_bet, big_bet = int(limits.group(1)), int(limits.group(2))

        class FixedLimitHandHistory(HandHistory):
            def __init__(self, **fields: Any) -> None:
                fields.pop("min_bet", None)
                fields.setdefault("small_bet", small_bet)
                fields.setdefault("big_bet", big_bet)
                super().__init__(**fields)

        original = notation.HandHistory
        notation.HandHistory = FixedLimitHandHistory  # type: ignore[misc]
        try:
            return super()._parse(s, parse_value)
        finally:
            notation.HandHistory = original  # type: ignore[misc]


def parse_pokerstars(text: str) -> Iterator[HandHistory]:
    return PokerStarsWithFixedLimitParser()(text, error_status=True)
