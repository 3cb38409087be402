"""The words a person reads for the stable codes the services send (balance-change reasons, house-round
phases, items, outcomes and decisions, refusal reasons), so no screen shows an enum name such as
`HOUSE_GAME_RESULT`.

The client has no language switch yet: this one mapping is English, and a translation (Russian first,
as the operator's rules are written) is one more mapping of the same keys beside it, chosen in `words`.
A code missing here still reads as words (`DEALER_DOES_NOT_QUALIFY` as `dealer does not qualify`).
"""

from __future__ import annotations

import re

ENGLISH: dict[str, str] = {
    # Balance changes (history's statement of the cashier's transfers).
    "PURCHASE": "purchase",
    "WITHDRAWAL": "withdrawal",
    "BUY_IN": "buy-in",
    "CASH_OUT": "cash-out",
    "HAND_RESULT": "hand result",
    "RAKE": "rake",
    "HOUSE_GAME_RESULT": "house game",
    "ADJUSTMENT": "adjustment",
    "UNKNOWN": "other",
    # House rounds: where the round is.
    "DECISIONS": "your decision",
    "NO_GAME_CHOICES": "the dealer has no game: take the ante or buy a game",
    "SETTLING": "settling",
    "COMPLETE": "settled",
    # House boxes: what the box did.
    "WAITING": "waiting",
    "CALLED": "played",
    "FOLDED": "folded",
    "DARK": "dark box",
    # House settlement lines: what a line is for and how it came out.
    "ANTE": "ante",
    "BET": "bet",
    "EXCHANGE_FEE": "exchange fee",
    "SIXTH_CARD_FEE": "sixth card fee",
    "BUY_GAME_FEE": "buy-a-game fee",
    "BONUS": "bonus",
    "JACKPOT": "jackpot",
    "JACKPOT_CONTRIBUTION": "jackpot contribution",
    "INSURANCE": "insurance",
    "SECOND_COMBINATION": "second combination",
    "WON": "won",
    "LOST": "lost",
    "RETURNED": "returned",
    # House decisions as history records them.
    "CALL": "call",
    "PLAY": "play",
    "FOLD": "fold",
    "EXCHANGE": "exchange",
    "BUY_SIXTH_CARD": "buy a sixth card",
    "INSURE": "insure",
    "BUY_GAME": "buy a game",
    "TAKE_ANTE": "take the ante",
    # Why the table did not take a client seed (the log says so).
    "SEED_HASHES_CLOSED": "the table had closed the seed hashes",
    "ENTROPY_CLOSED": "the hand was sealed first",
    "HAND_NOT_FINISHED": "the hand is not revealed yet",
    "HAND_NOT_FOUND": "history has no record of it yet",
}

_TIMEOUT_NOTE = re.compile(r"^TIMEOUT box (\d+) ([A-Z_]+)$")
_RESUMED_NOTE = "RESUMED "


def words(code: str) -> str:
    """The words for a code (any case); a code not in the mapping in lower case, spaced."""
    if not code:
        return ""
    return ENGLISH.get(code.upper(), code.lower().replace("_", " "))


def note_text(note: str) -> str:
    """A house round's note in words: `TIMEOUT box 1 FOLD` is `box 1: time ran out - fold (the rules'
    default)`; `RESUMED after ...` is `resumed after ...`."""
    timeout = _TIMEOUT_NOTE.match(note)
    if timeout:
        return f"box {timeout.group(1)}: time ran out - {words(timeout.group(2))} (the rules' default)"
    if note.startswith(_RESUMED_NOTE):
        return "resumed " + note.removeprefix(_RESUMED_NOTE)
    return note
