"""The durable log of each live hand: its config (deck included) and every accepted decision, in order.

Entries are in the engine's replay format (`poker_engine.replay.config_from_json` for the first,
`apply_json_action` for the rest), so a shard that takes a table over rebuilds the hand exactly with
the engine's replay (services/table/cash/takeover.py reads it back). Without Redis the log is a file of
the single shard (`FileEventLog`: append-only JSON lines, fsynced before anyone hears of the entry,
compacted), so a restarted shard finds its running hands; with Redis it is a stream per hand whose
every append checks the room's fencing token (`RedisEventLog`). `LocalEventLog` keeps it in memory
(tests, and processes that keep nothing across restarts).
Beside the hands, each table has a seats' log: the inputs its seats' core took (`append_seats`,
`read_seats`; table_core.to_entry), fenced the same way, so a next owner has the same seats. It is
trimmed by `rewrite_seats`: a snapshot of the seats (table_core.Snapshot) replaces what came before.
The log holds hole cards (the deck) and the players' fair-play signals: it is server-side state like
the fairness seed, never logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from redis import exceptions as redis_errors

from service_runtime.errors import FailedPrecondition, Unavailable
from services.table.log.json_lines_file import JsonLinesFile
from services.table.ports.clock import WALL_CLOCK, Clock

# How long a request id stays bound to what it first named (`bind_request`): far beyond any retry.
REQUEST_BINDING_SECONDS = 30 * 24 * 3600


class HandEventLog(Protocol):
    async def append(self, room_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        """Append entries durably; raises (and appends nothing) if this shard lost the room."""

    async def read(self, hand_id: str) -> list[dict[str, Any]]:
        """Every entry of the hand, in order."""

    async def forget(self, hand_id: str) -> None:
        """Drop the log of a settled hand (its record went to history)."""

    async def mark_live(self, room_id: str, table_id: str, hand_id: str) -> None:
        """Remember the table's running hand (fenced like an append), so a next owner can find it."""

    async def mark_next(self, room_id: str, table_id: str, hand_id: str) -> None:
        """Remember the table's next hand, committed and not dealt yet (fenced like an append), so a
        next owner voids it; the deal (`append_live`) and the end of the hand (`forget_live`) clear it."""

    async def append_live(
        self, room_id: str, table_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        """`append` and `mark_live` in one fenced write (the start of a hand: one round trip); the
        next-hand mark naming the hand is cleared in the same write."""

    async def forget_live(self, table_id: str, hand_id: str) -> None:
        """`forget` and `clear_live` together (the end of a hand: one round trip); a next-hand mark
        naming the hand goes too (a committed hand voided)."""

    async def live_hand(self, table_id: str) -> str | None:
        """The hand a previous owner left running at the table and never settled, if any."""

    async def next_hand(self, table_id: str) -> str | None:
        """The hand a previous owner committed for the table and never dealt, if any."""

    async def clear_live(self, table_id: str, hand_id: str) -> None:
        """The table's hand `hand_id` is settled or voided (a newer hand's mark is left alone)."""

    async def append_seats(self, room_id: str, table_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        """Append the table's seats' entries (table_core's inputs) durably, fenced like `append`."""

    async def read_seats(self, table_id: str) -> list[dict[str, Any]]:
        """Every seats' entry of the table, in order."""

    async def rewrite_seats(self, room_id: str, table_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        """Replace the table's seats' log with `entries` (a snapshot of the seats first: the log
        trimmed), in one fenced write: a reader sees the old log or the new one, never a mix."""

    async def bind_request(self, scope: str, request_id: str, value: str) -> str:
        """Bind `request_id` (within `scope`, one per caller and method) to `value` unless it is bound
        already, for `REQUEST_BINDING_SECONDS`: the value it is bound to (the first one). Not fenced:
        the binding belongs to no room (CloseTable's id names one of many tables, at any shard)."""


class LocalEventLog:
    """In-process log: a table reopened in the same process finds its running hand; a restart forgets."""

    def __init__(self, clock: Clock = WALL_CLOCK) -> None:
        self._clock = clock
        self._hands: dict[str, list[dict[str, Any]]] = {}
        self._live: dict[str, str] = {}  # table id -> its running hand
        self._next: dict[str, str] = {}  # table id -> its next hand, committed and not dealt
        self._seats: dict[str, list[dict[str, Any]]] = {}  # table id -> its seats' entries
        # scope + NUL + request id -> (the value it was first bound to, when)
        self._bindings: dict[str, tuple[str, float]] = {}

    async def append(self, room_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        self._hands.setdefault(hand_id, []).extend(dict(e) for e in entries)

    async def read(self, hand_id: str) -> list[dict[str, Any]]:
        return [dict(e) for e in self._hands.get(hand_id, ())]

    async def forget(self, hand_id: str) -> None:
        self._hands.pop(hand_id, None)

    async def mark_live(self, room_id: str, table_id: str, hand_id: str) -> None:
        self._live[table_id] = hand_id

    async def mark_next(self, room_id: str, table_id: str, hand_id: str) -> None:
        self._next[table_id] = hand_id

    async def append_live(
        self, room_id: str, table_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        await LocalEventLog.append(self, room_id, hand_id, entries)
        await LocalEventLog.mark_live(self, room_id, table_id, hand_id)
        self._unmark_next(table_id, hand_id)

    async def forget_live(self, table_id: str, hand_id: str) -> None:
        await LocalEventLog.forget(self, hand_id)
        await LocalEventLog.clear_live(self, table_id, hand_id)
        self._unmark_next(table_id, hand_id)

    def _unmark_next(self, table_id: str, hand_id: str) -> None:
        if self._next.get(table_id) == hand_id:
            del self._next[table_id]

    async def live_hand(self, table_id: str) -> str | None:
        return self._live.get(table_id)

    async def next_hand(self, table_id: str) -> str | None:
        return self._next.get(table_id)

    async def clear_live(self, table_id: str, hand_id: str) -> None:
        if self._live.get(table_id) == hand_id:
            del self._live[table_id]

    async def append_seats(self, room_id: str, table_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        self._seats.setdefault(table_id, []).extend(dict(e) for e in entries)

    async def read_seats(self, table_id: str) -> list[dict[str, Any]]:
        return [dict(e) for e in self._seats.get(table_id, ())]

    async def rewrite_seats(self, room_id: str, table_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        self._seats[table_id] = [dict(e) for e in entries]

    async def bind_request(self, scope: str, request_id: str, value: str) -> str:
        key = _binding_key(scope, request_id)
        found = self._bindings.get(key)
        if found is None:
            self._bindings[key] = found = (value, self._clock.now())
        return found[0]

    def bound_requests(self) -> dict[str, str]:
        """Every binding kept (for tests)."""
        return {key: value for key, (value, _) in self._bindings.items()}


# A long run appends a line per decision; the file is rewritten with the running hands this often.
COMPACT_AFTER_LINES = 5_000


class FileEventLog(LocalEventLog):
    """The single shard's log without Redis: JSON lines, one per change, replayed when the shard starts.

    `{"op": "append", "hand_id", "entries"}`, `{"op": "live", "table_id", "hand_id", "entries"}` (the
    start of a hand, its next-hand mark cleared; or a running hand's mark with no entry),
    `{"op": "next", "table_id", "hand_id"}` (a commitment not dealt yet),
    `{"op": "bind", "key", "value", "at"}` (a request id bound to the table it named, see
    `bind_request`; dropped from the file after `REQUEST_BINDING_SECONDS`),
    `{"op": "forget", "table_id", "hand_id"}` (the end of a hand: its entries dropped, the marks
    cleared unless they name another hand) and `{"op": "clear", ...}` (the live mark alone). Appends and marks are fsynced before the table goes on
    (nobody hears of a decision the file may lose); the end of a hand is not (lost, it only makes the
    next opening find a settled hand, which it ends as such). A torn last line (a killed process) is
    skipped: its write never returned, so nobody heard of it. No fencing: one shard owns every room.
    """

    def __init__(self, path: Path, clock: Clock = WALL_CLOCK) -> None:
        super().__init__(clock)
        self._file = JsonLinesFile(path, compact_after=COMPACT_AFTER_LINES, snapshot=self._open_lines)
        self._lock = asyncio.Lock()
        for change in self._file.read():
            try:
                self._apply(change)
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
        self._file.compact()

    def _apply(self, change: Mapping[str, Any]) -> None:
        op = change["op"]
        if op == "bind":
            at = float(change["at"])
            if at >= self._clock.now() - REQUEST_BINDING_SECONDS:
                self._bindings.setdefault(str(change["key"]), (str(change["value"]), at))
            return
        entries = [dict(e) for e in change.get("entries", ())]
        if op == "seats":
            if change.get("restart"):
                self._seats[str(change["table_id"])] = entries
            else:
                self._seats.setdefault(str(change["table_id"]), []).extend(entries)
            return
        hand_id = str(change["hand_id"])
        if op == "append":
            self._hands.setdefault(hand_id, []).extend(entries)
        elif op == "live":
            if entries:
                self._hands.setdefault(hand_id, []).extend(entries)
                self._unmark_next(str(change["table_id"]), hand_id)
            self._live[str(change["table_id"])] = hand_id
        elif op == "next":
            self._next[str(change["table_id"])] = hand_id
        elif op in ("forget", "clear"):
            if op == "forget":
                self._hands.pop(hand_id, None)
                self._unmark_next(str(change["table_id"]), hand_id)
            if self._live.get(str(change["table_id"])) == hand_id:
                del self._live[str(change["table_id"])]

    def _open_lines(self) -> list[str]:
        """What the rewritten file holds: each running hand's mark and entries, each next hand's mark."""
        marked = set(self._live.values())
        self._hands = {hand_id: entries for hand_id, entries in self._hands.items() if hand_id in marked}
        return (
            [
                _change("live", hand_id, table_id=table_id, entries=self._hands.get(hand_id, []))
                for table_id, hand_id in sorted(self._live.items())
            ]
            + [
                _change("next", hand_id, table_id=table_id)
                for table_id, hand_id in sorted(self._next.items())
            ]
            + [
                _seats_change(table_id, entries)
                for table_id, entries in sorted(self._seats.items())
                if entries
            ]
            + [_bind_change(key, value, at) for key, (value, at) in self._kept_bindings()]
        )

    def _kept_bindings(self) -> list[tuple[str, tuple[str, float]]]:
        """The bindings younger than their retention (the older ones are dropped from memory too)."""
        since = self._clock.now() - REQUEST_BINDING_SECONDS
        self._bindings = {key: found for key, found in self._bindings.items() if found[1] >= since}
        return sorted(self._bindings.items())

    def _write(self, line: str, sync: bool) -> None:
        self._file.write(line, sync=sync)

    async def _change(self, line: str, *, sync: bool = True) -> None:
        # The memory changes under the lock, before the line is written: a compaction (in the writer
        # thread, under the same lock) writes exactly what the file holds.
        async with self._lock:
            self._apply(json.loads(line))
            await asyncio.to_thread(self._write, line, sync)

    async def append(self, room_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        await self._change(_change("append", hand_id, entries=entries))

    async def mark_live(self, room_id: str, table_id: str, hand_id: str) -> None:
        await self._change(_change("live", hand_id, table_id=table_id))

    async def mark_next(self, room_id: str, table_id: str, hand_id: str) -> None:
        await self._change(_change("next", hand_id, table_id=table_id))

    async def append_live(
        self, room_id: str, table_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        await self._change(_change("live", hand_id, table_id=table_id, entries=entries))

    async def forget(self, hand_id: str) -> None:
        await self._change(_change("forget", hand_id, table_id=""), sync=False)

    async def forget_live(self, table_id: str, hand_id: str) -> None:
        await self._change(_change("forget", hand_id, table_id=table_id), sync=False)

    async def clear_live(self, table_id: str, hand_id: str) -> None:
        await self._change(_change("clear", hand_id, table_id=table_id), sync=False)

    async def append_seats(self, room_id: str, table_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        await self._change(_seats_change(table_id, entries))

    async def rewrite_seats(self, room_id: str, table_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        await self._change(_seats_change(table_id, entries, restart=True))

    async def bind_request(self, scope: str, request_id: str, value: str) -> str:
        key = _binding_key(scope, request_id)
        if key not in self._bindings:
            # Two binds of one new id at once: both lines are written, the first applied wins (the
            # replay keeps the first line's value too), and each caller is told the winner.
            await self._change(_bind_change(key, value, self._clock.now()))
        return self._bindings[key][0]

    def close(self) -> None:
        self._file.close()


def _change(
    op: str, hand_id: str, *, table_id: str | None = None, entries: Sequence[Mapping[str, Any]] = ()
) -> str:
    change: dict[str, Any] = {"op": op, "hand_id": hand_id}
    if table_id is not None:
        change["table_id"] = table_id
    if entries:
        change["entries"] = [dict(e) for e in entries]
    return json.dumps(change, sort_keys=True) + "\n"


def _binding_key(scope: str, request_id: str) -> str:
    return f"{scope}\x00{request_id}"


def _bind_change(key: str, value: str, at: float) -> str:
    return json.dumps({"op": "bind", "key": key, "value": value, "at": at}, sort_keys=True) + "\n"


def _seats_change(table_id: str, entries: Sequence[Mapping[str, Any]], *, restart: bool = False) -> str:
    """`{"op": "seats", "table_id", "entries"}`; `"restart": true` when the entries replace the
    table's seats' log (a snapshot first) instead of following it."""
    change: dict[str, Any] = {"op": "seats", "table_id": table_id, "entries": [dict(e) for e in entries]}
    if restart:
        change["restart"] = True
    return json.dumps(change, sort_keys=True) + "\n"


# Every fenced script starts so: KEYS[1] = the room's owner hash of the shard registry, ARGV[1] = this
# shard's id, ARGV[2] = its fencing token for the room; the write happens only while the registry
# names this shard with this very token.
FENCE_CHECK = """
local owner = redis.call('HGET', KEYS[1], 'shard')
local token = redis.call('HGET', KEYS[1], 'token')
if owner ~= ARGV[1] or token ~= ARGV[2] then
  return redis.error_reply('SHARD_NOT_OWNER')
end
"""

# KEYS[1] = the room's owner hash of the shard registry, KEYS[2] = the hand's stream.
# ARGV[1] = this shard's id, ARGV[2] = its fencing token for the room, ARGV[3..] = entries (JSON).
# The append happens only if the registry still names this shard with this very token: a shard that
# lost its lease (the token grew when the room moved) can never write to a hand's log again.
_FENCED_APPEND = (
    FENCE_CHECK
    + """
for i = 3, #ARGV do
  redis.call('XADD', KEYS[2], '*', 'e', ARGV[i])
end
return #ARGV - 2
"""
)

# KEYS[1] = the room's owner hash, KEYS[2] = the table's seats' stream; ARGV[1] = shard id, ARGV[2] =
# token, ARGV[3..] = entries (JSON). The seats' log trimmed: dropped and written again from a snapshot
# of the seats, in one fenced script.
_FENCED_REWRITE = (
    FENCE_CHECK
    + """
redis.call('DEL', KEYS[2])
for i = 3, #ARGV do
  redis.call('XADD', KEYS[2], '*', 'e', ARGV[i])
end
return #ARGV - 2
"""
)

# KEYS[1] = the room's owner hash, KEYS[2] = the hand's stream, KEYS[3] = the table's live-hand key,
# KEYS[4] = its next-hand key. ARGV[1] = shard id, ARGV[2] = token, ARGV[3] = the hand, ARGV[4..] =
# entries (JSON). The start of a hand: its config appended, the table's live mark set and the
# next-hand mark that named it cleared, in one fenced script (issue 28).
_FENCED_APPEND_LIVE = (
    FENCE_CHECK
    + """
for i = 4, #ARGV do
  redis.call('XADD', KEYS[2], '*', 'e', ARGV[i])
end
redis.call('SET', KEYS[3], ARGV[3])
if redis.call('GET', KEYS[4]) == ARGV[3] then
  redis.call('DEL', KEYS[4])
end
return #ARGV - 3
"""
)

# KEYS[1] = the hand's stream, KEYS[2] = the table's live-hand key, KEYS[3] = its next-hand key;
# ARGV[1] = the hand. The end of a hand (or of a commitment voided): its log dropped, and each mark
# cleared unless it names another hand.
_FORGET_LIVE = """
redis.call('DEL', KEYS[1])
for i = 2, 3 do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
  end
end
return 1
"""

# KEYS[1] = the room's owner hash, KEYS[2] = the table's live-hand key; ARGV = shard id, token, hand.
_FENCED_MARK = (
    FENCE_CHECK
    + """
redis.call('SET', KEYS[2], ARGV[3])
return 1
"""
)


# KEYS[1] = the binding's key; ARGV[1] = the value, ARGV[2] = its retention in seconds. The value the
# key holds, set to ARGV[1] first if it held none (in one step: two binds at once agree).
_BIND = """
local bound = redis.call('GET', KEYS[1])
if bound then
  return bound
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[2]))
return ARGV[1]
"""


@contextlib.contextmanager
def _away_is_unavailable() -> Iterator[None]:
    """Redis away (refused, reset, timed out) is UNAVAILABLE, which the table retries or waits on, as
    for a fenced append; a refused command (a script's error) is a bug and stays what it is."""
    try:
        yield
    except redis_errors.ResponseError:
        raise
    except redis_errors.RedisError as error:
        raise Unavailable("UNAVAILABLE", "the hand log is unavailable", {"dependency": "redis"}) from error


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
        self._append_live = client.register_script(_FENCED_APPEND_LIVE)
        self._rewrite = client.register_script(_FENCED_REWRITE)
        self._forget_live = client.register_script(_FORGET_LIVE)
        self._bind = client.register_script(_BIND)
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

    async def mark_next(self, room_id: str, table_id: str, hand_id: str) -> None:
        await self._fenced(self._mark, room_id, self._next_key(table_id), [hand_id])

    async def append_live(
        self, room_id: str, table_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        await self._fenced(
            self._append_live,
            room_id,
            [self._stream(hand_id), self._live_key(table_id), self._next_key(table_id)],
            [hand_id, *(json.dumps(dict(e), sort_keys=True) for e in entries)],
        )

    async def forget_live(self, table_id: str, hand_id: str) -> None:
        with _away_is_unavailable():
            await self._forget_live(
                keys=[self._stream(hand_id), self._live_key(table_id), self._next_key(table_id)],
                args=[hand_id],
            )

    async def live_hand(self, table_id: str) -> str | None:
        with _away_is_unavailable():
            value = await self._redis.get(self._live_key(table_id))
        return None if value is None else bytes(value).decode()

    async def next_hand(self, table_id: str) -> str | None:
        with _away_is_unavailable():
            value = await self._redis.get(self._next_key(table_id))
        return None if value is None else bytes(value).decode()

    async def clear_live(self, table_id: str, hand_id: str) -> None:
        with _away_is_unavailable():
            await self._clear(keys=[self._live_key(table_id)], args=[hand_id])

    async def append_seats(self, room_id: str, table_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        await self._fenced(
            self._script,
            room_id,
            self._seats_stream(table_id),
            [json.dumps(dict(e), sort_keys=True) for e in entries],
        )

    async def rewrite_seats(self, room_id: str, table_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        await self._fenced(
            self._rewrite,
            room_id,
            self._seats_stream(table_id),
            [json.dumps(dict(e), sort_keys=True) for e in entries],
        )

    async def read_seats(self, table_id: str) -> list[dict[str, Any]]:
        with _away_is_unavailable():
            rows = await self._redis.xrange(self._seats_stream(table_id))
        return [json.loads(fields[b"e"]) for _, fields in rows]

    async def bind_request(self, scope: str, request_id: str, value: str) -> str:
        with _away_is_unavailable():
            bound = await self._bind(
                keys=[f"{self._prefix}request-binding:{_binding_key(scope, request_id)}"],
                args=[value, str(REQUEST_BINDING_SECONDS)],
            )
        return bytes(bound).decode() if isinstance(bound, bytes) else str(bound)

    def _seats_stream(self, table_id: str) -> str:
        return f"{self._prefix}table-seats-log:{table_id}"

    def _live_key(self, table_id: str) -> str:
        return f"{self._prefix}table-live-hand:{table_id}"

    def _next_key(self, table_id: str) -> str:
        return f"{self._prefix}table-next-hand:{table_id}"

    async def _fenced(self, script: Any, room_id: str, key: str | list[str], args: list[str]) -> None:
        token = self._tokens.get(room_id)
        if token is None:
            raise FailedPrecondition(
                "SHARD_NOT_OWNER", "this shard does not own the room", {"room_id": room_id}
            )
        try:
            await script(
                keys=[f"{self._prefix}room-owner:{room_id}", *([key] if isinstance(key, str) else key)],
                args=[self._shard_id, str(token), *args],
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
        with _away_is_unavailable():
            rows = await self._redis.xrange(self._stream(hand_id))
        return [json.loads(fields[b"e"]) for _, fields in rows]

    async def forget(self, hand_id: str) -> None:
        with _away_is_unavailable():
            await self._redis.delete(self._stream(hand_id))
