"""The house-game round journal of one shard: what a restarted shard needs to resume or refund.

One JSON line per step, flushed and fsynced before the step's effect is answered or sent to the
cashier: a round opened (wagers, commitment, jackpot before), a decision about to be paid, a round
closed (settled or voided). On start the shard reads it back and every round opened and not closed
is resumed (its deck is sealed again, fairness returns the same one, the decisions are replayed) or
refunded, by what the cashier says was applied. `MemoryJournal` is the same without a file
(tests and shards that keep nothing across restarts).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class MemoryJournal:
    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def append(self, entry: dict[str, Any]) -> None:
        self.entries.append(entry)

    def open_rounds(self) -> dict[str, dict[str, Any]]:
        """Every round opened and not closed: its open entry with the decisions logged since."""
        return open_rounds(self.entries)


class FileJournal(MemoryJournal):
    """Append-only JSON lines; compacted to the open rounds when the shard starts."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._path = path
        self._handle: Any = None
        if path.exists():
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        self.entries.append(json.loads(line))
                    except json.JSONDecodeError:
                        # A torn last line of a killed process: the step it wrote was never answered.
                        continue
            self._compact()

    def _compact(self) -> None:
        keep = [e for e in self.entries if e.get("round_id") in open_rounds(self.entries)]
        temporary = self._path.with_suffix(".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            for entry in keep:
                handle.write(json.dumps(entry, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self._path)
        self.entries = keep

    def append(self, entry: dict[str, Any]) -> None:
        if self._handle is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self._path.open("a", encoding="utf-8")
        self._handle.write(json.dumps(entry, sort_keys=True) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())
        # Only the open rounds are ever read back; the closed ones go at the next start.
        super().append(entry)

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
        elif kind == "decision" and round_id in rounds:
            rounds[round_id]["decisions"].append(entry["decision"])
        elif kind == "closed":
            rounds.pop(round_id, None)
    return rounds
