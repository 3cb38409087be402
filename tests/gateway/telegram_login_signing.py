"""Telegram Login Widget data signed as Telegram signs it (https://core.telegram.org/widgets/login):
the hex HMAC-SHA256, keyed by SHA-256 of the bot token, of the sorted `key=value` lines."""

from __future__ import annotations

import hashlib
import hmac

from poker.gateway.v1 import staff_pb2


def signed_login(
    bot_token: str, *, telegram_id: int, first_name: str, auth_date: int, username: str = ""
) -> staff_pb2.TelegramLogin:
    fields = {"id": str(telegram_id), "first_name": first_name, "auth_date": str(auth_date)}
    if username:
        fields["username"] = username
    check = "\n".join(f"{key}={fields[key]}" for key in sorted(fields))
    digest = hmac.new(hashlib.sha256(bot_token.encode()).digest(), check.encode(), hashlib.sha256).hexdigest()
    return staff_pb2.TelegramLogin(
        id=telegram_id, first_name=first_name, username=username, auth_date=auth_date, hash=digest
    )
