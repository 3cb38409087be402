"""Who the client is: in development a token minted for a name with the configured key (as tests and
`mint-token` do), plus a payments-gateway service token for buying chips; in production the bearer
token a gateway issued, and no way to buy chips but the payments gateway itself."""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clients.play.texts import t
from service_runtime.auth import Role, ServiceName, TokenKeys, mint_token

# A display name at the table and in history is 1-32 characters; a player id may not contain `/`.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")
RESERVED_NAMES = frozenset({"house", "system", "gram", "mpx", "telegram_stars", "house_funding"})
RESERVED_NAMES |= {s.value for s in ServiceName}


class SignInError(ValueError):
    """A name or token the client cannot sign in with; the message says why."""


@dataclass(frozen=True)
class Identity:
    player_id: str
    token: Callable[[], str]
    # Development only: a token naming the payments gateway, the one identity the cashier lets
    # record purchases. None in production, where purchases go through the payments gateway.
    payments_token: Callable[[], str] | None
    development: bool


def check_name(name: str) -> str:
    name = name.strip()
    if not _NAME.fullmatch(name) or name.lower() in RESERVED_NAMES:
        raise SignInError(t("signin.bad_name"))
    return name


class RenewingToken:
    """A development token for `subject` with `roles`, minted again at half its lifetime."""

    def __init__(self, keys: TokenKeys, subject: str, roles: Sequence[Role], ttl_seconds: int = 3600) -> None:
        self._keys = keys
        self._subject = subject
        self._roles = tuple(roles)
        self._ttl = ttl_seconds
        self._token = ""
        self._renew_at = 0.0

    def __call__(self) -> str:
        now = time.time()
        if now >= self._renew_at:
            self._token = mint_token(
                self._keys, self._subject, self._roles, now=int(now), ttl_seconds=self._ttl
            )
            self._renew_at = now + self._ttl / 2
        return self._token


def development_identity(name: str, auth_keys: Sequence[str]) -> Identity:
    player = check_name(name)
    keys = TokenKeys.from_settings(auth_keys)
    return Identity(
        player_id=player,
        token=RenewingToken(keys, player, (Role.PLAYER,)),
        payments_token=RenewingToken(keys, ServiceName.PAYMENTS.value, (Role.SERVICE,)),
        development=True,
    )


def subject_of(token: str) -> str:
    """The subject a token names, read without verifying it (only the services can verify it)."""
    parts = token.strip().split(".")
    if len(parts) != 3:
        raise SignInError(t("signin.token_parts"))
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (ValueError, json.JSONDecodeError) as error:
        raise SignInError(t("signin.token_unreadable")) from error
    subject = claims.get("sub") if isinstance(claims, dict) else None
    if not isinstance(subject, str) or not subject:
        raise SignInError(t("signin.token_no_player"))
    return subject


def production_identity(token: str) -> Identity:
    token = token.strip()
    player = subject_of(token)
    return Identity(player_id=player, token=lambda: token, payments_token=None, development=False)
