"""What a bot run did: hands, actions, errors by reason and call latencies, and the summary it prints."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

# Refusals that follow from a view a moment old (the clock acted, the hand moved on, a seat was taken
# or the room moved to another shard): a bot meets them in normal play. Anything else is unexpected.
EXPECTED_REASONS = frozenset(
    {
        "NOT_YOUR_TURN",
        "HAND_IS_OVER",
        "NO_HAND_IN_PROGRESS",
        "NOT_IN_HAND",
        "NOT_SEATED",
        "ALREADY_SEATED",
        "SEAT_TAKEN",
        "TABLE_FULL",
        "SHARD_NOT_OWNER",
        "SEAT_SESSION_ALREADY_OPEN",
        "UNAVAILABLE",
        "NO_SHARD_AVAILABLE",
        "TABLE_NOT_FOUND",
        # A bot that lost its chips buys more (or stops sitting when it may not).
        "INSUFFICIENT_FUNDS",
        # A house bot's last round resumed at its room's new owner after a move: the bot lets it end
        # and bets again (house_bot.py).
        "ROUND_IN_PROGRESS",
    }
)


def expected(key: str) -> bool:
    """Whether the error `<method> <code> <reason>` is part of normal play. UNAVAILABLE always is: a
    shard that went away (its rooms move) or a service restarting; the bot routes again and retries.
    So is a call past the bot's deadline (a table taking over a room answers slowly for a moment);
    the summary still shows how many there were."""
    method, code, reason = key.split(" ")
    stale = method == "act-stale"  # refused for a state the table had already left (see bot.py)
    # No stream outlives its token: a watch opened with a token ends when it expires, and the bot
    # opens it again with its renewed one. Any other call with an expired token is a bot's fault.
    renewed = method == "watch" and reason == "TOKEN_EXPIRED"
    return stale or renewed or reason in EXPECTED_REASONS or code in ("UNAVAILABLE", "DEADLINE_EXCEEDED")


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of `values` (0 for none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


@dataclass
class RunStats:
    hands: set[str] = field(default_factory=set)
    actions: int = 0
    timeouts_let_run: int = 0
    sits: int = 0
    sit_ins: int = 0  # back from a sit-out the table decided (turns lost to the clock)
    leaves: int = 0
    rejoins: int = 0
    purchases: int = 0
    # House-game rounds played to their settlement, and the chips they staked and paid back.
    house_rounds: int = 0
    house_staked: int = 0
    house_paid_out: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    # Per table, the wall-clock time each table event was first seen by any bot (key: hand id and
    # the event's sequence), and each hand's first sight: the timeline a fault run reads.
    event_times: dict[str, dict[tuple[str, int], float]] = field(default_factory=lambda: defaultdict(dict))
    hand_tables: dict[str, str] = field(default_factory=dict)
    # Each hand's first and last sight in play (a view with the hand in progress), by hand id: a hand
    # seen in play both before a shard's death and after its room's takeover was continued.
    hand_in_play: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Tables whose bots hold their turn (let the clock act) while a fault run sets them, and the last
    # turn held at each: table id -> (hand id, when the table acts for the bot, epoch seconds). A
    # hand waiting for a held turn is in play at its shard until then, whatever the bots' lag.
    hold_turns_at: set[str] = field(default_factory=set)
    held_turns: dict[str, tuple[str, float]] = field(default_factory=dict)
    # Per table, when each message of its stream reached a bot (the first after a takeover is what a
    # player gets first from the room's new owner, whatever it holds).
    message_times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    seconds: float = 0.0

    def saw_event(self, table_id: str, hand_id: str, sequence: int, at: float) -> None:
        self.event_times[table_id].setdefault((hand_id, sequence), at)

    def saw_message(self, table_id: str, at: float) -> None:
        self.message_times[table_id].append(at)

    def first_message_after(self, table_id: str, at: float) -> float | None:
        return next((t for t in self.message_times.get(table_id, ()) if t > at), None)

    def saw_hand_in_play(self, hand_id: str, at: float) -> None:
        first, _ = self.hand_in_play.get(hand_id, (at, at))
        self.hand_in_play[hand_id] = (first, at)

    def events_after(self, table_id: str, at: float) -> list[float]:
        """When the table's events seen after `at` were first seen, in order."""
        return sorted(t for t in self.event_times.get(table_id, {}).values() if t > at)

    def error(self, method: str, code: str, reason: str | None) -> None:
        self.errors[f"{method} {code} {reason or '-'}"] += 1

    def unexpected_errors(self) -> dict[str, int]:
        return {key: n for key, n in self.errors.items() if not expected(key)}

    def latency(self, method: str, seconds: float) -> None:
        self.latencies[method].append(seconds)

    def as_dict(self) -> dict[str, Any]:
        return {
            "hands": len(self.hands),
            "actions": self.actions,
            "timeouts_let_run": self.timeouts_let_run,
            "sits": self.sits,
            "sit_ins": self.sit_ins,
            "leaves": self.leaves,
            "rejoins": self.rejoins,
            "purchases": self.purchases,
            "house_rounds": self.house_rounds,
            "house_staked": self.house_staked,
            "house_paid_out": self.house_paid_out,
            "seconds": round(self.seconds, 3),
            "hands_per_second": round(len(self.hands) / self.seconds, 3) if self.seconds else 0.0,
            "actions_per_second": round(self.actions / self.seconds, 3) if self.seconds else 0.0,
            "errors": dict(sorted(self.errors.items())),
            "unexpected_errors": dict(sorted(self.unexpected_errors().items())),
            "latency_ms": {
                method: {
                    "count": len(values),
                    "p50": round(percentile(values, 0.50) * 1000, 3),
                    "p90": round(percentile(values, 0.90) * 1000, 3),
                    "p99": round(percentile(values, 0.99) * 1000, 3),
                    "max": round(max(values) * 1000, 3),
                }
                for method, values in sorted(self.latencies.items())
                if values
            },
        }

    def summary(self) -> str:
        data = self.as_dict()
        lines = [
            f"hands {data['hands']} ({data['hands_per_second']}/s), actions {data['actions']} "
            f"({data['actions_per_second']}/s) in {data['seconds']} s",
            f"sits {self.sits}, sit-ins {self.sit_ins}, leaves {self.leaves}, rejoins {self.rejoins}, purchases {self.purchases}, "
            f"turns left to the clock {self.timeouts_let_run}",
        ]
        if self.house_rounds:
            lines.append(
                f"house rounds {self.house_rounds}, staked {self.house_staked}, paid out {self.house_paid_out}"
            )
        lines.append("latency ms (count p50 p90 p99 max):")
        for method, row in data["latency_ms"].items():
            lines.append(
                f"  {method:<10} {row['count']:>7} {row['p50']:>9} {row['p90']:>9} {row['p99']:>9} {row['max']:>9}"
            )
        lines.append("errors by reason (method code reason: count):" if self.errors else "errors: none")
        for key, count in sorted(self.errors.items()):
            mark = "" if expected(key) else "  <- unexpected"
            lines.append(f"  {key}: {count}{mark}")
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True)
