"""The words a person reads for what the services send as codes or in English: stable codes
(balance-change reasons, house-round phases, items, outcomes and decisions, refusal reasons), the
engine's names of hands, a house round's notes and a refusal, in the chosen language
(`clients.play.texts`), so no screen shows an enum name such as `HOUSE_GAME_RESULT`.

A code the catalogue does not have still reads as words, in English (`DEALER_WHATEVER` as
`dealer whatever`).
"""

from __future__ import annotations

import re

from clients.play.catalogue.hands import RANK_NAMES, RANK_PLURALS
from clients.play.texts import in_own_words, known, t

_TIMEOUT_NOTE = re.compile(r"^TIMEOUT box (\d+) ([A-Z_]+)$")
_RESUMED_NOTE = "RESUMED "
_RESUMED_AFTER_RESTART = "RESUMED after a shard restart or takeover"

# Codes with a figure or a combination in them: (pattern, catalogue key, parameter).
_CODE_PATTERNS = (
    (re.compile(r"^JACKPOT_CONTRIBUTION_(\d+)_PERCENT$"), "code_pattern.jackpot_contribution", "percent"),
    (re.compile(r"^JACKPOT_(\d+)_PERCENT$"), "code_pattern.jackpot", "percent"),
    (re.compile(r"^COMBINATION_([A-Z_]+)$"), "code_pattern.combination", "combination"),
    (re.compile(r"^BONUS_([A-Z_]+)$"), "code_pattern.bonus", "combination"),
)

# The engine's names of hands (poker_engine.evaluator.describe_strength): the pattern, the catalogue
# key, and per rank in it the parameter it fills and the form of the rank it takes there.
_HANDS: tuple[tuple[re.Pattern[str], str, tuple[tuple[str, str], ...]], ...] = (
    (re.compile(r"^Royal flush$"), "hand.royal_flush", ()),
    (re.compile(r"^Straight flush, (\w+) high$"), "hand.straight_flush", (("high", "of_one"),)),
    (re.compile(r"^Four of a kind, (\w+)$"), "hand.four_of_a_kind", (("rank", "of_many"),)),
    (
        re.compile(r"^Full house, (\w+) full of (\w+)$"),
        "hand.full_house",
        (("three", "many"), ("pair", "on_many")),
    ),
    (re.compile(r"^Flush, (\w+) high$"), "hand.flush", (("high", "of_one"),)),
    (re.compile(r"^Straight, (\w+) high$"), "hand.straight", (("high", "of_one"),)),
    (re.compile(r"^Three of a kind, (\w+)$"), "hand.three_of_a_kind", (("rank", "of_many"),)),
    (re.compile(r"^Two pair, (\w+) and (\w+)$"), "hand.two_pair", (("high", "many"), ("low", "many"))),
    (re.compile(r"^One pair, (\w+)$"), "hand.one_pair", (("rank", "of_many"),)),
    (re.compile(r"^High card, (\w+)$"), "hand.high_card", (("rank", "one"),)),
)
# A rank as the engine names it, one or several, to the rank's own name (`Kings` to `King`).
_RANK_OF = {**{name: name for name in RANK_NAMES}, **dict(zip(RANK_PLURALS, RANK_NAMES, strict=True))}


def has_words(code: str) -> bool:
    return bool(code) and known(f"code.{code.upper()}")


def words(code: str) -> str:
    """The words for a code (any case); a code not in the catalogue in lower case, spaced."""
    if not code:
        return ""
    upper = code.upper()
    if has_words(upper):
        return t(f"code.{upper}")
    for pattern, key, parameter in _CODE_PATTERNS:
        match = pattern.match(upper)
        if match is None:
            continue
        if parameter == "percent":
            return t(key, percent=match.group(1))
        if known(f"combination.{match.group(1)}"):
            return t(key, combination=t(f"combination.{match.group(1)}"))
    return code.lower().replace("_", " ")


def note_text(note: str) -> str:
    """A house round's note in words: `TIMEOUT box 1 FOLD` is `box 1: time ran out - fold (the rules'
    default)`; `RESUMED after ...` is `resumed after ...`."""
    timeout = _TIMEOUT_NOTE.match(note)
    if timeout:
        return t("note.timeout", box=timeout.group(1), decision=words(timeout.group(2)))
    if note == _RESUMED_AFTER_RESTART:
        return t("note.resumed_after_restart")
    if note.startswith(_RESUMED_NOTE):
        return t("note.resumed", rest=note.removeprefix(_RESUMED_NOTE))
    return note


def hand_text(description: str) -> str:
    """The engine's name of a hand ("Two pair, Aces and Kings") in the chosen language ("Две пары,
    тузы и короли"); a description it does not recognise as it came."""
    for pattern, key, ranks in _HANDS:
        match = pattern.match(description)
        if match is None:
            continue
        named = [_RANK_OF.get(group) for group in match.groups()]
        if None in named:
            return description
        return t(
            key, **{name: t(f"rank.{rank}.{form}") for (name, form), rank in zip(ranks, named, strict=True)}
        )
    return description


def refusal_text(code: str, reason: str, message: str) -> str:
    """A refused call: in English the gRPC status, the stable reason and the services' message; in
    another language the reason's words (the status's, without one), the codes beside them."""
    explained = in_own_words(message, f"code.{reason or code}")
    return t("error.refusal", code=code, reason=f" {reason}" if reason else "", message=explained)
