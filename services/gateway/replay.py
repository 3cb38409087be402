"""Replay refusal for Telegram initData: each signed initData signs in once.

The key is the initData's signature (unique to it) and is kept as long as the initData could still
pass the age check, so the store never grows beyond the sign-ins of that window. With Redis (several
gateways) the claim is one `SET NX EX`, so two gateways cannot both accept the same initData; without
Redis one process keeps them in memory.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

import redis.asyncio as redis

from service_runtime.errors import Unauthenticated, Unavailable

# At most this many initData signatures in memory; past it the oldest go first. Each is younger than
# the maximum age, so only a flood of genuine sign-ins (rate limited) could push one out early.
MAX_REMEMBERED = 200_000


def replayed() -> Unauthenticated:
    return Unauthenticated(
        "INIT_DATA_REPLAYED", "this initData was already used to sign in; open the Mini App again"
    )


class ReplayGuard(Protocol):
    async def claim(self, key: str, ttl_seconds: int) -> None:
        """Record `key` as used for `ttl_seconds`, or raise INIT_DATA_REPLAYED if it already is."""


class MemoryReplayGuard:
    def __init__(self, clock: Callable[[], float] = time.monotonic, limit: int = MAX_REMEMBERED) -> None:
        self._clock = clock
        self._limit = limit
        self._expiry: OrderedDict[str, float] = OrderedDict()

    async def claim(self, key: str, ttl_seconds: int) -> None:
        now = self._clock()
        while self._expiry and next(iter(self._expiry.values())) <= now:
            self._expiry.popitem(last=False)
        expires = self._expiry.get(key)
        if expires is not None and expires > now:
            raise replayed()
        self._expiry[key] = now + ttl_seconds
        self._expiry.move_to_end(key)
        while len(self._expiry) > self._limit:
            self._expiry.popitem(last=False)


class RedisReplayGuard:
    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self._client = client
        self._prefix = prefix

    async def claim(self, key: str, ttl_seconds: int) -> None:
        try:
            fresh = await self._client.set(
                f"{self._prefix}gateway:init-data:{key}", b"1", nx=True, ex=ttl_seconds
            )
        except (redis.RedisError, OSError) as error:
            raise Unavailable("UNAVAILABLE", "sign-in is unavailable", {"dependency": "redis"}) from error
        if not fresh:
            raise replayed()
