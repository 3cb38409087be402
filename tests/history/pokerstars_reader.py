"""Run by tests/history/export_readers.py in its own interpreter: the `poker` package (pokerregion/poker
on PyPI) reads PokerStars text from stdin and prints what it read as JSON.

The package's import name is `poker`, the same as this project's generated code, so it cannot live in
the project's environment: `make test` installs it into `.tools/pokerstars-reader` and this script runs
with only that folder and the standard library on its path (`python -S`).
"""

import json
import sys
import warnings

warnings.simplefilter("ignore")

from poker.room.pokerstars import PokerStarsHandHistory  # noqa: E402

SUITS = {"♠": "s", "♥": "h", "♦": "d", "♣": "c"}


def card(value: object) -> str:
    text = str(value).strip("Card()'")
    return text[:-1] + SUITS.get(text[-1], text[-1])


hands = []
for chunk in sys.stdin.read().split("\n\n\n"):
    if not chunk.strip():
        continue
    hand = PokerStarsHandHistory(chunk.strip() + "\n")
    hand.parse()
    board = [*(hand.flop.cards if hand.flop else ()), hand.turn, hand.river]
    hands.append(
        {
            "ident": hand.ident,
            "date": hand.date.isoformat(),
            "players": {p.name: int(p.stack) for p in hand.players if p.stack},
            "button": hand.button.name,
            "hero": hand.hero.name if hand.hero else None,
            "total_pot": int(hand.total_pot),
            "board": [card(c) for c in board if c],
            "winners": sorted(hand.winners),
        }
    )
json.dump(hands, sys.stdout)
