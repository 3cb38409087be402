"""Chips wagered at the cash tables, per pool (issue 40: the figures a poker room runs by): every
settled hand adds what its pots held before rake, and the rake, as its record says; a voided hand adds
nothing. The cashier cannot count this (a settlement carries each seat's net, not what it put in)."""

from __future__ import annotations

import asyncio

from poker.table.v1 import table_pb2
from service_runtime import metrics
from services.table.cash.actor import TableActor
from services.table.cash.settlement import AfterHand
from tests.table.fakes import ROOM, FakeCashier
from tests.table.inprocess_table import running_view, seated_table

LABELS = {"pool": "GRAM", "variant": ROOM.variant.value}


def wagered() -> float:
    return metrics.sample_value("poker_cash_wagered_chips_total", LABELS)


async def _fold(actor: TableActor, view: table_pb2.TableView) -> None:
    player = {1: "ann", 2: "bob"}[view.to_act_seat]
    kind = table_pb2.ACTION_KIND_FOLD
    await actor.call(lambda: actor.act(player, f"fold-{view.hand_id}", view.hand_id, kind, 0))


async def test_every_settled_hand_adds_its_pots_and_rake_to_the_pool() -> None:
    records: list[AfterHand] = []
    actor = seated_table(FakeCashier(), after_hand=records.append)
    before = wagered()
    assert metrics.REGISTRY.get_sample_value("poker_cash_wagered_chips_total", LABELS) is not None
    actor.start()
    try:
        played: set[str] = set()
        for _ in range(3):
            view = await running_view(actor, frozenset(played))
            played.add(view.hand_id)
            await _fold(actor, view)
        for _ in range(500):
            if {job.hand_id for job in records} >= played:
                break
            await asyncio.sleep(0.01)
    finally:
        await actor.stop()
    settled = [job.record for job in records if job.hand_id in played]
    assert len(settled) == 3
    truth = sum(pot.amount + pot.rake for record in settled for pot in record.pots)
    assert truth > 0
    assert wagered() - before == truth
