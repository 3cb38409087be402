"""Bearer tokens a service mints for its own calls to other services (subject = the service's name).

A service holding the signing key (the first of POKER_AUTH_KEYS) calls others as itself: subject
`history`, `table`, ... with the service role. The token is cached and renewed well before it
expires, so every outgoing call does not pay for an HMAC.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from service_runtime.auth import Role, TokenKeys, mint_token


class ServiceTokenSource:
    """A callable for `clients.create_channel(token=...)` that returns a fresh service token."""

    def __init__(
        self,
        keys: TokenKeys,
        subject: str,
        *,
        ttl_seconds: int = 600,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._keys = keys
        self._subject = subject
        self._ttl = ttl_seconds
        self._clock = clock
        self._token = ""
        self._renew_at = 0.0

    def __call__(self) -> str:
        now = self._clock()
        if now >= self._renew_at:
            self._token = mint_token(
                self._keys, self._subject, (Role.SERVICE,), now=int(now), ttl_seconds=self._ttl
            )
            # Renew at half-life: a call started just before renewal still carries a valid token.
            self._renew_at = now + self._ttl / 2
        return self._token
