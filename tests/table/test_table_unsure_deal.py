"""A deal whose log write answered UNAVAILABLE may be in the log all the same (issue 42; docs/table.md,
"Calls off the clock's path"): the table reads the log back, and while the log cannot say, the seats
hold still, so the hand the log may hold is dealt to exactly the players it was dealt to. An outside
reviewer's cases: a leave in that window cashed the player out between hands and the hand then began
with them (a KeyError, the hand stranded in the log); a sit-down seated a player the hand's seating
did not know."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from poker.table.v1 import table_pb2
from service_runtime.errors import Unavailable
from services.table.log.event_log import LocalEventLog
from tests.table.fakes import FakeCashier
from tests.table.inprocess_table import running_view, seated_table

A = table_pb2


class LossyLog(LocalEventLog):
    """The first deal lands and its answer is lost; the read-back is away until `back()`."""

    def __init__(self) -> None:
        super().__init__()
        self.lose_deal = 1
        self.away = False

    async def append_live(self, room_id: str, table_id: str, hand_id: str, entries: Any) -> None:
        await super().append_live(room_id, table_id, hand_id, entries)
        if self.lose_deal:
            self.lose_deal -= 1
            self.away = True
            raise Unavailable("UNAVAILABLE", "answer lost", {"dependency": "redis"})

    async def live_hand(self, table_id: str) -> str | None:
        if self.away:
            raise Unavailable("UNAVAILABLE", "log away", {"dependency": "redis"})
        return await super().live_hand(table_id)


async def _unsure(actor: Any) -> str:
    for _ in range(500):
        if actor._cycle.deal_unsure:
            return str(actor._cycle._unsure_deal[0].commitment.hand_id)
        await asyncio.sleep(0.01)
    raise AssertionError("the deal never became unsure")


async def test_a_leave_while_the_deal_is_unsure_waits_and_then_folds_in_the_hand() -> None:
    log, cashier = LossyLog(), FakeCashier()
    actor = seated_table(cashier, log, players=3)
    actor.start()
    try:
        hand_id = await _unsure(actor)
        with pytest.raises(Unavailable):
            await asyncio.wait_for(actor.leave("bob", "leave-bob"), timeout=5)
        assert not cashier.cashed_out, "cashed out while the hand may have dealt them in"
        log.away = False
        view = await running_view(actor)
        assert view.hand_id == hand_id  # the log held it: dealt as it was
        left = await asyncio.wait_for(actor.leave("bob", "leave-bob"), timeout=5)
        assert left.folded_mid_hand
    finally:
        await actor.stop()


async def test_a_sit_down_while_the_deal_is_unsure_is_seated_after_it_outside_the_hand() -> None:
    log, cashier = LossyLog(), FakeCashier()
    actor = seated_table(cashier, log, players=3)
    actor.start()
    try:
        hand_id = await _unsure(actor)
        sitting = asyncio.create_task(actor.sit_down("dan", "sit-dan", 4, 500, False))
        await asyncio.sleep(0.2)
        assert not sitting.done()  # held while the log cannot say
        log.away = False
        seated = await asyncio.wait_for(sitting, timeout=10)
        assert seated.seat == 4
        view = await running_view(actor)
        assert view.hand_id == hand_id
        # The engine's seating knows every seated player (dan waits for the next hand).
        assert {p.player_id for p in actor._seats.seating.players} == {"ann", "bob", "cat", "dan"}
    finally:
        await actor.stop()
