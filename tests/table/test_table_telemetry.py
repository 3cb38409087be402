"""The table's figures and traces stay true when a hand does not end by its settlement (issue 26).

A hand the cashier refuses for good is voided (or found settled after all) and the table reads its
seats again: the "settlement pending" gauge must forget it (else PokerSettlementLag pages for a
table that waits for nothing), the settled and voided counters must say what became of it, and its
trace must end (else the next hand's spans join the voided hand's trace). A table stopped while a
hand waits leaves neither behind either. Driven in-process with one table and in-memory stand-ins,
spans recorded by an in-memory exporter.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from prometheus_client import REGISTRY

from poker.common.v1 import common_pb2
from poker.table.v1 import table_pb2
from service_runtime import metrics, tracing
from service_runtime.errors import FailedPrecondition
from services.table import hand_trace
from services.table import metrics as table_metrics
from services.table.actor import TableActor
from tests.table.fakes import ROOM, FakeCashier
from tests.table.inprocess_table import TABLE, running_view, seated_table

A = table_pb2
VARIANT = ROOM.variant.value


class RefusingCashier(FakeCashier):
    """Refuses the settlement of `refuse` for good (ACCOUNT_CLOSED), after applying it when
    `applied_anyway` (the cashier settled the hand after all: a retry's answer, say)."""

    def __init__(self, *, applied_anyway: bool = False) -> None:
        super().__init__()
        self.refuse = ""
        self.applied_anyway = applied_anyway
        self.refused: list[str] = []

    async def settle_hand(self, **fields: Any) -> None:
        if fields["hand_id"] == self.refuse:
            if self.applied_anyway:
                await super().settle_hand(**fields)
            self.refused.append(self.refuse)
            raise FailedPrecondition("ACCOUNT_CLOSED", "the seat session is closed")
        await super().settle_hand(**fields)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracing.configure_tracing("table", exporter=exporter)
    yield exporter
    tracing.shutdown_tracing()


def table_with(cashier: FakeCashier) -> TableActor:
    return seated_table(cashier)


async def fold(actor: TableActor, view: table_pb2.TableView) -> None:
    """The player to act folds: heads-up, the hand is over."""
    player = {1: "ann", 2: "bob"}[view.to_act_seat]
    await actor.call(lambda: actor.act(player, f"fold-{view.hand_id}", view.hand_id, A.ACTION_KIND_FOLD, 0))


def hand_spans(exporter: InMemorySpanExporter, name: str, hand_id: str) -> list[ReadableSpan]:
    return [
        s
        for s in exporter.get_finished_spans()
        if s.name == name and s.attributes is not None and s.attributes.get("poker.hand_id") == hand_id
    ]


def trace_of(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.trace_id


def counters() -> tuple[float, float]:
    return (
        metrics.sample_value("poker_hands_settled_total", {"variant": VARIANT}),
        metrics.sample_value("poker_hands_voided_total", {"reason": "settlement_refused"}),
    )


@pytest.mark.parametrize("applied_anyway", [False, True], ids=["voided", "settled_after_all"])
async def test_a_hand_refused_for_good_leaves_no_pending_settlement_and_its_own_ended_trace(
    spans: InMemorySpanExporter, applied_anyway: bool
) -> None:
    cashier = RefusingCashier(applied_anyway=applied_anyway)
    actor = table_with(cashier)
    actor.start()
    try:
        view = await running_view(actor)
        refused = cashier.refuse = view.hand_id
        settled_before, voided_before = counters()
        await fold(actor, view)
        following = await running_view(actor, frozenset({refused}))
        assert cashier.refused, "the settlement was never refused"
        # Nothing of this table waits for a settlement while its next hand plays (the gauge is the
        # oldest wait of the process, of other tests' tables too: read for this table).
        assert TABLE not in table_metrics._hands_over
        settled, voided = counters()
        # Settled after all: the cashier moved the chips, so it is a settled hand, not a voided one.
        assert (settled - settled_before, voided - voided_before) == ((1, 0) if applied_anyway else (0, 1))
        # The refused hand's trace ended with it (an error unless it settled after all) ...
        (root,) = hand_spans(spans, "hand", refused)
        assert root.status.status_code is (StatusCode.UNSET if applied_anyway else StatusCode.ERROR)
        (play,) = hand_spans(spans, "hand.play", refused)
        assert trace_of(play) == trace_of(root)
        # ... and the next hand is a trace of its own.
        await fold(actor, following)
        for _ in range(500):
            if hand_spans(spans, "hand", following.hand_id):
                break
            await asyncio.sleep(0.01)
        (next_root,) = hand_spans(spans, "hand", following.hand_id)
        assert trace_of(next_root) != trace_of(root)
        assert {trace_of(s) for s in hand_spans(spans, "hand.play", following.hand_id)} == {
            trace_of(next_root)
        }
    finally:
        await actor.stop()


async def test_a_table_stopped_while_its_hand_waits_for_the_cashier_leaves_nothing_pending(
    spans: InMemorySpanExporter,
) -> None:
    cashier = FakeCashier()
    actor = table_with(cashier)
    actor.start()
    stopped = False
    try:
        view = await running_view(actor)
        cashier.down = True  # the settlement waits, retried, until the table stops
        await fold(actor, view)
        for _ in range(500):
            if TABLE in table_metrics._hands_over:
                break
            await asyncio.sleep(0.01)
        assert metrics.sample_value("poker_settlement_pending_seconds") > 0
        await actor.stop()
        stopped = True
        # The hand goes on wherever the table opens next; this process waits for nothing.
        assert TABLE not in table_metrics._hands_over
        (root,) = hand_spans(spans, "hand", view.hand_id)
        assert TABLE not in hand_trace._live
        assert root.end_time is not None
    finally:
        if not stopped:
            await actor.stop()


def test_the_house_bank_figures_are_the_ledgers_as_read() -> None:
    """The bank's free balance and what the pool's open rounds reserved are the cashier's figures
    (issue 44: the cover is a ledger reservation), each read replacing the last: a shard that opened
    no round still reports the pool's reserve, and one whose rounds ended reports what is left."""
    pool = common_pb2.CHIP_POOL_MPX
    labels = {"pool": table_metrics.pool_name(pool)}
    kept = [
        REGISTRY.get_sample_value(name, labels)
        for name in ("poker_house_bank_balance_chips", "poker_house_bank_reserved_chips")
    ]
    try:
        table_metrics.house_balances_read(pool, bank=4_000, jackpot=0, reserved=300)
        assert REGISTRY.get_sample_value("poker_house_bank_reserved_chips", labels) == 300
        assert REGISTRY.get_sample_value("poker_house_bank_balance_chips", labels) == 4_000
        table_metrics.house_balances_read(pool, bank=4_300, jackpot=0, reserved=0)
        assert REGISTRY.get_sample_value("poker_house_bank_reserved_chips", labels) == 0
        assert REGISTRY.get_sample_value("poker_house_bank_balance_chips", labels) == 4_300
    finally:
        table_metrics.house_bank_balance.labels(labels["pool"]).set(kept[0] or 0)
        table_metrics.house_bank_reserved.labels(labels["pool"]).set(kept[1] or 0)
