"""Display names: what other players see of a player (never the player id). Pure: no I/O, no clock.

A name is normalised (NFKC, runs of spaces made one, trimmed) and then valid when it has 2 to 24
characters, only letters of any script, digits, spaces and `.`, `_`, `-`, at least one letter, and is
not reserved (the house's and the services' names, and `Player <digits>`, the generated default's
shape, so nobody can pose as a fresh default). A `:` is never allowed, so no name is a player id
(`tg:123`). Names are unique by `name_key` (the casefolded name), so `Ann` and `ANN` are one name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Protocol

from service_runtime.errors import InvalidArgument

MIN_LENGTH = 2
MAX_LENGTH = 24
PUNCTUATION = frozenset(" ._-")
RESERVED = frozenset(
    {
        "dealer",
        "house",
        "admin",
        "administrator",
        "support",
        "system",
        "moderator",
        "operator",
        "casino",
        # The services' names.
        "lobby",
        "table",
        "cashier",
        "fairness",
        "history",
        "gateway",
        "payments",
    }
)
GENERATED_PREFIX = "Player"
# The generated default's shape (on the casefolded key): only the generator makes such a name.
_GENERATED = re.compile(r"player \d+")
# What the table shows of a seat instead of its player's id (services/table/cash/views.seat_handle).
_HANDLE = re.compile(r"p-[0-9a-f]{12}")
_FIELD = {"field": "display_name"}
# Random numbers tried after a taken name: digits of the number, tries with that many digits.
_SUFFIX_DIGITS = (2, 3, 4, 5, 6)
_GENERATED_DIGITS = (4, 5, 6)
_TRIES_PER_LENGTH = 3


class Random(Protocol):
    def randrange(self, start: int, stop: int) -> int: ...


def _invalid(message: str) -> InvalidArgument:
    return InvalidArgument("DISPLAY_NAME_INVALID", message, _FIELD)


def _is_control(char: str) -> bool:
    # Cc (controls, tabs and newlines too), Cf (invisible format marks), Cs, Co, Cn.
    return unicodedata.category(char).startswith("C")


def _allowed(char: str) -> bool:
    return char in PUNCTUATION or unicodedata.category(char)[0] in "LN"


def _is_letter(char: str) -> bool:
    return unicodedata.category(char).startswith("L")


def _collapse(text: str) -> str:
    """Runs of whitespace made one space, trimmed."""
    return " ".join(text.split())


def name_key(name: str) -> str:
    """The uniqueness key of a name: its normalised form, casefolded."""
    folded = _collapse(unicodedata.normalize("NFKC", name)).casefold()
    return unicodedata.normalize("NFKC", folded)


def _check(name: str, *, generated: bool) -> None:
    """Raise DISPLAY_NAME_INVALID unless `name` (already normalised) is a valid name."""
    if not MIN_LENGTH <= len(name) <= MAX_LENGTH:
        raise _invalid(f"a display name has {MIN_LENGTH} to {MAX_LENGTH} characters")
    if ":" in name:
        raise _invalid("a display name cannot contain ':' (it would read as a player id)")
    if not all(_allowed(c) for c in name):
        raise _invalid("a display name may hold only letters, digits, spaces and '.', '_', '-'")
    if not any(_is_letter(c) for c in name):
        raise _invalid("a display name needs at least one letter")
    key = name_key(name)
    if _HANDLE.fullmatch(key):
        raise _invalid("a display name cannot have the shape of a seat's handle ('p-' and 12 hex digits)")
    if key in RESERVED:
        raise _invalid(f"the display name '{name}' is reserved")
    if not generated and _GENERATED.fullmatch(key):
        raise _invalid("a display name of the form 'Player <number>' is reserved for generated names")


def normalise(name: str) -> str:
    """The name as stored and shown: NFKC, runs of spaces made one, trimmed; DISPLAY_NAME_INVALID
    (naming the rule broken) unless it is a name a player may choose."""
    text = unicodedata.normalize("NFKC", name)
    if any(_is_control(c) for c in text):
        raise _invalid("a display name cannot contain control or invisible characters")
    text = _collapse(text)
    _check(text, generated=False)
    return text


def is_valid(name: str, *, generated: bool = False) -> bool:
    """Whether `name` is a normalised, valid name (`generated`: `Player <number>` allowed too)."""
    if unicodedata.normalize("NFKC", name) != name or _collapse(name) != name:
        return False
    if any(_is_control(c) for c in name):
        return False
    try:
        _check(name, generated=generated)
    except InvalidArgument:
        return False
    return True


def _cut(text: str, length: int) -> str:
    return text[:length].rstrip()


def suggestion_from(suggested: str, player_id: str) -> str | None:
    """A name from a sign-in's suggestion (Telegram's first name), cleaned leniently: characters a
    name may not hold dropped, spaces collapsed, cut to 24; None when nothing valid is left. With no
    suggestion, a player id that is not a Telegram id (`tg:`) is one (development and bot ids such
    as `alice` or `bot-1`); a Telegram id never is."""
    if not suggested:
        if player_id.startswith("tg:"):
            return None
        suggested = player_id
    text = unicodedata.normalize("NFKC", suggested)
    text = "".join(c if _allowed(c) else (" " if c.isspace() else "") for c in text)
    text = _cut(_collapse(text), MAX_LENGTH)
    telegram_user = player_id.removeprefix("tg:") if player_id.startswith("tg:") else ""
    if telegram_user and telegram_user in text.replace(" ", ""):
        return None  # a name that spells the Telegram account would give the id away
    return text if is_valid(text) else None


def candidates(base: str | None, rng: Random) -> Iterator[str]:
    """The names to try, in order, for a new profile: `base`, then `base` and a random number (two
    digits, then three, four ...; `base` cut so the whole stays within 24 characters); with no base,
    `Player <4 to 6 random digits>`. Every name yielded is valid (the generated shape included)."""
    if base:
        yield from _valid([base])
        for digits in _SUFFIX_DIGITS:
            stem = _cut(base, MAX_LENGTH - 1 - digits)
            if stem:
                yield from _valid(f"{stem} {_number(rng, digits)}" for _ in range(_TRIES_PER_LENGTH))
        return
    for digits in _GENERATED_DIGITS:
        yield from _valid(f"{GENERATED_PREFIX} {_number(rng, digits)}" for _ in range(_TRIES_PER_LENGTH))


def _number(rng: Random, digits: int) -> int:
    return rng.randrange(10 ** (digits - 1), 10**digits)


def _valid(names: Iterable[str]) -> Iterator[str]:
    return (name for name in names if is_valid(name, generated=True))
