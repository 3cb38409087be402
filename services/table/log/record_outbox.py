"""The outbox of settled hands' records: durable from the settlement until history acknowledged them.

Once the cashier has settled a hand, its record must reach history even if the shard dies first
(`kill -9`, a lost lease): the table keeps the record here before it moves on, the shard's history
queue drops it once `RecordHand` answered, and a table that opens (the restarted shard, or the room's
new owner) sends again whatever its table id still has here. History answers a resent record
`already_recorded`, so a record sent twice is stored once.

`RedisOutbox`: one hash per table (`<prefix>table-unrecorded:<table_id>`, hand id -> record), shared
by every shard as the hand logs are. `FileOutbox`: the single shard without Redis, append-only JSON
lines fsynced before the table goes on, compacted when the shard starts. `MemoryOutbox`: tests and
processes that keep nothing across restarts.
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any, Protocol

from redis import exceptions as redis_errors

from service_runtime.errors import Unavailable
from services.table.log.json_lines_file import JsonLinesFile


class RecordOutbox(Protocol):
    async def keep(self, table_id: str, hand_id: str, record: bytes) -> None:
        """Store the settled hand's record durably (before the table deals the next hand)."""

    async def kept(self, table_id: str) -> dict[str, bytes]:
        """The records of the table that history has not acknowledged yet, by hand id."""

    async def done(self, table_id: str, hand_id: str) -> None:
        """History stored the record: forget it."""


class MemoryOutbox:
    def __init__(self) -> None:
        self._records: dict[str, dict[str, bytes]] = {}

    async def keep(self, table_id: str, hand_id: str, record: bytes) -> None:
        self._records.setdefault(table_id, {})[hand_id] = record

    async def kept(self, table_id: str) -> dict[str, bytes]:
        return dict(self._records.get(table_id, {}))

    async def done(self, table_id: str, hand_id: str) -> None:
        self._records.get(table_id, {}).pop(hand_id, None)


# A long run appends two lines per hand; the file is rewritten with the open records this often.
COMPACT_AFTER_LINES = 2_000


class FileOutbox(MemoryOutbox):
    """JSON lines `{"op": "keep"|"done", "table_id", "hand_id", "record"}`; the open ones survive."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._file = JsonLinesFile(path, compact_after=COMPACT_AFTER_LINES, snapshot=self._open_lines)
        self._lock = asyncio.Lock()
        for entry in self._file.read():
            try:
                table_id, hand_id = str(entry["table_id"]), str(entry["hand_id"])
                if entry["op"] == "keep":
                    self._records.setdefault(table_id, {})[hand_id] = base64.b64decode(entry["record"])
                else:
                    self._records.get(table_id, {}).pop(hand_id, None)
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line of a killed process: its table never went on
        self._file.compact()

    def _open_lines(self) -> list[str]:
        # Only the open records are ever read back: the rewrite holds them, not the history.
        return [
            _line("keep", table_id, hand_id, record)
            for table_id, records in self._records.items()
            for hand_id, record in records.items()
        ]

    def _write(self, line: str, sync: bool) -> None:
        self._file.write(line, sync=sync)

    async def keep(self, table_id: str, hand_id: str, record: bytes) -> None:
        # Every change of the open records happens under the lock, before the line is written, so a
        # compaction (in the writer thread, under the same lock) sees exactly what the file holds.
        async with self._lock:
            await super().keep(table_id, hand_id, record)
            await asyncio.to_thread(self._write, _line("keep", table_id, hand_id, record), True)

    async def done(self, table_id: str, hand_id: str) -> None:
        # Not synced: a "done" lost with the process only means the record is sent once more.
        async with self._lock:
            await super().done(table_id, hand_id)
            await asyncio.to_thread(self._write, _line("done", table_id, hand_id, b""), False)

    def close(self) -> None:
        self._file.close()


def _line(op: str, table_id: str, hand_id: str, record: bytes) -> str:
    entry = {"op": op, "table_id": table_id, "hand_id": hand_id}
    if op == "keep":
        entry["record"] = base64.b64encode(record).decode()
    return json.dumps(entry, sort_keys=True) + "\n"


class RedisOutbox:
    def __init__(self, client: Any, *, prefix: str = "poker:") -> None:
        self._redis = client
        self._prefix = prefix

    def _key(self, table_id: str) -> str:
        return f"{self._prefix}table-unrecorded:{table_id}"

    async def keep(self, table_id: str, hand_id: str, record: bytes) -> None:
        try:
            await self._redis.hset(self._key(table_id), hand_id, record)
        except redis_errors.RedisError as error:
            raise Unavailable(
                "UNAVAILABLE", "the record outbox is unavailable", {"dependency": "redis"}
            ) from error

    async def kept(self, table_id: str) -> dict[str, bytes]:
        try:
            rows = await self._redis.hgetall(self._key(table_id))
        except redis_errors.RedisError as error:
            raise Unavailable(
                "UNAVAILABLE", "the record outbox is unavailable", {"dependency": "redis"}
            ) from error
        return {bytes(k).decode(): bytes(v) for k, v in rows.items()}

    async def done(self, table_id: str, hand_id: str) -> None:
        try:
            await self._redis.hdel(self._key(table_id), hand_id)
        except redis_errors.RedisError as error:
            raise Unavailable(
                "UNAVAILABLE", "the record outbox is unavailable", {"dependency": "redis"}
            ) from error
