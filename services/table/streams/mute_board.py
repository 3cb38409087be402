"""Chat mutes shared by every table shard through Redis (with `POKER_REDIS_URL`).

An admin's `MutePlayer` reaches one shard; that shard applies it to its own `ChatGuard` at once and
writes it to one Redis hash (`<prefix>chat-mutes`, field `<player>\\0<table id or empty>`, value the
end as epoch seconds); every shard reads the hash every poll interval and applies what it finds, so a
mute "everywhere" reaches every shard within seconds. A lifted mute is deleted from the hash; a shard
lifts locally the mutes that disappeared since its last read. Expired entries are deleted by the
reader that finds them.
"""

from __future__ import annotations

import asyncio
import contextlib

import redis.asyncio as redis

from service_runtime.errors import Unavailable
from service_runtime.structured_logging import get_logger
from service_runtime.tasks import cancel_and_wait
from services.table.ports.clock import WALL_CLOCK, Clock
from services.table.streams.chat import ChatGuard

log = get_logger("table.mute_board")


class RedisMuteBoard:
    def __init__(
        self,
        client: redis.Redis,
        guard: ChatGuard,
        *,
        prefix: str,
        interval: float = 1.0,
        clock: Clock = WALL_CLOCK,
    ) -> None:
        self._clock = clock
        self._redis = client
        self._guard = guard
        self._key = f"{prefix}chat-mutes"
        self.interval = interval
        self._seen: set[tuple[str, str]] = set()
        self._task: asyncio.Task[None] | None = None

    async def publish(self, player_id: str, table_id: str, until: float | None) -> None:
        field = f"{player_id}\0{table_id}"
        # Known here from now on: if another shard lifts it, this shard's next read lifts it too.
        if until is None:
            self._seen.discard((player_id, table_id))
        else:
            self._seen.add((player_id, table_id))
        try:
            if until is None:
                await self._redis.hdel(self._key, field)
            else:
                await self._redis.hset(self._key, field, repr(until))
        except (redis.RedisError, OSError) as error:
            raise Unavailable(
                "UNAVAILABLE", "the mute could not be shared", {"dependency": "redis"}
            ) from error

    async def poll_once(self) -> None:
        entries = await self._redis.hgetall(self._key)
        now = self._clock.now()
        current: set[tuple[str, str]] = set()
        expired: list[bytes | str] = []
        for raw_field, raw_until in entries.items():
            text = raw_field.decode() if isinstance(raw_field, bytes) else raw_field
            player_id, _, table_id = text.partition("\0")
            until = float(raw_until)
            if until <= now:
                expired.append(raw_field)
                continue
            current.add((player_id, table_id))
            self._guard.mute(player_id, table_id, until)
        for player_id, table_id in self._seen - current:
            self._guard.mute(player_id, table_id, now)  # lifted elsewhere
        self._seen = current
        if expired:
            await self._redis.hdel(self._key, *expired)

    async def start(self) -> None:
        with contextlib.suppress(Exception):
            await self.poll_once()
        self._task = asyncio.create_task(self._loop(), name="mute-board")

    async def _loop(self) -> None:
        while True:
            await self._clock.sleep(self.interval)
            try:
                await self.poll_once()
            except Exception:
                # Keep the mutes known; the next poll retries.
                log.warning("chat mutes not read")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
