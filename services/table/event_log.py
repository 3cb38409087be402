"""The durable log of each live hand: its config (deck included) and every accepted decision, in order.

Entries are in the engine's replay format (`poker_engine.replay.config_from_json` for the first,
`apply_json_action` for the rest), so a shard that takes a table over rebuilds the hand exactly with
the engine's replay. Without Redis the log is local to the process (a single shard); with Redis it
is a stream per hand whose every append checks the room's fencing token (`RedisEventLog`).
The log holds hole cards (the deck): it is server-side state like the fairness seed, never logged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from redis import exceptions as redis_errors

from service_runtime.errors import FailedPrecondition, Unavailable


class HandEventLog(Protocol):
    async def append(self, room_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        """Append entries durably; raises (and appends nothing) if this shard lost the room."""

    async def read(self, hand_id: str) -> list[dict[str, Any]]:
        """Every entry of the hand, in order."""

    async def forget(self, hand_id: str) -> None:
        """Drop the log of a settled hand (its record went to history)."""

    async def mark_live(self, room_id: str, table_id: str, hand_id: str) -> None:
        """Remember the table's running hand (fenced like an append), so a next owner can find it."""

    async def live_hand(self, table_id: str) -> str | None:
        """The hand a previous owner left running at the table and never settled, if any."""

    async def clear_live(self, table_id: str, hand_id: str) -> None:
        """The table's hand `hand_id` is settled or voided (a newer hand's mark is left alone)."""


class LocalEventLog:
    """In-process log for the single-shard default (`make run`)."""

    def __init__(self) -> None:
        self._hands: dict[str, list[dict[str, Any]]] = {}

    async def append(self, room_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        self._hands.setdefault(hand_id, []).extend(dict(e) for e in entries)

    async def read(self, hand_id: str) -> list[dict[str, Any]]:
        return list(self._hands.get(hand_id, ()))

    async def forget(self, hand_id: str) -> None:
        self._hands.pop(hand_id, None)

    async def mark_live(self, room_id: str, table_id: str, hand_id: str) -> None:
        # One process, one life: a hand left running dies with the process (see docs/table.md).
        return None

    async def live_hand(self, table_id: str) -> str | None:
        return None

    async def clear_live(self, table_id: str, hand_id: str) -> None:
        return None


# KEYS[1] = the room's owner hash of the shard registry, KEYS[2] = the hand's stream.
# ARGV[1] = this shard's id, ARGV[2] = its fencing token for the room, ARGV[3..] = entries (JSON).
# The append happens only if the registry still names this shard with this very token: a shard that
# lost its lease (the token grew when the room moved) can never write to a hand's log again.
_FENCED_APPEND = """
local owner = redis.call('HGET', KEYS[1], 'shard')
local token = redis.call('HGET', KEYS[1], 'token')
if owner ~= ARGV[1] or token ~= ARGV[2] then
  return redis.error_reply('SHARD_NOT_OWNER')
end
for i = 3, #ARGV do
  redis.call('XADD', KEYS[2], '*', 'e', ARGV[i])
end
return #ARGV - 2
"""

# KEYS[1] = the room's owner hash, KEYS[2] = the table's live-hand key; ARGV = shard id, token, hand.
_FENCED_MARK = """
local owner = redis.call('HGET', KEYS[1], 'shard')
local token = redis.call('HGET', KEYS[1], 'token')
if owner ~= ARGV[1] or token ~= ARGV[2] then
  return redis.error_reply('SHARD_NOT_OWNER')
end
redis.call('SET', KEYS[2], ARGV[3])
return 1
"""


class RedisEventLog:
    """A Redis stream per hand (`<prefix>hand-log:<hand_id>`), every append fenced by the room's token.

    The shard tells the log its token for each room it owns (`own`), as resolved by the shard
    registry (`service_runtime.shard_registry`); an append for a room it does not own, or with a
    token the registry has moved past, raises FailedPrecondition(SHARD_NOT_OWNER) and appends nothing.
    """

    def __init__(self, client: Any, *, shard_id: str, prefix: str = "poker:") -> None:
        self._redis = client
        self._shard_id = shard_id
        self._prefix = prefix
        self._tokens: dict[str, int] = {}
        self._script = client.register_script(_FENCED_APPEND)
        self._mark = client.register_script(_FENCED_MARK)
        self._clear = client.register_script(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        )

    def own(self, room_id: str, token: int) -> None:
        self._tokens[room_id] = token

    def _stream(self, hand_id: str) -> str:
        return f"{self._prefix}hand-log:{hand_id}"

    async def append(self, room_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        await self._fenced(
            self._script,
            room_id,
            self._stream(hand_id),
            [json.dumps(dict(e), sort_keys=True) for e in entries],
        )

    async def mark_live(self, room_id: str, table_id: str, hand_id: str) -> None:
        await self._fenced(self._mark, room_id, self._live_key(table_id), [hand_id])

    async def live_hand(self, table_id: str) -> str | None:
        value = await self._redis.get(self._live_key(table_id))
        return None if value is None else bytes(value).decode()

    async def clear_live(self, table_id: str, hand_id: str) -> None:
        await self._clear(keys=[self._live_key(table_id)], args=[hand_id])

    def _live_key(self, table_id: str) -> str:
        return f"{self._prefix}table-live-hand:{table_id}"

    async def _fenced(self, script: Any, room_id: str, key: str, args: list[str]) -> None:
        token = self._tokens.get(room_id)
        if token is None:
            raise FailedPrecondition(
                "SHARD_NOT_OWNER", "this shard does not own the room", {"room_id": room_id}
            )
        try:
            await script(
                keys=[f"{self._prefix}room-owner:{room_id}", key], args=[self._shard_id, str(token), *args]
            )
        except redis_errors.ResponseError as error:
            if "SHARD_NOT_OWNER" in str(error):
                raise FailedPrecondition(
                    "SHARD_NOT_OWNER", "this shard no longer owns the room", {"room_id": room_id}
                ) from error
            raise
        except redis_errors.RedisError as error:
            raise Unavailable(
                "UNAVAILABLE", "the hand log is unavailable", {"dependency": "redis"}
            ) from error

    async def read(self, hand_id: str) -> list[dict[str, Any]]:
        rows = await self._redis.xrange(self._stream(hand_id))
        return [json.loads(fields[b"e"]) for _, fields in rows]

    async def forget(self, hand_id: str) -> None:
        await self._redis.delete(self._stream(hand_id))
