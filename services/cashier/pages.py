"""Page tokens of the cashier's newest-first lists (house funding, payouts): `<scope>.<seq>`, where the
scope names the filter the token was issued for, so a token of another filter (or a made-up one) is
PAGE_TOKEN_INVALID rather than a page of the wrong list (found by a tester: `61` listed from the
newest entry, a token of the whole list continued the pending queue)."""

from __future__ import annotations

from service_runtime.errors import InvalidArgument


def page_token(scope: str, seq: int) -> str:
    return f"{scope}.{seq}"


def page_position(token: str, scope: str) -> int | None:
    """The sequence number a token continues before (None: the first page)."""
    if not token:
        return None
    named, _, position = token.partition(".")
    if named != scope or not position.isdigit() or len(position) > 19 or int(position) < 1:
        raise InvalidArgument(
            "PAGE_TOKEN_INVALID", "the page token was not issued for this list", {"field": "page_token"}
        )
    return int(position)
