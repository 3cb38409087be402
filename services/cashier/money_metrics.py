"""The cashier's money figures as Prometheus metrics: what moved, and what the house bank holds.

**What moved.** Counters per pool (`money_flow.py` says what each applied operation adds; this
module only counts it), every series created at 0 for both pools at import, so the first purchase
or withdrawal is an increase Prometheus sees. They count in the process that applied the operation:
with several cashier replicas, sum them (`sum by (pool) (rate(...))`).

**What the house bank holds, read at scrape time.** The free bank (what no open house round has
reserved), the reservations (`house:cover:<POOL>`) and the jackpot of both pools are one read of six
rows by primary key, made when Prometheus scrapes, from the ledger of record. Why not the
alternatives: the cashier runs as two or more replicas in production (the HPA's floor), and each
applies only the calls it serves, so a figure kept in the process after each movement would be one
replica's view, as stale as the shards' cached reads it replaces; the audit loop (every minute)
would leave it a minute behind a funding or a settled round. Read at the scrape, every replica's
figure is the ledger's at that moment. A read that fails or takes longer than
`HOUSE_READ_TIMEOUT_SECONDS` leaves the three figures out of that scrape (an alert on them sees no
data, never an old balance taken for a current one) and counts a failed read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence

from prometheus_client import REGISTRY, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from service_runtime.structured_logging import get_logger
from services.cashier.application import Cashier
from services.cashier.ledger import Pool
from services.cashier.money_flow import Figure, Flow

log = get_logger("cashier.metrics")

# Half of Prometheus's default scrape timeout (10 s): the rest of the scrape still fits after it.
HOUSE_READ_TIMEOUT_SECONDS = 5.0
# The reasons a Withdraw call is refused for by the state of the player or the wallet; any other
# reason (none is known today) is counted as OTHER, so the label keeps a fixed set of values.
WITHDRAWAL_REFUSAL_REASONS = ("WITHDRAWAL_HELD_FOR_REVIEW", "FUNDS_LOCKED", "INSUFFICIENT_FUNDS", "OTHER")

purchases = Counter(
    "poker_cashier_purchases_total", "Purchases applied (chips credited), by pool.", ("pool",)
)
purchased_chips = Counter(
    "poker_cashier_purchased_chips_total", "Chips credited to wallets by purchases, by pool.", ("pool",)
)
withdrawals = Counter(
    "poker_cashier_withdrawals_total",
    "Withdrawals applied: the chips left the wallet (burned) for the payments gateway to pay out. The"
    " cashier knows no later state of the payout.",
    ("pool",),
)
withdrawn_chips = Counter(
    "poker_cashier_withdrawn_chips_total", "Chips debited from wallets by withdrawals, by pool.", ("pool",)
)
withdrawal_refusals = Counter(
    "poker_cashier_withdrawal_refusals_total",
    "Withdraw calls refused by the player's or the wallet's state, by reason (each call: a held or"
    " locked request is not recorded and is refused again on each retry; a refusal on funds is recorded"
    " and its retries are refused the same way).",
    ("pool", "reason"),
)
hands_settled = Counter(
    "poker_cashier_hands_settled_total",
    "Hand settlements applied (SettleHand, retries not counted).",
    ("pool",),
)
rake_chips = Counter("poker_cashier_rake_chips_total", "Chips taken as rake by settled hands.", ("pool",))
hand_loss_chips = Counter(
    "poker_cashier_hand_losses_chips_total",
    "Chips the losing seats of settled hands paid to the winners, the rake and the house bank (the sum"
    " of negative net results; the cashier sees net results, not pot contributions).",
    ("pool",),
)
house_funding_chips = Counter(
    "poker_cashier_house_funding_chips_total",
    "Chips the operator put into the house bank or jackpot (kind=in, minted) or took out (kind=out, burned).",
    ("pool", "kind"),
)
house_game_chips = Counter(
    "poker_cashier_house_game_chips_total",
    "Chips moved between players' wallets and the house bank or jackpot: stakes and jackpot contributions"
    " (kind=from_players); wins, jackpot payouts and refunds of rounds never dealt (kind=to_players).",
    ("pool", "kind"),
)
house_balance_reads = Counter(
    "poker_cashier_house_balance_reads_total",
    "Reads of the house balances from the ledger at a scrape, by result (ok, failed).",
    ("result",),
)

_FLOW_SERIES = {
    Figure.PURCHASES: (purchases, ()),
    Figure.PURCHASED_CHIPS: (purchased_chips, ()),
    Figure.WITHDRAWALS: (withdrawals, ()),
    Figure.WITHDRAWN_CHIPS: (withdrawn_chips, ()),
    Figure.HANDS_SETTLED: (hands_settled, ()),
    Figure.RAKE_CHIPS: (rake_chips, ()),
    Figure.HAND_LOSS_CHIPS: (hand_loss_chips, ()),
    Figure.HOUSE_FUNDED_CHIPS: (house_funding_chips, ("in",)),
    Figure.HOUSE_DEFUNDED_CHIPS: (house_funding_chips, ("out",)),
    Figure.HOUSE_GAME_FROM_PLAYERS_CHIPS: (house_game_chips, ("from_players",)),
    Figure.HOUSE_GAME_TO_PLAYERS_CHIPS: (house_game_chips, ("to_players",)),
}
# Every child resolved once (and so created at 0): counting a flow is a dictionary lookup.
_CHILDREN = {
    (figure, pool): counter.labels(pool.value, *labels)
    for figure, (counter, labels) in _FLOW_SERIES.items()
    for pool in Pool
}
for _pool in Pool:
    for _reason in WITHDRAWAL_REFUSAL_REASONS:
        withdrawal_refusals.labels(_pool.value, _reason)
for _result in ("ok", "failed"):
    house_balance_reads.labels(_result)


class MoneyFlowMetrics:
    """The process's `FlowObserver`: counts what the cashier reports."""

    def applied(self, flows: Sequence[Flow]) -> None:
        for flow in flows:
            _CHILDREN[flow.figure, flow.pool].inc(flow.amount)

    def withdrawal_refused(self, pool: Pool, reason: str) -> None:
        label = reason if reason in WITHDRAWAL_REFUSAL_REASONS else "OTHER"
        withdrawal_refusals.labels(pool.value, label).inc()


MONEY_FLOWS = MoneyFlowMetrics()

_HOUSE_FIGURES = (
    ("poker_cashier_house_bank_free_chips", "The house bank's free balance (what no open house round has"
     " reserved) in the cashier's ledger at this scrape, by pool."),
    ("poker_cashier_house_bank_reserved_chips", "What the open house rounds of every table and shard have"
     " reserved from the house bank (house:cover:<POOL>) in the ledger at this scrape, by pool."),
    ("poker_cashier_house_jackpot_chips", "The jackpot's balance in the ledger at this scrape, by pool."),
)  # fmt: skip


class _HouseBalances(Collector):
    """The house balances of the process's cashier, read from its ledger when collected."""

    def __init__(self) -> None:
        self.watched: list[tuple[Cashier, asyncio.AbstractEventLoop]] = []

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families = [GaugeMetricFamily(name, text, labels=("pool",)) for name, text in _HOUSE_FIGURES]
        balances = self._read()
        for pool, figures in (balances or {}).items():
            for family, figure in zip(families, figures, strict=True):
                family.add_metric([pool.value], figure)
        # The families even without samples: their names are known to what checks the alert rules.
        yield from families

    def describe(self) -> Iterator[GaugeMetricFamily]:
        for name, text in _HOUSE_FIGURES:
            yield GaugeMetricFamily(name, text, labels=("pool",))

    def _read(self) -> dict[Pool, tuple[int, int, int]] | None:
        """(free bank, reserved, jackpot) per pool, or None when there is nothing to read or the read
        failed. One cashier per process; a test process hosting several reads the last started."""
        if not self.watched:
            return None
        cashier, loop = self.watched[-1]
        if loop.is_closed():
            house_balance_reads.labels("failed").inc()
            return None
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            # Collected on the cashier's own event loop (a test asking the registry in-process, never
            # the HTTP endpoint's thread): waiting there for the loop would wait for ever.
            return None
        try:
            future = asyncio.run_coroutine_threadsafe(cashier.every_house_balance(), loop)
            try:
                balances = future.result(timeout=HOUSE_READ_TIMEOUT_SECONDS)
            finally:
                future.cancel()
        except Exception as error:
            house_balance_reads.labels("failed").inc()
            log.warning("house balances not read for the metrics", error=type(error).__name__)
            return None
        house_balance_reads.labels("ok").inc()
        return {pool: (bank, reserved, jackpot) for pool, (bank, jackpot, reserved) in balances.items()}


_HOUSE = _HouseBalances()
REGISTRY.register(_HOUSE)


def watch_house_balances(cashier: Cashier, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Read `cashier`'s house balances (on `loop`, where its engine lives) at every scrape until the
    returned call."""
    entry = (cashier, loop)
    _HOUSE.watched.append(entry)

    def forget() -> None:
        if entry in _HOUSE.watched:
            _HOUSE.watched.remove(entry)

    return forget
