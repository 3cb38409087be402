"""Checks every adapter applies to caller-supplied text before it reaches storage, logs or derived ids.

Ids and other short fields are printable text of a bounded length: no NUL or other control
characters (they break logs, terminals and some databases), nothing longer than the column or
derived id that holds it. A failed check is INVALID_ARGUMENT with a reason and the field's name.
"""

from __future__ import annotations

from service_runtime.errors import InvalidArgument

# The default bound for ids (request ids, table and hand ids, player ids) across all contracts.
MAX_ID_LENGTH = 128


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
