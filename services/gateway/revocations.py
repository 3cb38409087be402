"""Ended sessions (SignOut): a revoked session's tokens are refused, and its streams end, everywhere.

A gateway session is one sign-in, named by the token's `sid` claim and kept through renewals. When
the player signs out the session is revoked until the last of its tokens could have expired (its
session's end), so the record never outlives what it guards.

Every call's token is checked against the revocations when it comes in (front_door), and a stream
the gateway relays registers a callback that ends it the moment its session is revoked, whichever
replica revoked it:

- without Redis (one gateway) the revocations are in memory and the callbacks run at once;
- with Redis each revocation is a key (`SET EX`, checked per call) and a message on one channel,
  which every replica's subscriber passes to its local streams. A replica that misses a message
  (its Redis link was down) still refuses the session's next call and renewal, and its streams of
  that session end at their token's expiry at the latest.

If Redis cannot be read when a call comes in, the call goes on (logged): revocation narrows a
session's life, which the token's short lifetime bounds anyway, and an outage of Redis must not stop
every table. Revoking needs Redis: SignOut answers UNAVAILABLE without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Protocol

import redis.asyncio as redis
import structlog

from service_runtime.errors import Unavailable

log = structlog.get_logger("gateway.sessions")

# Seconds between attempts to (re)subscribe after the Redis link failed.
RESUBSCRIBE_SECONDS = 1.0
# How long a starting gateway waits for its subscription before it serves anyway.
SUBSCRIBE_WAIT_SECONDS = 5.0
# Past this many remembered sessions, expired ones are dropped (memory: one process's sign-outs).
PRUNE_AT = 10_000


class Watchers:
    """Callbacks of the streams of each session, run once when the session is revoked."""

    def __init__(self) -> None:
        self._by_session: dict[str, set[Callable[[], None]]] = {}

    def add(self, session: str, callback: Callable[[], None]) -> Callable[[], None]:
        self._by_session.setdefault(session, set()).add(callback)

        def remove() -> None:
            callbacks = self._by_session.get(session)
            if callbacks is not None:
                callbacks.discard(callback)
                if not callbacks:
                    del self._by_session[session]

        return remove

    def fire(self, session: str) -> None:
        for callback in self._by_session.pop(session, set()):
            callback()


class SessionRevocations(Protocol):
    async def revoke(self, session: str, ttl_seconds: int) -> None:
        """End `session` for `ttl_seconds` (at least until its last token expires)."""

    async def is_revoked(self, session: str) -> bool: ...

    def on_revoked(self, session: str, callback: Callable[[], None]) -> Callable[[], None]:
        """Run `callback` once when `session` is revoked; returns what stops that."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class MemoryRevocations:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[str, float] = {}
        self._watchers = Watchers()

    async def revoke(self, session: str, ttl_seconds: int) -> None:
        now = self._clock()
        if len(self._until) >= PRUNE_AT:
            self._until = {s: t for s, t in self._until.items() if t > now}
        self._until[session] = max(self._until.get(session, 0.0), now + ttl_seconds)
        self._watchers.fire(session)

    async def is_revoked(self, session: str) -> bool:
        until = self._until.get(session)
        return until is not None and until > self._clock()

    def on_revoked(self, session: str, callback: Callable[[], None]) -> Callable[[], None]:
        return self._watchers.add(session, callback)

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None


class RedisRevocations:
    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self._client = client
        self._key = f"{prefix}gateway:revoked:"
        self._channel = f"{prefix}gateway:revocations"
        self._watchers = Watchers()
        self._listener: asyncio.Task[None] | None = None
        self.subscribed = asyncio.Event()

    async def revoke(self, session: str, ttl_seconds: int) -> None:
        try:
            await self._client.set(f"{self._key}{session}", b"1", ex=max(1, ttl_seconds))
            await self._client.publish(self._channel, session.encode())
        except (redis.RedisError, OSError) as error:
            raise Unavailable(
                "UNAVAILABLE", "signing out is unavailable; retry", {"dependency": "redis"}
            ) from error
        self._watchers.fire(session)

    async def is_revoked(self, session: str) -> bool:
        try:
            return bool(await self._client.exists(f"{self._key}{session}"))
        except (redis.RedisError, OSError) as error:
            log.warning("revocations cannot be read; the call goes on", error=type(error).__name__)
            return False

    def on_revoked(self, session: str, callback: Callable[[], None]) -> Callable[[], None]:
        return self._watchers.add(session, callback)

    async def start(self) -> None:
        """Subscribes before the gateway serves (so no revocation of its streams is missed), but does
        not wait past a few seconds for a Redis that is away: the listener keeps trying."""
        self._listener = asyncio.create_task(self._listen(), name="gateway-revocations")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.subscribed.wait(), SUBSCRIBE_WAIT_SECONDS)

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener

    async def _listen(self) -> None:
        while True:
            try:
                async with self._client.pubsub() as pubsub:
                    await pubsub.subscribe(self._channel)
                    self.subscribed.set()
                    async for message in pubsub.listen():
                        if message.get("type") == "message":
                            data = message.get("data")
                            if isinstance(data, bytes):
                                self._watchers.fire(data.decode("ascii", "replace"))
            except (redis.RedisError, OSError) as error:
                self.subscribed.clear()
                log.warning("revocations channel lost; subscribing again", error=type(error).__name__)
                await asyncio.sleep(RESUBSCRIBE_SECONDS)
