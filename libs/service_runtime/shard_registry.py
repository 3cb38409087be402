"""Which table shard owns which room: shard leases, rendezvous hashing and per-room fencing tokens.

With Redis, each table shard holds a lease (a key with a few seconds to live, renewed by a heartbeat)
and a room belongs to the live shard with the highest rendezvous weight `sha1("<room>:<shard>")`
(ties broken by the larger shard id). Resolving a room runs one Lua script, so the choice, the
recorded owner and the room's fencing token change together: the token grows by one every time the
recorded owner changes, and never goes down. A shard whose lease lapsed loses its rooms to the next
resolution (by the lobby, or by any shard's heartbeat), and the new owner holds a larger token than
anything the old one wrote with.

Orderly handovers (issue 26): a table shard's lease may say that the shard hands its rooms over
itself (`ShardLease(hands_over=True)`, the key `shard-hands-over:<id>` beside its lease). A room whose
recorded owner is such a live shard stays with it even when another shard now wins the room: the
owner finishes the hands running there, stops the room's tables and releases the room (`release`),
which gives it to the winner with a grown token and tells the winner so through its handover list
(`handovers:<id>`, read by `take_handovers`), so the winner opens the room at once. A draining shard
withdraws from the candidates (`withdraw`: it wins no room any more but keeps the rooms it has, and its
lease, until it released them). A lease that lapses moves the rooms as before, without a word.

Without Redis there is one shard and it owns every room with fencing token 1.

Keys under the prefix (default `poker:`): `shards` (set of candidate shard ids), `shard:<id>` (its
address, with the lease as TTL), `shard-hands-over:<id>` (same TTL), `room-owner:<room_id>` (hash:
`shard`, `token`), `handovers:<id>` (list of rooms released to that shard).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import redis.asyncio as redis

from service_runtime.errors import Unavailable
from service_runtime.tasks import cancel_and_wait

DEFAULT_PREFIX = "poker:"
DEFAULT_LEASE_SECONDS = 3.0
SHARD_ID_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

# The rendezvous winner among the candidates, dropping candidates whose lease ran out.
# KEYS[1] = shards set; ARGV[1] = room id, ARGV[2] = shard key prefix.
_WINNER = """
local function winner()
  local ids = redis.call('SMEMBERS', KEYS[1])
  local best, best_weight, best_address = nil, nil, nil
  for _, id in ipairs(ids) do
    local address = redis.call('GET', ARGV[2] .. id)
    if address then
      local weight = redis.sha1hex(ARGV[1] .. ':' .. id)
      if best == nil or weight > best_weight or (weight == best_weight and id > best) then
        best, best_weight, best_address = id, weight, address
      end
    else
      redis.call('SREM', KEYS[1], id)
    end
  end
  return best, best_address
end
"""

# Resolve one room atomically: the live shards, the rendezvous winner, and the fencing token. A live
# recorded owner that hands its rooms over itself keeps the room until it releases it.
# KEYS[1] = shards set, KEYS[2] = room-owner hash; ARGV[1] = room id, ARGV[2] = shard key prefix,
# ARGV[3] = hands-over key prefix.
_RESOLVE_SCRIPT = (
    _WINNER
    + """
local current = redis.call('HGET', KEYS[2], 'shard')
if current and redis.call('EXISTS', ARGV[3] .. current) == 1 then
  local address = redis.call('GET', ARGV[2] .. current)
  if address then
    return {current, address, tonumber(redis.call('HGET', KEYS[2], 'token'))}
  end
end
local best, best_address = winner()
if best == nil then
  return {}
end
local token
if current ~= best then
  redis.call('HSET', KEYS[2], 'shard', best)
  token = redis.call('HINCRBY', KEYS[2], 'token', 1)
else
  token = tonumber(redis.call('HGET', KEYS[2], 'token'))
end
return {best, best_address, token}
"""
)

# Release a room its owner has stopped serving: only the owner with its very token may; the room
# goes to the rendezvous winner among the candidates (a grown token) and the winner's handover list
# names it. No candidate: the room stays without owner until a shard resolves it.
# KEYS[1] = shards set, KEYS[2] = room-owner hash; ARGV[1] = room id, ARGV[2] = shard key prefix,
# ARGV[3] = handover list prefix, ARGV[4] = releasing shard, ARGV[5] = its token.
_RELEASE_SCRIPT = (
    _WINNER
    + """
if redis.call('HGET', KEYS[2], 'shard') ~= ARGV[4] or redis.call('HGET', KEYS[2], 'token') ~= ARGV[5] then
  return {}
end
redis.call('HDEL', KEYS[2], 'shard')
local best, best_address = winner()
if best == nil or best == ARGV[4] then
  return {}
end
redis.call('HSET', KEYS[2], 'shard', best)
local token = redis.call('HINCRBY', KEYS[2], 'token', 1)
redis.call('RPUSH', ARGV[3] .. best, ARGV[1])
return {best, best_address, token}
"""
)


class NoShardAvailable(Unavailable):
    """No table shard holds a live lease, so no room can be served right now."""

    def __init__(self, room_id: str) -> None:
        super().__init__("NO_SHARD_AVAILABLE", "no live table shard right now; retry", {"room_id": room_id})


@dataclass(frozen=True, slots=True)
class ShardInfo:
    """A table shard: its id (stable across restarts, e.g. the StatefulSet pod name) and address."""

    shard_id: str
    address: str

    def __post_init__(self) -> None:
        if not SHARD_ID_PATTERN.fullmatch(self.shard_id):
            raise ValueError(f"shard ids are 1-64 of A-Z a-z 0-9 . _ -, got {self.shard_id!r}")
        if not self.address or len(self.address) > 255:
            raise ValueError("a shard address is host:port, at most 255 characters")


@dataclass(frozen=True, slots=True)
class RoomOwner:
    """The shard that owns a room, and the room's fencing token at the time it was resolved."""

    room_id: str
    shard: ShardInfo
    fencing_token: int


def rendezvous_weight(room_id: str, shard_id: str) -> str:
    """The weight of a shard for a room (hex; compared as strings, as the Lua script does)."""
    return hashlib.sha1(f"{room_id}:{shard_id}".encode(), usedforsecurity=False).hexdigest()


def choose_shard(room_id: str, shard_ids: Iterable[str]) -> str | None:
    """The rendezvous winner among `shard_ids`; None when there is none."""
    best: tuple[str, str] | None = None
    for shard_id in shard_ids:
        candidate = (rendezvous_weight(room_id, shard_id), shard_id)
        if best is None or candidate > best:
            best = candidate
    return None if best is None else best[1]


class ShardRegistry(Protocol):
    """What the lobby and the shards ask: who is live, who owns a room (and with which token)."""

    async def live_shards(self) -> list[ShardInfo]: ...

    async def owner_of(self, room_id: str) -> RoomOwner: ...

    async def owners_of(self, room_ids: Sequence[str]) -> dict[str, RoomOwner]: ...


class SingleShardRegistry:
    """No Redis: the one configured shard owns every room, with fencing token 1."""

    def __init__(self, shard: ShardInfo) -> None:
        self.shard = shard

    async def live_shards(self) -> list[ShardInfo]:
        return [self.shard]

    async def owner_of(self, room_id: str) -> RoomOwner:
        return RoomOwner(room_id, self.shard, 1)

    async def owners_of(self, room_ids: Sequence[str]) -> dict[str, RoomOwner]:
        return {room_id: RoomOwner(room_id, self.shard, 1) for room_id in room_ids}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisShardRegistry:
    """Leases, rendezvous ownership and fencing tokens in Redis (see the module docstring)."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> None:
        if lease_seconds <= 0:
            raise ValueError("lease_seconds must be positive")
        self._redis = client
        self._prefix = prefix
        self.lease_seconds = lease_seconds
        self._resolve = client.register_script(_RESOLVE_SCRIPT)
        self._release = client.register_script(_RELEASE_SCRIPT)

    def _shards_key(self) -> str:
        return f"{self._prefix}shards"

    def _shard_key_prefix(self) -> str:
        return f"{self._prefix}shard:"

    def _room_key(self, room_id: str) -> str:
        return f"{self._prefix}room-owner:{room_id}"

    def _hands_over_key_prefix(self) -> str:
        return f"{self._prefix}shard-hands-over:"

    def _handovers_key_prefix(self) -> str:
        return f"{self._prefix}handovers:"

    # --- The shard side: hold a lease. ---

    async def heartbeat(self, shard: ShardInfo, *, hands_over: bool = False, candidate: bool = True) -> bool:
        """Take or renew the shard's lease; True if the lease was still held (False: it had lapsed,
        or this is the first beat, so rooms may have moved and the shard must re-check ownership).

        `hands_over`: the shard releases the rooms it loses itself (see the module docstring), so
        its rooms stay with it until then. `candidate=False` (a draining shard) keeps the lease and
        the rooms it has, but wins no room."""
        lease_ms = int(self.lease_seconds * 1000)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(self._shard_key_prefix() + shard.shard_id, shard.address, px=lease_ms, get=True)
            if candidate:
                pipe.sadd(self._shards_key(), shard.shard_id)
            else:
                pipe.srem(self._shards_key(), shard.shard_id)
            if hands_over:
                pipe.set(self._hands_over_key_prefix() + shard.shard_id, "1", px=lease_ms)
            results = await pipe.execute()
        return results[0] is not None

    register = heartbeat

    async def deregister(self, shard: ShardInfo) -> None:
        """Give the lease up at once (graceful shutdown), so the rooms move without waiting."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(self._shard_key_prefix() + shard.shard_id)
            pipe.delete(self._hands_over_key_prefix() + shard.shard_id)
            pipe.srem(self._shards_key(), shard.shard_id)
            await pipe.execute()

    async def release(self, room_id: str, shard_id: str, fencing_token: int) -> RoomOwner | None:
        """Hand a room this shard stopped serving to the winner among the candidates (its token grown,
        its handover list told); None when `shard_id` with `fencing_token` no longer owns the room,
        or no other candidate is live (the room then waits for the next shard to resolve it)."""
        result = await self._release(
            keys=[self._shards_key(), self._room_key(room_id)],
            args=[
                room_id,
                self._shard_key_prefix(),
                self._handovers_key_prefix(),
                shard_id,
                str(fencing_token),
            ],
        )
        if not result:
            return None
        owner, address, token = result
        return RoomOwner(room_id, ShardInfo(_text(owner), _text(address)), int(token))

    async def take_handovers(self, shard_id: str) -> list[str]:
        """The rooms released to this shard since it last asked (each named once)."""
        key = self._handovers_key_prefix() + shard_id
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.lrange(key, 0, -1)
            pipe.delete(key)
            rooms, _ = await pipe.execute()
        return list(dict.fromkeys(_text(room) for room in rooms))

    # --- Everybody: who is live, who owns what. ---

    async def live_shards(self) -> list[ShardInfo]:
        ids = sorted(_text(i) for i in await self._redis.smembers(self._shards_key()))
        if not ids:
            return []
        addresses = await self._redis.mget([self._shard_key_prefix() + i for i in ids])
        return [ShardInfo(i, _text(a)) for i, a in zip(ids, addresses, strict=True) if a is not None]

    def _resolve_keys(self, room_id: str) -> list[str]:
        return [self._shards_key(), self._room_key(room_id)]

    def _resolve_args(self, room_id: str) -> list[str]:
        return [room_id, self._shard_key_prefix(), self._hands_over_key_prefix()]

    @staticmethod
    def _owner(room_id: str, result: Any) -> RoomOwner | None:
        if not result:
            return None
        shard_id, address, token = result
        return RoomOwner(room_id, ShardInfo(_text(shard_id), _text(address)), int(token))

    async def owner_of(self, room_id: str) -> RoomOwner:
        """Resolve the room now: the live owner and its fencing token (grown if the owner changed)."""
        result = await self._resolve(keys=self._resolve_keys(room_id), args=self._resolve_args(room_id))
        owner = self._owner(room_id, result)
        if owner is None:
            raise NoShardAvailable(room_id)
        return owner

    async def owners_of(self, room_ids: Sequence[str]) -> dict[str, RoomOwner]:
        """Resolve several rooms in one round trip (each room's script as `owner_of` runs it, in a
        pipeline); rooms with no live shard are left out."""
        if not room_ids:
            return {}
        async with self._redis.pipeline(transaction=False) as pipe:
            for room_id in room_ids:
                await self._resolve(
                    keys=self._resolve_keys(room_id), args=self._resolve_args(room_id), client=pipe
                )
            results = await pipe.execute()
        owners = (self._owner(room_id, result) for room_id, result in zip(room_ids, results, strict=True))
        return {owner.room_id: owner for owner in owners if owner is not None}

    async def fencing_token(self, room_id: str) -> int:
        """The room's current token without resolving (0 if the room was never resolved)."""
        value = await self._redis.hget(self._room_key(room_id), "token")
        return 0 if value is None else int(value)


class ShardLease:
    """A shard's lease kept alive in the background: a heartbeat every third of the lease.

    `start()` takes the lease before returning; `stop()` ends the heartbeat and gives the lease up.
    `lapses` counts heartbeats that found the lease gone (the shard must re-check its rooms then).
    `hands_over`: the shard releases the rooms it loses itself (a table shard); `withdraw()` (a drain)
    makes it win no further room while it keeps its lease and the rooms it has not released yet.
    """

    def __init__(
        self,
        registry: RedisShardRegistry,
        shard: ShardInfo,
        *,
        interval: float | None = None,
        hands_over: bool = False,
    ) -> None:
        self._registry = registry
        self.shard = shard
        self.interval = interval if interval is not None else registry.lease_seconds / 3
        self.hands_over = hands_over
        self.candidate = True
        self.lapses = 0
        # When a heartbeat last renewed the lease (monotonic clock): what `held` and the metrics read.
        self.renewed_at = float("-inf")
        self._task: asyncio.Task[None] | None = None

    @property
    def held(self) -> bool:
        """The lease was renewed less than a lease ago (so the registry still names this shard)."""
        return time.monotonic() - self.renewed_at < self._registry.lease_seconds

    async def start(self) -> None:
        await self._beat_once()
        self._task = asyncio.create_task(self._beat(), name=f"shard-lease-{self.shard.shard_id}")

    async def _beat_once(self) -> bool:
        held = await self._registry.heartbeat(
            self.shard, hands_over=self.hands_over, candidate=self.candidate
        )
        self.renewed_at = time.monotonic()
        return held

    async def withdraw(self) -> None:
        """Win no further room (the drain); the lease and the rooms not yet released stay."""
        self.candidate = False
        with contextlib.suppress(redis.RedisError, OSError):
            await self._beat_once()

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                if not await self._beat_once():
                    self.lapses += 1
            except (redis.RedisError, OSError):
                # Redis away for a moment: the next beat retries; if it stays away, the lease lapses
                # and the rooms move, which is the point of a lease.
                self.lapses += 1

    async def stop(self, *, give_up: bool = True) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
        if give_up:
            with contextlib.suppress(redis.RedisError, OSError):
                await self._registry.deregister(self.shard)
