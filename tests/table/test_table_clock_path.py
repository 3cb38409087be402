"""A table's clock never waits for another service (issue 42): a player's SitDown or LeaveTable waits
for the lobby and the cashier outside the table, so a turn's deadline fires on time while the
cashier is slow, and the seat it chose is held for it meanwhile (nobody else gets it). In-process,
with the stand-ins of tests/table/fakes.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from poker.table.v1 import table_pb2
from service_runtime.errors import FailedPrecondition, Unavailable
from services.table.ports.dependencies import SeatSession
from tests.table.fakes import FakeCashier
from tests.table.inprocess_table import running_view, seated_table

A = table_pb2


class SlowCashier(FakeCashier):
    """Opens seat sessions and cashes out only once `gate` is set (a cashier that answers late)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()
        self.waiting = 0

    async def _slow(self) -> None:
        self.waiting += 1
        try:
            await self.gate.wait()
        finally:
            self.waiting -= 1

    async def open_seat_session(self, **fields: Any) -> SeatSession:
        await self._slow()
        return await super().open_seat_session(**fields)

    async def cash_out(self, session_id: str) -> int:
        await self._slow()
        return await super().cash_out(session_id)


async def view(actor: Any, player: str) -> table_pb2.TableView:
    """The player's snapshot, bounded: a table stuck in another service's call does not answer."""
    return await asyncio.wait_for(actor.call(lambda: actor.snapshot(player)), timeout=5)  # type: ignore[no-any-return]


async def until(predicate: Any, within: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("not within the bound")
        await asyncio.sleep(0.01)


async def test_a_turn_times_out_on_time_while_a_sit_down_waits_for_the_cashier() -> None:
    cashier = SlowCashier()
    actor = seated_table(cashier, action_seconds=0.3)
    actor.start()
    try:
        first = await running_view(actor)
        cashier.gate.clear()
        sitting = asyncio.create_task(actor.sit_down("cat", "sit-cat", 3, 500, False))
        await until(lambda: cashier.waiting == 1)
        # The player to act does nothing: the clock acts for them while cat's seat is being opened.
        settled: list[str] = []

        async def hand_over() -> bool:
            now = await view(actor, "ann")
            return now.hand_id != first.hand_id or now.phase != A.TABLE_PHASE_HAND_IN_PROGRESS

        for _ in range(1000):
            if await hand_over():
                settled.append(first.hand_id)
                break
            await asyncio.sleep(0.01)
        assert settled, "the turn's clock waited for the cashier"
        assert not sitting.done()
        # The seat the sit-down chose is held for it: nobody else sits there meanwhile.
        with pytest.raises(FailedPrecondition) as taken:
            await actor.sit_down("dan", "sit-dan", 3, 500, False)
        assert taken.value.reason == "SEAT_TAKEN"
        cashier.gate.set()
        seated = await asyncio.wait_for(sitting, timeout=10)
        assert seated.seat == 3
        cats = await view(actor, "cat")
        assert any(s.player_id == "cat" and s.seat == 3 for s in cats.seats)
        # The same request again: its first answer, no second seat session.
        again = await actor.sit_down("cat", "sit-cat", 3, 500, False)
        assert again == seated
        assert [s.player_id for s in cashier.sessions.values()].count("cat") == 1
    finally:
        cashier.gate.set()
        await actor.stop()


async def test_a_sit_down_the_cashier_refuses_frees_the_seat_it_held() -> None:
    cashier = SlowCashier()
    actor = seated_table(cashier)
    actor.start()
    try:
        await running_view(actor)
        cashier.down = True
        with pytest.raises(Unavailable) as refused:
            await actor.sit_down("cat", "sit-cat", 3, 500, False)
        assert refused.value.reason == "UNAVAILABLE"
        cashier.down = False
        seated = await actor.sit_down("dan", "sit-dan", 3, 500, False)
        assert seated.seat == 3
    finally:
        await actor.stop()


async def test_a_turn_times_out_on_time_while_a_leave_waits_for_its_cash_out() -> None:
    cashier = SlowCashier()
    actor = seated_table(cashier, action_seconds=0.3, players=3)
    actor.start()
    try:
        first = await running_view(actor)
        # cat folds at once (its turn or not: leaving mid-hand folds), then ann and bob's hand goes
        # on; the next hand deals without cat. cat's cash-out is slow.
        cashier.gate.clear()
        leaving = asyncio.create_task(actor.leave("cat", "leave-cat"))

        async def hands_after() -> bool:
            now = await view(actor, "ann")
            return now.hand_id not in ("", first.hand_id) and now.phase == A.TABLE_PHASE_HAND_IN_PROGRESS

        for _ in range(1000):
            if await hands_after():
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the table waited for the cash-out")
        cashier.gate.set()
        left = await asyncio.wait_for(leaving, timeout=10)
        assert left.folded_mid_hand
    finally:
        cashier.gate.set()
        await actor.stop()
