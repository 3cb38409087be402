"""Telegram Web App `initData` verification, as Telegram documents it (no I/O).

The page gets `Telegram.WebApp.initData`, a URL query string such as
`query_id=...&user=%7B%22id%22%3A...%7D&auth_date=1700000000&hash=<hex>`. Telegram signs it: the
data-check string is every field but `hash`, sorted by key, as `key=value` lines joined by `\\n`; the
secret key is HMAC-SHA256 of the bot token keyed with the constant `WebAppData`; and `hash` is the
hex HMAC-SHA256 of the data-check string with that secret key. Only the bot's owner (and Telegram)
can produce it. `auth_date` (Unix seconds) bounds its age; replay is refused by the caller with the
hash as the key (`replay.py`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from urllib.parse import parse_qsl

from service_runtime.errors import Unauthenticated

# Telegram's initData is a few hundred bytes; anything much larger is not one.
MAX_INIT_DATA_LENGTH = 4096
# A sign-in from a clock a little ahead of ours is still fine.
ALLOWED_CLOCK_SKEW_SECONDS = 60
# Telegram user ids are positive and below 2^52 by its documentation.
MAX_USER_ID = 2**52


@dataclass(frozen=True)
class TelegramUser:
    """Who signed in, as Telegram vouches for it."""

    user_id: int
    first_name: str
    username: str
    auth_date: int
    # The signature of this initData, unique to it: the key under which replay is refused.
    init_data_hash: str
    # The user's profile photo (`user.photo_url`) as Telegram gives it; "" when it gives none. Only
    # signed, never checked here: the lobby keeps it only if it is a Telegram photo URL.
    photo_url: str = ""


def secret_key(bot_token: str) -> bytes:
    """The key Web App data is signed with: HMAC-SHA256(key=b"WebAppData", message=bot token)."""
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def sign_init_data(fields: dict[str, str], bot_token: str) -> str:
    """The hash Telegram would put on `fields` (tests and the development tools sign with it)."""
    check = "\n".join(f"{key}={fields[key]}" for key in sorted(fields))
    return hmac.new(secret_key(bot_token), check.encode(), hashlib.sha256).hexdigest()


def _invalid(message: str) -> Unauthenticated:
    return Unauthenticated("INIT_DATA_INVALID", message)


def _fields(init_data: str) -> dict[str, str]:
    if not init_data or len(init_data) > MAX_INIT_DATA_LENGTH or not init_data.isascii():
        raise _invalid("initData is not a Telegram Web App initData string")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True, errors="strict")
    except (ValueError, UnicodeDecodeError) as error:
        raise _invalid("initData is not a query string") from error
    fields: dict[str, str] = {}
    for key, value in pairs:
        if key in fields:
            raise _invalid("initData names a field twice")
        fields[key] = value
    return fields


def verify_init_data(init_data: str, bot_token: str, *, now: int, max_age_seconds: int) -> TelegramUser:
    """The user Telegram vouches for in `init_data`, or Unauthenticated with what is wrong with it:
    INIT_DATA_INVALID (malformed, or the signature does not verify), INIT_DATA_EXPIRED (too old)."""
    fields = _fields(init_data)
    given = fields.pop("hash", "")
    if len(given) != 64:
        raise _invalid("initData carries no signature")
    expected = sign_init_data(fields, bot_token)
    if not hmac.compare_digest(expected, given.lower()):
        raise _invalid("initData's signature does not verify")
    # Signed by Telegram from here on; still checked, since a bot's own mistakes must not crash us.
    auth_date_text = fields.get("auth_date", "")
    if not auth_date_text.isdigit() or len(auth_date_text) > 12:
        raise _invalid("initData has no auth_date")
    auth_date = int(auth_date_text)
    if now - auth_date > max_age_seconds or auth_date - now > ALLOWED_CLOCK_SKEW_SECONDS:
        raise Unauthenticated(
            "INIT_DATA_EXPIRED", f"initData is older than {max_age_seconds} seconds; open the Mini App again"
        )
    try:
        user = json.loads(fields.get("user", ""))
    except (ValueError, RecursionError) as error:
        raise _invalid("initData has no user") from error
    user_id = user.get("id") if isinstance(user, dict) else None
    if not isinstance(user_id, int) or isinstance(user_id, bool) or not 0 < user_id < MAX_USER_ID:
        raise _invalid("initData's user has no id")
    first_name = user.get("first_name", "")
    username = user.get("username", "")
    photo_url = user.get("photo_url", "")
    return TelegramUser(
        user_id=user_id,
        first_name=first_name if isinstance(first_name, str) else "",
        username=username if isinstance(username, str) else "",
        auth_date=auth_date,
        init_data_hash=given.lower(),
        photo_url=photo_url if isinstance(photo_url, str) else "",
    )
