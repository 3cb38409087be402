"""Tokens the bots call with: minted with the configured key in development, given in production."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from service_runtime.auth import Role, ServiceName, TokenKeys, mint_token

Metadata = tuple[tuple[str, str], ...]


def bearer(token: str) -> Metadata:
    return (("authorization", f"Bearer {token}"),)


class MissingToken(Exception):
    """Production run without a token for a bot player."""


@dataclass
class MintedCredentials:
    """Development: each bot's player token, and the payments gateway's service token for purchases,
    signed with the first of POKER_AUTH_KEYS (the key the services verify with)."""

    keys: TokenKeys
    ttl_seconds: int = 6 * 3600
    _cache: dict[tuple[str, str], tuple[float, Metadata]] = field(default_factory=dict)

    def _minted(self, subject: str, role: Role) -> Metadata:
        now = time.time()
        cached = self._cache.get((subject, role.value))
        # Renewed at half-life, so a long run never calls with an expired token.
        if cached is None or now - cached[0] > self.ttl_seconds / 2:
            token = mint_token(self.keys, subject, (role,), now=int(now), ttl_seconds=self.ttl_seconds)
            cached = (now, bearer(token))
            self._cache[(subject, role.value)] = cached
        return cached[1]

    def player(self, player_id: str) -> Metadata:
        return self._minted(player_id, Role.PLAYER)

    def payments(self) -> Metadata | None:
        return self._minted(ServiceName.PAYMENTS.value, Role.SERVICE)


@dataclass(frozen=True)
class GivenCredentials:
    """Production: a token per bot player (from a file), and optionally the payments token."""

    tokens: Mapping[str, str]
    payments_token: str = ""

    def player(self, player_id: str) -> Metadata:
        token = self.tokens.get(player_id)
        if token is None:
            raise MissingToken(f"no token for bot player {player_id!r}")
        return bearer(token)

    def payments(self) -> Metadata | None:
        return bearer(self.payments_token) if self.payments_token else None


def read_token_file(text: str) -> dict[str, str]:
    """`player_id token` per line; blank lines and lines starting with # are skipped."""
    tokens = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"line {number}: expected `player_id token`")
        tokens[parts[0]] = parts[1]
    return tokens
