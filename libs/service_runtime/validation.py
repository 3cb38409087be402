"""Checks every adapter applies to caller-supplied text before it reaches storage, logs or derived ids.

Ids and other short fields are printable text of a bounded length: no NUL or other control
characters (they break logs, terminals and some databases), nothing longer than the column or
derived id that holds it. A failed check is INVALID_ARGUMENT with a reason and the field's name.
"""

from __future__ import annotations

import re

from service_runtime.errors import InvalidArgument

# The default bound for ids (request ids, table and hand ids, player ids) across all contracts.
MAX_ID_LENGTH = 128

# Player ids (the subject of a player's token, the owner of a wallet): 1 to 128 of
# `A-Z a-z 0-9 . _ - : @`, starting with a letter or digit. System accounts belong to owners under
# `system/`, and a player id cannot contain `/`, so no player id can ever name one.
MAX_PLAYER_ID_LENGTH = 128
PLAYER_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")
# Names that once were (or could be mistaken for) system owners: refused as player ids in any case.
RESERVED_PLAYER_IDS = frozenset({"house", "system", "gram", "mpx", "telegram_stars", "house_funding"})


def is_player_id(value: str) -> bool:
    """Whether some player can have this id (the cashier opens wallets under no other)."""
    return PLAYER_ID_PATTERN.fullmatch(value) is not None and value.lower() not in RESERVED_PLAYER_IDS


def require_player_id(value: str, field: str = "player_id") -> str:
    """`value` if it is an id a player can have: FIELD_REQUIRED when empty, FIELD_INVALID otherwise."""
    if not value:
        raise InvalidArgument("FIELD_REQUIRED", f"{field} is required", {"field": field})
    if not is_player_id(value):
        raise InvalidArgument(
            "FIELD_INVALID",
            f"{field} must be 1 to {MAX_PLAYER_ID_LENGTH} letters, digits or . _ - : @, not a reserved name",
            {"field": field},
        )
    return value


def require_text(value: str, field: str, *, limit: int = MAX_ID_LENGTH, required: bool = True) -> str:
    """`value` if it is 1..limit printable characters (or empty where not required)."""
    if not value:
        if required:
            raise InvalidArgument("FIELD_REQUIRED", f"{field} is required", {"field": field})
        return value
    if len(value) > limit:
        raise InvalidArgument("FIELD_INVALID", f"{field} is at most {limit} characters", {"field": field})
    if not value.isprintable():
        raise InvalidArgument(
            "FIELD_INVALID", f"{field} must not contain control characters", {"field": field}
        )
    return value
