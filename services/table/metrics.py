"""The table shard's own figures for Prometheus: hands, actions, clocks, presence, streams, queues,
house rounds and their stakes and payouts, the house bank against its cover, the players at the
tables.

The table code calls the named functions below at the points where a thing happens (one line
each), so the hand path stays free of metric plumbing; figures that are a state rather than an
event (the oldest hand waiting for its settlement, the after-hand queues, the lease, the players
seated and waiting, the house bank as the shard's live house tables last read it) are read at
scrape time from the shards registered with `watch_shard`, so a figure the shard no longer owns (a
room handed over, a table closed) is gone with it. Labels take values from small fixed sets only:
the room id (the operator's catalogue of rooms), the room's variant and game, an action kind, a
reason or outcome, a pool name, the shard id; never a table, hand or player id.

Every labelled counter whose label values are a known set has each of its series at 0 from the
start (at import; the room's hands as its table opens): Prometheus's increase() sees a series'
first event only when the series existed before it.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from poker.common.v1 import common_pb2
from poker_engine.config import Variant
from poker_engine.events import ActionKind
from service_runtime.metrics import HUMAN_BUCKETS
from services.table.cash.presence import EXPIRY_CODES
from services.table.house.house_round import HouseGame


class VoidReason(enum.StrEnum):
    """Why a dealt cash-table hand ended without a settlement: the only reasons `hand_voided` takes."""

    # The cashier refused the settlement for good (settlement.py).
    SETTLEMENT_REFUSED = "settlement_refused"
    # A previous owner left the hand running and its log does not hold it whole (recovery.py).
    UNFINISHED_AFTER_TAKEOVER = "unfinished_after_takeover"


# A player's own decision as the hand's log names it: the engine's actions, or an all-in.
ACCEPTED_ACTIONS = (*(kind.value for kind in ActionKind), "ALL_IN")
HANDOVERS = ("between_hands", "at_bound")
HOUSE_OUTCOMES = ("settled", "voided")
STREAM_KINDS = ("watcher", "spectator")
PLAYER_STATES = ("seated", "waiting")

hands_started = Counter(
    "poker_hands_started_total", "Cash-table hands dealt, by room and variant.", ("room", "variant")
)
hands_settled = Counter(
    "poker_hands_settled_total",
    "Cash-table hands the cashier acknowledged as settled, by room and variant.",
    ("room", "variant"),
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
house_wagered = Counter(
    "poker_house_wagered_chips_total",
    "What players staked in settled house-game rounds (antes, bets, bonuses, fees, insurance), by game"
    " and pool: with poker_house_paid_chips_total, the hold is 1 - paid / wagered.",
    ("game", "pool"),
)
house_paid = Counter(
    "poker_house_paid_chips_total",
    "What settled house-game rounds paid back to their players (stakes returned and wins, jackpot"
    " shares included, less the jackpot contributions), by game and pool.",
    ("game", "pool"),
)
cash_wagered = Counter(
    "poker_cash_wagered_chips_total",
    "Chips players put into the pots of settled cash-table hands (the pots before rake: what was"
    " bet and called, uncalled bets returned), by pool and variant.",
    ("pool", "variant"),
)
house_bank_minimum = Gauge(
    "poker_house_bank_minimum_chips",
    "The bank balance below which no new house round starts (POKER_TABLE_HOUSE_BANK_MINIMUM).",
)


def pool_name(pool: int) -> str:
    return common_pb2.ChipPool.Name(pool).removeprefix("CHIP_POOL_") if pool else "UNSPECIFIED"  # type: ignore[arg-type]


def game_name(game: HouseGame) -> str:
    return game.name.lower()


POOLS = tuple(pool_name(pool) for pool in common_pb2.ChipPool.values() if pool)
HOUSE_GAMES = tuple(game_name(game) for game in HouseGame)
CASH_VARIANTS = tuple(variant.value for variant in Variant)


def _pre_initialise() -> None:
    """Every series of a known label set, at 0 (the room's hands: `room_opened`)."""
    for reason in VoidReason:
        hands_voided.labels(reason.value)
    for code in EXPIRY_CODES.values():
        seats_expired.labels(code)
    for how in HANDOVERS:
        rooms_handed_over.labels(how)
    for action in ACCEPTED_ACTIONS:
        actions.labels(action)
    for kind in STREAM_KINDS:
        streams_open.labels(kind)
        stream_updates_dropped.labels(kind)
    for game in HOUSE_GAMES:
        house_rounds_resumed.labels(game)
        for outcome in HOUSE_OUTCOMES:
            house_rounds.labels(game, outcome)
        for pool in POOLS:
            house_wagered.labels(game, pool)
            house_paid.labels(game, pool)
    for pool in POOLS:
        for variant in CASH_VARIANTS:
            cash_wagered.labels(pool, variant)


_pre_initialise()


# ------------------------------------------------------------------ events (one call each)


def room_opened(room_id: str, variant: str) -> None:
    """A table of the room opened on this shard: the room's hands are counted from 0."""
    hands_started.labels(room_id, variant)
    hands_settled.labels(room_id, variant)


def hand_started(room_id: str, variant: str) -> None:
    hands_started.labels(room_id, variant).inc()


_hands_over: dict[str, float] = {}


def hand_over(table_id: str) -> None:
    """The hand's last action: its settlement is due from now (settlement lag)."""
    _hands_over.setdefault(table_id, time.monotonic())


def hand_settled(table_id: str, room_id: str, variant: str, pool: int, wagered: int) -> None:
    """The cashier acknowledged the hand; `wagered`: its pots before rake."""
    hands_settled.labels(room_id, variant).inc()
    cash_wagered.labels(pool_name(pool), variant).inc(wagered)
    over = _hands_over.pop(table_id, None)
    if over is not None:
        settlement_seconds.observe(time.monotonic() - over)


def settlement_dropped(table_id: str) -> None:
    """The table waits no more for the settlement of its finished hand (voided, or the table stopped
    and the hand goes on where it opens next): it leaves the settlement lag."""
    _hands_over.pop(table_id, None)


def hand_continued() -> None:
    hands_continued.inc()


def hand_voided(reason: VoidReason) -> None:
    hands_voided.labels(reason.value).inc()


def room_handed_over(*, at_bound: bool) -> None:
    rooms_handed_over.labels(HANDOVERS[1] if at_bound else HANDOVERS[0]).inc()


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


def house_round_settled(game: HouseGame, pool: int, *, wagered: int, paid: int) -> None:
    """A house round settled (counted once, where its record is made): what its player staked in
    it and what it paid back to them."""
    house_rounds.labels(game_name(game), "settled").inc()
    house_wagered.labels(game_name(game), pool_name(pool)).inc(wagered)
    house_paid.labels(game_name(game), pool_name(pool)).inc(paid)


def house_round_voided(game: HouseGame) -> None:
    house_rounds.labels(game_name(game), "voided").inc()


def house_round_resumed(game: HouseGame) -> None:
    house_rounds_resumed.labels(game_name(game)).inc()


# ------------------------------------------------------------------ states (read at scrape time)


class _Queue(Protocol):
    def __len__(self) -> int: ...

    def oldest_age(self) -> float: ...


@dataclass(frozen=True, slots=True)
class BankRead:
    """The pool's house bank as a house table last read it from the cashier ."""

    pool: int
    bank: int  # free: what no open round reserved
    jackpot: int
    reserved: int  # what the pool's open rounds, of every table and shard, reserved
    # When it was read, on the process's own clock (the metrics' age of a read is real time).
    at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class TablePlayers:
    """A cash table's players now: `seated` in play (dealt into the running hand, or between hands
    dealt into the next), `waiting` (sitting out, away, or seated during a hand and waiting for the next)."""

    room: str
    variant: str
    seated: int
    waiting: int


@dataclass
class WatchedShard:
    """What the collector reads of one shard at scrape time (from the scrape's thread: each callable
    only reads references and copies of the shard's state)."""

    shard_id: str
    lease_held: Callable[[], bool]
    open_tables: Callable[[], dict[str, int]]
    queues: dict[str, _Queue]
    # The last bank read of each live house table of the shard (None: it read nothing yet).
    house_banks: Callable[[], Iterable[BankRead | None]] = field(default=lambda: ())
    # The players of each open cash table of the shard.
    players: Callable[[], Iterable[TablePlayers]] = field(default=lambda: ())


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
        players = GaugeMetricFamily(
            "poker_table_players",
            "Players at the shard's open cash tables, by room, variant and state: seated (in play) or"
            " waiting (sitting out, away, or waiting for the next hand).",
            labels=("shard", "room", "variant", "state"),
        )
        bank = GaugeMetricFamily(
            "poker_house_bank_balance_chips",
            "The house bank's free balance (what no open round reserved) as the shard's live house"
            " tables of the pool last read it, by pool (none without such a table).",
            labels=("shard", "pool"),
        )
        jackpot = GaugeMetricFamily(
            "poker_house_jackpot_balance_chips",
            "The jackpot balance as the shard's live house tables of the pool last read it, by pool.",
            labels=("shard", "pool"),
        )
        reserved = GaugeMetricFamily(
            "poker_house_bank_reserved_chips",
            "What the pool's open house rounds (every table and shard) have reserved from the house"
            " bank, as the shard's live house tables of the pool last read it, by pool.",
            labels=("shard", "pool"),
        )
        for shard in list(self.shards):
            shard_id = shard.shard_id
            lease.add_metric([shard_id], 1.0 if shard.lease_held() else 0.0)
            for kind, count in shard.open_tables().items():
                tables.add_metric([shard_id, kind], count)
            for name, queue in shard.queues.items():
                depth.add_metric([shard_id, name], len(queue))
                lag.add_metric([shard_id, name], queue.oldest_age())
            for (room, variant), (seated, waiting) in sorted(_players_by_room(shard.players()).items()):
                players.add_metric([shard_id, room, variant, PLAYER_STATES[0]], seated)
                players.add_metric([shard_id, room, variant, PLAYER_STATES[1]], waiting)
            for pool, read in sorted(_latest_bank_reads(shard.house_banks()).items()):
                bank.add_metric([shard_id, pool_name(pool)], read.bank)
                jackpot.add_metric([shard_id, pool_name(pool)], read.jackpot)
                reserved.add_metric([shard_id, pool_name(pool)], read.reserved)
        now = time.monotonic()
        pending.add_metric([], max((now - t for t in list(_hands_over.values())), default=0.0))
        yield from (lease, tables, depth, lag, pending, players, bank, jackpot, reserved)

    def describe(self) -> Iterator[GaugeMetricFamily]:
        # Names only (no shard registered yet at import): the registry checks them for duplicates.
        for name in (
            "poker_table_shard_lease_held",
            "poker_table_open_tables",
            "poker_table_after_hand_queue_jobs",
            "poker_table_after_hand_lag_seconds",
            "poker_settlement_pending_seconds",
            "poker_table_players",
            "poker_house_bank_balance_chips",
            "poker_house_jackpot_balance_chips",
            "poker_house_bank_reserved_chips",
        ):
            yield GaugeMetricFamily(name, name)


def _players_by_room(tables: Iterable[TablePlayers]) -> dict[tuple[str, str], tuple[int, int]]:
    """(seated, waiting) per room and variant, summed over the room's open tables."""
    rooms: dict[tuple[str, str], tuple[int, int]] = {}
    for table in tables:
        seated, waiting = rooms.get((table.room, table.variant), (0, 0))
        rooms[(table.room, table.variant)] = (seated + table.seated, waiting + table.waiting)
    return rooms


def _latest_bank_reads(reads: Iterable[BankRead | None]) -> dict[int, BankRead]:
    """Per pool, the freshest read among the live house tables that read the bank; a pool none of
    them read (no such table here: closed, or its room handed over) has none."""
    latest: dict[int, BankRead] = {}
    for read in reads:
        if read is not None and (read.pool not in latest or read.at > latest[read.pool].at):
            latest[read.pool] = read
    return latest


_SHARDS = _ShardCollector()
REGISTRY.register(_SHARDS)


def watch_shard(shard: WatchedShard, bank_minimum: int) -> Callable[[], None]:
    """Report `shard`'s states (lease, tables, after-hand queues, players, the house bank as its house
    tables read it) until the returned call."""
    _SHARDS.shards.append(shard)
    house_bank_minimum.set(bank_minimum)

    def forget() -> None:
        if shard in _SHARDS.shards:
            _SHARDS.shards.remove(shard)

    return forget
