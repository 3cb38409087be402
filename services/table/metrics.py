"""The table shard's own figures for Prometheus: hands, actions, clocks, presence, streams, queues,
house rounds and the house bank against its cover.

The table code calls the named functions below at the points where a thing happens (one line
each), so the hand path stays free of metric plumbing; figures that are a state rather than an
event (the oldest hand waiting for its settlement, the after-hand queues, the lease) are read at
scrape time from the shards registered with `watch_shard`. Labels take values from small fixed
sets only: the room's variant and game, an action kind, a reason or outcome, a pool name, the
shard id; never a table, hand or player id.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from poker.common.v1 import common_pb2
from service_runtime.metrics import HUMAN_BUCKETS

hands_started = Counter("poker_hands_started_total", "Cash-table hands dealt, by variant.", ("variant",))
hands_settled = Counter(
    "poker_hands_settled_total",
    "Cash-table hands the cashier acknowledged as settled, by variant.",
    ("variant",),
)
hands_voided = Counter(
    "poker_hands_voided_total",
    "Hands ended without a settlement (every chip back where it was), by reason.",
    ("reason",),
)
hands_continued = Counter(
    "poker_hands_continued_total",
    "Hands a previous owner of the table left running (its shard died, was fenced or let the room go) "
    "that this shard took over from their log and went on with.",
)
rooms_handed_over = Counter(
    "poker_table_rooms_handed_over_total",
    "Rooms this shard released to another (a drain, or rendezvous hashing), by how: between hands "
    "(nothing voided) or at the drain's bound (the hands still running are the next owner's to go on with).",
    ("how",),
)
actions = Counter("poker_actions_total", "Player actions the table accepted, by kind.", ("action",))
timeouts = Counter(
    "poker_action_timeouts_total", "Turns the clock acted for the player (check, else fold; rules 9)."
)
time_to_act = Histogram(
    "poker_time_to_act_seconds",
    "From the start of a player's turn to the action the table accepted.",
    buckets=HUMAN_BUCKETS,
)
time_bank_used = Histogram(
    "poker_time_bank_used_seconds",
    "Time-bank seconds a turn used (the part past the free action time; rules 9).",
    buckets=HUMAN_BUCKETS,
)
reconnects = Counter("poker_player_reconnects_total", "Seated players who came back within the seat reserve.")
seats_expired = Counter(
    "poker_seats_expired_total",
    "Seats removed for absence (SEAT_RESERVE_EXPIRED, SIT_OUT_EXPIRED) and cashed out.",
    ("reason",),
)
streams_open = Gauge(
    "poker_table_streams",
    "Open table streams: seated players' and waiting watchers', and spectators'.",
    ("kind",),
)
stream_queue_depth = Histogram(
    "poker_table_stream_queue_depth",
    "Updates waiting in a stream's queue when a new one is offered.",
    ("kind",),
    buckets=(0, 1, 2, 4, 8, 16, 32, 64, 128, 256),
)
stream_updates_dropped = Counter(
    "poker_table_stream_updates_dropped_total",
    "Updates a stream too slow to keep up lost (it got the table as it is now instead).",
    ("kind",),
)
settlement_seconds = Histogram(
    "poker_settlement_seconds",
    "From the end of a hand to the cashier's acknowledgement of its settlement.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
)
house_rounds = Counter(
    "poker_house_rounds_total", "House-game rounds ended, by game and outcome.", ("game", "outcome")
)
house_rounds_resumed = Counter(
    "poker_house_rounds_resumed_total",
    "Dealt house-game rounds a table resumed from the journal as it opened (a restart or a takeover).",
    ("game",),
)
house_bank_balance = Gauge(
    "poker_house_bank_balance_chips",
    "The house bank's free balance (what no open round reserved) the shard read last, by pool.",
    ("pool",),
)
house_jackpot_balance = Gauge(
    "poker_house_jackpot_balance_chips", "The jackpot balance the shard read last, by pool.", ("pool",)
)
house_bank_reserved = Gauge(
    "poker_house_bank_reserved_chips",
    "What the pool's open house rounds (every table and shard) have reserved from the house bank, as"
    " the shard read it last from the cashier's ledger, by pool.",
    ("pool",),
)
house_bank_minimum = Gauge(
    "poker_house_bank_minimum_chips",
    "The bank balance below which no new house round starts (POKER_TABLE_HOUSE_BANK_MINIMUM).",
)


def pool_name(pool: int) -> str:
    return common_pb2.ChipPool.Name(pool).removeprefix("CHIP_POOL_") if pool else "UNSPECIFIED"  # type: ignore[arg-type]


# ------------------------------------------------------------------ events (one call each)


def hand_started(variant: str) -> None:
    hands_started.labels(variant).inc()


_hands_over: dict[str, float] = {}


def hand_over(table_id: str) -> None:
    """The hand's last action: its settlement is due from now (settlement lag)."""
    _hands_over.setdefault(table_id, time.monotonic())


def hand_settled(table_id: str, variant: str) -> None:
    hands_settled.labels(variant).inc()
    over = _hands_over.pop(table_id, None)
    if over is not None:
        settlement_seconds.observe(time.monotonic() - over)


def settlement_dropped(table_id: str) -> None:
    """The table waits no more for the settlement of its finished hand (voided, or the table stopped
    and the hand goes on where it opens next): it leaves the settlement lag."""
    _hands_over.pop(table_id, None)


def hand_continued() -> None:
    hands_continued.inc()


def hand_voided(reason: str) -> None:
    hands_voided.labels(reason).inc()


def room_handed_over(*, at_bound: bool) -> None:
    rooms_handed_over.labels("at_bound" if at_bound else "between_hands").inc()


def action_accepted(action: str, turn_seconds: float | None) -> None:
    actions.labels(action).inc()
    if turn_seconds is not None:
        time_to_act.observe(turn_seconds)


def turn_timed_out() -> None:
    timeouts.inc()


def time_bank_spent(seconds: float) -> None:
    if seconds > 0:
        time_bank_used.observe(seconds)


def player_reconnected() -> None:
    reconnects.inc()


def seat_expired(reason: str) -> None:
    seats_expired.labels(reason).inc()


def stream_opened(kind: str) -> None:
    streams_open.labels(kind).inc()


def stream_closed(kind: str) -> None:
    streams_open.labels(kind).dec()


def update_offered(kind: str, depth: int) -> None:
    stream_queue_depth.labels(kind).observe(depth)


def update_dropped(kind: str) -> None:
    stream_updates_dropped.labels(kind).inc()


def house_round_ended(game: str, outcome: str) -> None:
    house_rounds.labels(game, outcome).inc()


def house_round_resumed(game: str) -> None:
    house_rounds_resumed.labels(game).inc()


def house_balances_read(pool: int, bank: int, jackpot: int, reserved: int) -> None:
    house_bank_balance.labels(pool_name(pool)).set(bank)
    house_jackpot_balance.labels(pool_name(pool)).set(jackpot)
    house_bank_reserved.labels(pool_name(pool)).set(reserved)


# ------------------------------------------------------------------ states (read at scrape time)


class _Queue(Protocol):
    def __len__(self) -> int: ...

    def oldest_age(self) -> float: ...


@dataclass
class WatchedShard:
    """What the collector reads of one shard at scrape time."""

    shard_id: str
    lease_held: Callable[[], bool]
    open_tables: Callable[[], dict[str, int]]
    queues: dict[str, _Queue]


class _ShardCollector(Collector):
    """Figures of the live shards of this process, by shard id."""

    def __init__(self) -> None:
        self.shards: list[WatchedShard] = []

    def collect(self) -> Iterator[GaugeMetricFamily]:
        lease = GaugeMetricFamily(
            "poker_table_shard_lease_held",
            "1 while the shard holds its lease in the registry (always 1 without Redis), else 0.",
            labels=("shard",),
        )
        tables = GaugeMetricFamily(
            "poker_table_open_tables", "Tables open on the shard, by kind.", labels=("shard", "kind")
        )
        depth = GaugeMetricFamily(
            "poker_table_after_hand_queue_jobs",
            "Settled hands waiting for their seed reveal or their record to reach history.",
            labels=("shard", "queue"),
        )
        lag = GaugeMetricFamily(
            "poker_table_after_hand_lag_seconds",
            "Age of the oldest job in an after-hand queue (record-outbox lag for `history`).",
            labels=("shard", "queue"),
        )
        pending = GaugeMetricFamily(
            "poker_settlement_pending_seconds",
            "How long the oldest finished hand of this process has waited for its settlement (0: none).",
        )
        for shard in list(self.shards):
            shard_id = shard.shard_id
            lease.add_metric([shard_id], 1.0 if shard.lease_held() else 0.0)
            for kind, count in shard.open_tables().items():
                tables.add_metric([shard_id, kind], count)
            for name, queue in shard.queues.items():
                depth.add_metric([shard_id, name], len(queue))
                lag.add_metric([shard_id, name], queue.oldest_age())
        now = time.monotonic()
        pending.add_metric([], max((now - t for t in list(_hands_over.values())), default=0.0))
        yield from (lease, tables, depth, lag, pending)

    def describe(self) -> Iterator[GaugeMetricFamily]:
        # Names only (no shard registered yet at import): the registry checks them for duplicates.
        for name in (
            "poker_table_shard_lease_held",
            "poker_table_open_tables",
            "poker_table_after_hand_queue_jobs",
            "poker_table_after_hand_lag_seconds",
            "poker_settlement_pending_seconds",
        ):
            yield GaugeMetricFamily(name, name)


_SHARDS = _ShardCollector()
REGISTRY.register(_SHARDS)


def watch_shard(shard: WatchedShard, bank_minimum: int) -> Callable[[], None]:
    """Report `shard`'s states (lease, tables, after-hand queues) until the returned call."""
    _SHARDS.shards.append(shard)
    house_bank_minimum.set(bank_minimum)

    def forget() -> None:
        if shard in _SHARDS.shards:
            _SHARDS.shards.remove(shard)

    return forget
