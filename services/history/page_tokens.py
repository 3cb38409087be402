"""Opaque, tamper-evident page tokens: a position in a list, bound to the list and the caller.

A token is `base64url(payload).base64url(HMAC-SHA256(key, payload)[:16])`; the payload names the
list (RPC, caller and filter) and the keyset position. A token that does not verify, that was
issued for another list or another caller, or that cannot be read is refused with
INVALID_ARGUMENT PAGE_TOKEN_INVALID and metadata `problem` (malformed, signature, scope), so a
caller can neither forge a position nor reuse someone else's token to page through their hands.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any

from service_runtime.errors import InvalidArgument

_MAC_BYTES = 16
MAX_TOKEN_LENGTH = 2048


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _refused(problem: str) -> InvalidArgument:
    return InvalidArgument(
        "PAGE_TOKEN_INVALID", "the page token was not issued for this list", {"problem": problem}
    )


class PageTokens:
    """Issues and reads page tokens under one secret key."""

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("the page token key needs at least 16 bytes")
        self._key = key

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:_MAC_BYTES]

    def issue(self, scope: str, position: list[Any]) -> str:
        payload = json.dumps({"s": scope, "p": position}, separators=(",", ":")).encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def read(self, token: str, scope: str) -> list[Any]:
        """The position of a token issued for `scope`; PAGE_TOKEN_INVALID otherwise."""
        if len(token) > MAX_TOKEN_LENGTH or token.count(".") != 1:
            raise _refused("malformed")
        encoded, _, mac = token.partition(".")
        try:
            payload, signature = _unb64(encoded), _unb64(mac)
        except (binascii.Error, ValueError) as error:
            raise _refused("malformed") from error
        if not hmac.compare_digest(self._mac(payload), signature):
            raise _refused("signature")
        data = json.loads(payload)
        if data.get("s") != scope:
            raise _refused("scope")
        position = data.get("p")
        if not isinstance(position, list):
            raise _refused("malformed")
        return position


def keyset_position(token_position: list[Any], kinds: tuple[type, ...]) -> tuple[Any, ...]:
    """Check a signed position has the expected shape (guards against a key shared across versions)."""
    if len(token_position) != len(kinds) or not all(
        type(value) is kind for value, kind in zip(token_position, kinds, strict=True)
    ):
        raise _refused("malformed")
    return tuple(token_position)


DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500


def page_size_of(requested: int) -> int:
    if requested < 0:
        raise InvalidArgument("FIELD_INVALID", "page_size must not be negative", {"field": "page.page_size"})
    return DEFAULT_PAGE_SIZE if requested == 0 else min(requested, MAX_PAGE_SIZE)
