"""The Telegram Login Widget's data, verified (pure; https://core.telegram.org/widgets/login).

The widget hands the page the user's `id`, `first_name`, `last_name`, `username`, `photo_url`,
`auth_date` and `hash`. The data-check string is every received field but `hash` as `key=value`, sorted
by key, joined by newlines; `hash` is its hex HMAC-SHA256 keyed by SHA-256 of the bot token (not the
Mini App's `WebAppData` key: the two schemes differ). Fields the widget did not send are left out,
which proto3 cannot tell from empty strings, so empty ones are left out too (Telegram sends none).
"""

from __future__ import annotations

import hashlib
import hmac

from poker.gateway.v1 import staff_pb2
from service_runtime.errors import Unauthenticated

# A clock this far ahead of ours is still believed (auth_date is whole seconds on Telegram's clock).
CLOCK_SKEW_SECONDS = 60
MAX_FIELD = 512


def data_check_string(login: staff_pb2.TelegramLogin) -> str:
    fields: dict[str, str] = {"id": str(login.id), "auth_date": str(login.auth_date)}
    for name in ("first_name", "last_name", "username", "photo_url"):
        value = getattr(login, name)
        if value:
            fields[name] = value
    return "\n".join(f"{key}={fields[key]}" for key in sorted(fields))


def login_hash(login: staff_pb2.TelegramLogin, bot_token: str) -> str:
    secret = hashlib.sha256(bot_token.encode()).digest()
    return hmac.new(secret, data_check_string(login).encode(), hashlib.sha256).hexdigest()


def verify_login(login: staff_pb2.TelegramLogin, bot_token: str, *, now: int, max_age_seconds: int) -> int:
    """The Telegram user id the data names, once its signature and age check out."""
    if (
        login.id <= 0
        or login.auth_date <= 0
        or len(login.hash) != 64
        or any(
            len(getattr(login, f)) > MAX_FIELD for f in ("first_name", "last_name", "username", "photo_url")
        )
        or any("\n" in getattr(login, f) for f in ("first_name", "last_name", "username", "photo_url"))
    ):
        raise Unauthenticated("LOGIN_DATA_INVALID", "the Telegram login data is malformed")
    if not hmac.compare_digest(login_hash(login, bot_token), login.hash.lower()):
        raise Unauthenticated("LOGIN_DATA_INVALID", "the Telegram login data's signature does not verify")
    if login.auth_date > now + CLOCK_SKEW_SECONDS or now - login.auth_date > max_age_seconds:
        raise Unauthenticated("LOGIN_DATA_EXPIRED", "the Telegram login is too old: sign in again")
    return int(login.id)
