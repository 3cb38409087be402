"""The house-game round journal: what the next opening of a house table needs to resume or refund.

One entry per step, durable before the step's effect is answered or sent to the cashier: a round
opened (wagers, commitment, jackpot before, cover), dealt (with its decision deadline), a decision
about to be paid (with the next deadline), a round closed (settled or voided). Whoever opens the
table next (the restarted shard, or the shard that took its room over: lease lost, kill -9) reads
back the table's rounds opened and not closed and resumes each (its deck is sealed again, fairness
returns the same one, the decisions are replayed) or refunds it, by what the cashier says was
applied (docs/house-games.md, "Restarts and takeovers").

- `RedisJournal` (with Redis): shared by every shard, under the registry prefix. Every write checks
  the room's owner hash of the shard registry (shard and fencing token), as the hand logs do, so a
  shard that lost the room (frozen past its lease, partitioned) can never add a decision, a deal or
  a close to a round another shard resumed.
- `FileJournal` (the embedded default, one shard): JSON lines fsynced before the table goes on,
  compacted to the open rounds (and the last views) when the shard starts and every
  `COMPACT_AFTER_LINES` lines; no fencing (one shard owns every room).
- `MemoryJournal`: the same in memory (tests, and shards that keep nothing across restarts).

A `closed` entry may carry the round's `player` and its final `view` (a HouseRoundView, base64): each
journal keeps the last one per player and table (`last_views`), so the player still sees how their
round ended at the room's next owner (a handover right after the settlement, a takeover); Redis keeps
them a day after the table's last close, the others the last `LAST_VIEWS_PER_TABLE` players a table.
Only the open rounds' entries are kept otherwise: a closed round's entries go with its close.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from redis import exceptions as redis_errors

from service_runtime.errors import FailedPrecondition, Unavailable
from services.table.log.event_log import FENCE_CHECK

# The players whose last round's view a file or memory journal keeps per table (the most recent).
LAST_VIEWS_PER_TABLE = 1_000
# A file journal is rewritten (open rounds and last views) after this many lines.
COMPACT_AFTER_LINES = 5_000
# Redis keeps a table's last views this long after the table's last close.
LAST_VIEWS_SECONDS = 86_400


class MemoryJournal:
    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []  # the open rounds' entries, in order
        self._last: dict[str, dict[str, str]] = {}  # table -> player -> their last closed round's view

    async def append(self, room_id: str, table_id: str, token: int, entry: dict[str, Any]) -> None:
        """Durably add the entry of a round of `table_id` (`token`: the room's, as the table opened)."""
        self._take({**entry, "table_id": table_id})

    def _take(self, full: dict[str, Any]) -> None:
        if full.get("type") != "closed":
            self.entries.append(full)
            return
        round_id = full.get("round_id")
        self.entries = [e for e in self.entries if e.get("round_id") != round_id]
        player, view = full.get("player"), full.get("view")
        if isinstance(player, str) and isinstance(view, str):
            views = self._last.setdefault(str(full["table_id"]), {})
            views.pop(player, None)
            views[player] = view
            while len(views) > LAST_VIEWS_PER_TABLE:
                del views[next(iter(views))]

    async def last_views(self, table_id: str) -> dict[str, str]:
        """Per player, the view of their last round closed at the table (base64 HouseRoundView)."""
        return dict(self._last.get(table_id, {}))

    def _kept_lines(self) -> list[dict[str, Any]]:
        """What a rewritten file holds: the open rounds' entries, then one `closed` line a last view."""
        return [*self.entries] + [
            {"type": "closed", "round_id": "", "table_id": table_id, "player": player, "view": view}
            for table_id, views in sorted(self._last.items())
            for player, view in views.items()
        ]

    async def open_entries(self, table_id: str) -> list[dict[str, Any]]:
        """Every entry of the table's rounds opened and not closed, as written, each round's in order
        and the rounds in the order they opened: what the round core replays (house_core.replay)."""
        return [dict(e) for e in self.entries if e.get("table_id") == table_id]

    async def open_rounds(self, table_id: str) -> dict[str, dict[str, Any]]:
        """The table's rounds opened and not closed: each open entry with what was logged since."""
        return {
            round_id: entry
            for round_id, entry in open_rounds(self.entries).items()
            if entry.get("table_id") == table_id
        }

    async def tables(self) -> list[str]:
        """Every table with an open round (of any room)."""
        return sorted({str(e["table_id"]) for e in open_rounds(self.entries).values()})


class FileJournal(MemoryJournal):
    """Append-only JSON lines; compacted to the open rounds and last views when the shard starts and
    every `COMPACT_AFTER_LINES` lines."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._path = path
        self._handle: Any = None
        self._lock = asyncio.Lock()
        if path.exists():
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        self._take(json.loads(line))
                    except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                        # A torn last line of a killed process: the step it wrote was never answered.
                        continue
            self._compact()
        self._lines = 0

    def _compact(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        temporary = self._path.with_suffix(".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            for entry in self._kept_lines():
                handle.write(json.dumps(entry, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self._path)
        self._lines = 0

    def _write(self, line: str) -> None:
        if self._handle is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self._path.open("a", encoding="utf-8")
        self._handle.write(line)
        self._handle.flush()
        os.fsync(self._handle.fileno())

    async def append(self, room_id: str, table_id: str, token: int, entry: dict[str, Any]) -> None:
        full = {**entry, "table_id": table_id}
        async with self._lock:
            await asyncio.to_thread(self._write, json.dumps(full, sort_keys=True) + "\n")
            self._take(full)
            self._lines += 1
            if self._lines >= COMPACT_AFTER_LINES:
                await asyncio.to_thread(self._compact)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def open_rounds(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    rounds: dict[str, dict[str, Any]] = {}
    for entry in entries:
        round_id = entry.get("round_id")
        kind = entry.get("type")
        if not isinstance(round_id, str):
            continue
        if kind == "open":
            rounds[round_id] = {**entry, "decisions": []}
        elif kind == "dealt" and round_id in rounds:
            rounds[round_id]["dealt"] = True
            if "deadline" in entry:
                rounds[round_id]["deadline"] = entry["deadline"]
        elif kind == "decision" and round_id in rounds:
            rounds[round_id]["decisions"].append(entry["decision"])
            if "deadline" in entry:
                rounds[round_id]["deadline"] = entry["deadline"]
        elif kind == "closed":
            rounds.pop(round_id, None)
    return rounds


# KEYS[1] = the room's owner hash of the shard registry, KEYS[2] = the round's list, KEYS[3] = the
# table's set of open rounds, KEYS[4] = the set of tables with open rounds, KEYS[5] = the table's last
# views (player -> view).
# ARGV[1] = shard id, ARGV[2] = its fencing token for the room, ARGV[3] = the table, ARGV[4] = the
# round, ARGV[5] = the entry's type, ARGV[6] = the entry (JSON); for a `closed` entry with a view,
# ARGV[7] = the player, ARGV[8] = the view, ARGV[9] = how long the table's last views are kept.
# Written only while the registry names this shard with this very token. `open` adds the round to its
# table's set (and the table to the set of tables with open rounds); `closed` drops the round's list
# and takes it (and, with no round left, its table) out again.
_FENCED_APPEND = (
    FENCE_CHECK
    + """
if ARGV[5] == 'closed' then
  if ARGV[7] then
    redis.call('HSET', KEYS[5], ARGV[7], ARGV[8])
    redis.call('EXPIRE', KEYS[5], ARGV[9])
  end
  redis.call('DEL', KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[4])
  if redis.call('SCARD', KEYS[3]) == 0 then
    redis.call('SREM', KEYS[4], ARGV[3])
  end
  return 0
end
if ARGV[5] ~= 'open' and redis.call('SISMEMBER', KEYS[3], ARGV[4]) == 0 then
  return redis.error_reply('ROUND_NOT_OPEN')
end
redis.call('RPUSH', KEYS[2], ARGV[6])
if ARGV[5] == 'open' then
  redis.call('SADD', KEYS[3], ARGV[4])
  redis.call('SADD', KEYS[4], ARGV[3])
end
return 1
"""
)


class RedisJournal:
    """The journal shared by every shard: per round a list of its entries
    (`<prefix>house-round:<round_id>`), per table the set of its open rounds
    (`<prefix>house-table-rounds:<table_id>`), and the set of tables with open rounds
    (`<prefix>house-open-tables`), written by one fenced script; FailedPrecondition(SHARD_NOT_OWNER)
    when the registry no longer names this shard with the table's token, Unavailable without Redis."""

    def __init__(self, client: Any, *, shard_id: str, prefix: str = "poker:") -> None:
        self._redis = client
        self._shard_id = shard_id
        self._prefix = prefix
        self._script = client.register_script(_FENCED_APPEND)

    def _round_key(self, round_id: str) -> str:
        return f"{self._prefix}house-round:{round_id}"

    def _table_key(self, table_id: str) -> str:
        return f"{self._prefix}house-table-rounds:{table_id}"

    @property
    def _tables_key(self) -> str:
        return f"{self._prefix}house-open-tables"

    def _views_key(self, table_id: str) -> str:
        return f"{self._prefix}house-table-last-views:{table_id}"

    async def append(self, room_id: str, table_id: str, token: int, entry: dict[str, Any]) -> None:
        round_id = str(entry["round_id"])
        shown: list[str] = []
        if entry["type"] == "closed" and isinstance(entry.get("view"), str):
            shown = [str(entry["player"]), str(entry["view"]), str(LAST_VIEWS_SECONDS)]
            entry = {k: v for k, v in entry.items() if k != "view"}  # the view goes to the hash only
        try:
            await self._script(
                keys=[
                    f"{self._prefix}room-owner:{room_id}",
                    self._round_key(round_id),
                    self._table_key(table_id),
                    self._tables_key,
                    self._views_key(table_id),
                ],
                args=[
                    self._shard_id,
                    str(token),
                    table_id,
                    round_id,
                    str(entry["type"]),
                    json.dumps({**entry, "table_id": table_id}, sort_keys=True),
                    *shown,
                ],
            )
        except redis_errors.ResponseError as error:
            if "SHARD_NOT_OWNER" in str(error):
                raise FailedPrecondition(
                    "SHARD_NOT_OWNER", "this shard no longer owns the room", {"room_id": room_id}
                ) from error
            if "ROUND_NOT_OPEN" in str(error):
                # Closed by the room's next owner meanwhile (refunded or settled there).
                raise FailedPrecondition(
                    "HAND_IS_OVER", "the round was closed elsewhere", {"round_id": round_id}
                ) from error
            raise
        except (redis_errors.RedisError, OSError) as error:
            raise Unavailable(
                "UNAVAILABLE", "the house round journal is unavailable", {"dependency": "redis"}
            ) from error

    async def open_entries(self, table_id: str) -> list[dict[str, Any]]:
        try:
            round_ids = sorted(
                bytes(r).decode() for r in await self._redis.smembers(self._table_key(table_id))
            )
            async with self._redis.pipeline(transaction=False) as pipe:
                for round_id in round_ids:
                    pipe.lrange(self._round_key(round_id), 0, -1)
                lists = await pipe.execute() if round_ids else []
        except (redis_errors.RedisError, OSError) as error:
            raise Unavailable(
                "UNAVAILABLE", "the house round journal is unavailable", {"dependency": "redis"}
            ) from error
        rounds = [[json.loads(row) for row in rows] for rows in lists if rows]
        # Each round's list starts with its `open`: the rounds in the order they opened.
        rounds.sort(
            key=lambda entries: (float(entries[0].get("started_at", 0.0)), str(entries[0]["round_id"]))
        )
        return [entry for entries in rounds for entry in entries if entry.get("table_id") == table_id]

    async def open_rounds(self, table_id: str) -> dict[str, dict[str, Any]]:
        return open_rounds(await self.open_entries(table_id))

    async def last_views(self, table_id: str) -> dict[str, str]:
        try:
            views = await self._redis.hgetall(self._views_key(table_id))
        except (redis_errors.RedisError, OSError) as error:
            raise Unavailable(
                "UNAVAILABLE", "the house round journal is unavailable", {"dependency": "redis"}
            ) from error
        return {bytes(k).decode(): bytes(v).decode() for k, v in views.items()}

    async def tables(self) -> list[str]:
        try:
            members = await self._redis.smembers(self._tables_key)
        except (redis_errors.RedisError, OSError) as error:
            raise Unavailable(
                "UNAVAILABLE", "the house round journal is unavailable", {"dependency": "redis"}
            ) from error
        return sorted(bytes(m).decode() for m in members)
