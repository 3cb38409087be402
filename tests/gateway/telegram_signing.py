"""initData as Telegram builds it, written here from Telegram's documentation (not from the gateway's
code), so the tests check the gateway against the documented algorithm."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from urllib.parse import urlencode


def init_data(
    bot_token: str,
    user_id: int,
    *,
    first_name: str = "Ann",
    auth_date: int | None = None,
    photo_url: str = "",
    **extra: str,
) -> str:
    """`photo_url`: the user's profile photo, as Telegram gives it in `user` (none when empty)."""
    user: dict[str, object] = {"id": user_id, "first_name": first_name, "language_code": "en"}
    if photo_url:
        user["photo_url"] = photo_url
    fields = {
        "auth_date": str(int(time.time()) if auth_date is None else auth_date),
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps(user, separators=(",", ":")),
        **extra,
    }
    data_check_string = "\n".join(f"{key}={value}" for key, value in sorted(fields.items()))
    secret = hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, data_check_string.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields)
