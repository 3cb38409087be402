"""An append-only file of JSON lines, read back when the process starts and rewritten with only what
is still open: the durable store of the single shard without Redis (the record outbox, the hands'
log). Each change is a line written (and, when asked, fsynced) before the caller goes on; a torn last
line (a process killed mid-write, whose caller never heard back) is skipped on reading. No I/O but
this file's own; callers keep their state in memory and say what the rewrite holds (`snapshot`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any


class JsonLinesFile:
    def __init__(self, path: Path, *, compact_after: int, snapshot: Callable[[], Iterable[str]]) -> None:
        self._path = path
        self._compact_after = compact_after
        self._snapshot = snapshot
        self._handle: Any = None
        self._lines = 0

    def read(self) -> Iterator[dict[str, Any]]:
        """Every whole line of the file, parsed, in order (none when there is no file yet)."""
        if not self._path.exists():
            return
        with self._path.open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    change = json.loads(line)
                except ValueError:
                    continue  # the torn last line of a killed process
                if isinstance(change, dict):
                    yield change

    def compact(self) -> None:
        """Rewrite the file with the caller's open state (`snapshot`), atomically and synced."""
        self.close()
        temporary = self._path.with_suffix(".tmp")
        self._path.parent.mkdir(parents=True, exist_ok=True)
        with temporary.open("w", encoding="utf-8") as handle:
            for line in self._snapshot():
                handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self._path)
        self._lines = 0

    def write(self, line: str, *, sync: bool) -> None:
        """Append one line (fsynced when `sync`); past `compact_after` lines the file is first
        rewritten with the open state, so a long run does not keep its whole history."""
        self._lines += 1
        if self._lines > self._compact_after:
            self.compact()
        if self._handle is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self._path.open("a", encoding="utf-8")
        self._handle.write(line)
        self._handle.flush()
        if sync:
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
