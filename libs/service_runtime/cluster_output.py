"""What `make run` shows of the services' output (issue 25 item 16): a person's view by default.

Quiet (the default): every warning and error, each service's address once it listens, the lines that
are not log records (a traceback, a crash), and every `summary_seconds` one line of what happened
(hands settled, seats opened and closed, refused calls). Every successful RPC (the table's poll of
`GetMaintenance` every second among them) is counted, not shown. Verbose (`make run VERBOSE=1`,
`poker-cluster --verbose`): every line, as the services write it. Pure: lines in, lines out; the
launcher (`cluster.py`) feeds it and asks for the summary. The launcher runs the services with
POKER_LOG_CALLS=1 (unless set otherwise), so successful calls have lines to count.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

SHOWN_LEVELS = frozenset({"warning", "error", "critical", "exception"})
# Log records a person wants to see even though they are at info.
SHOWN_EVENTS = frozenset({"listening", "shutting down", "stopped"})
# Successful calls that tell what the cluster did, counted for the summary (by method name).
# Each as (one, many): the summary says "1 seat left", "2 seats left".
COUNTED = {
    "SettleHand": ("hand settled", "hands settled"),
    "OpenSeatSession": ("seat taken", "seats taken"),
    "CashOutSeatSession": ("seat left", "seats left"),
    "RecordHand": ("hand recorded", "hands recorded"),
    "PlaceHouseBets": ("house round", "house rounds"),
}
_SKIPPED = ("timestamp", "event", "level", "service", "logger")


@dataclass
class QuietOutput:
    """Filters service log lines and keeps the counts for the periodic summary."""

    verbose: bool = False
    counts: Counter[str] = field(default_factory=Counter)
    # Refused calls by method and answer ("Act FAILED_PRECONDITION NOT_YOUR_TURN"), so the summary
    # says which call was refused and why.
    refused: Counter[str] = field(default_factory=Counter)

    def line(self, text: str) -> str | None:
        """The text to show for one line of a service's output, or None to hide it."""
        if self.verbose:
            return text
        record = _record(text)
        if record is None:
            return text if text.strip() else None  # not a log record: a traceback, a print
        event = str(record.get("event", ""))
        level = str(record.get("level", "info")).lower()
        if event == "rpc":
            method = str(record.get("method", "")).rsplit("/", 1)[-1]
            code = str(record.get("code", ""))
            if code == "OK":
                if method in COUNTED:
                    self.counts[method] += 1
            elif code != "CANCELLED":
                reason = record.get("reason")
                self.refused[" ".join(str(p) for p in (method, code, reason) if p and p != "None")] += 1
        if level in SHOWN_LEVELS or event in SHOWN_EVENTS:
            return _short(level, event, record)
        return None

    def summary(self) -> str | None:
        """One line of what happened since the last summary, or None when nothing did."""
        if self.verbose or not (self.counts or self.refused):
            return None
        parts = [
            f"{count} {COUNTED[method][0 if count == 1 else 1]}"
            for method, count in sorted(self.counts.items())
        ]
        if self.refused:
            total = sum(self.refused.values())
            calls = ", ".join(f"{why} x{count}" for why, count in self.refused.most_common(3))
            more = len(self.refused) - 3
            parts.append(
                f"{total} {'call' if total == 1 else 'calls'} refused ({calls}"
                + (f", {more} more kinds" if more > 0 else "")
                + ")"
            )
        self.counts.clear()
        self.refused.clear()
        return f"cluster: since the last summary: {'; '.join(parts)}"


def _record(text: str) -> dict[str, Any] | None:
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def _short(level: str, event: str, record: dict[str, Any]) -> str:
    details = " ".join(f"{key}={value}" for key, value in record.items() if key not in _SKIPPED and value)
    head = "" if level == "info" else f"{level.upper()} "
    return f"{head}{event}" + (f" {details}" if details else "")
