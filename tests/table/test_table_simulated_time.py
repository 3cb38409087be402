"""The table on simulated time (services/table/ports/clock.py, issue 42): the shell reads every time
and sets every timer through its clock, so a test moves the time itself: a 30 s turn clock fires at
30 s, not a hair before, however loaded the machine, and the test waits no wall time for it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from poker.table.v1 import table_pb2
from service_runtime.errors import Unavailable
from service_runtime.table_directory import MaintenanceState, MaintenanceSwitches
from services.table.ports.clock import SimulatedClock
from tests.table.fakes import ROOM, FakeCashier
from tests.table.inprocess_table import running_view, seated_table
from tests.table.test_table_clock_path import SlowCashier

A = table_pb2


async def view(actor: Any, player: str) -> table_pb2.TableView:
    return await asyncio.wait_for(actor.call(lambda: actor.snapshot(player)), timeout=5)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------- the clock itself


async def test_timers_fire_in_the_order_of_their_times_each_at_its_time() -> None:
    clock = SimulatedClock(start=100.0)
    fired: list[tuple[str, float]] = []
    clock.call_at(130.0, lambda: fired.append(("b", clock.now())))
    clock.call_at(110.0, lambda: fired.append(("a", clock.now())))
    cancelled = clock.call_at(120.0, lambda: fired.append(("never", clock.now())))
    cancelled.cancel()
    clock.advance(29.0)
    assert fired == [("a", 110.0)]
    assert clock.now() == 129.0
    clock.advance(1.0)
    assert fired == [("a", 110.0), ("b", 130.0)]


async def test_a_sleep_and_a_timeout_end_only_when_the_time_is_moved() -> None:
    clock = SimulatedClock(start=0.0)
    slept = asyncio.create_task(clock.sleep(5.0))
    blocked: asyncio.Queue[int] = asyncio.Queue()

    async def waits() -> str:
        try:
            async with clock.timeout_at(10.0):
                await blocked.get()
        except TimeoutError:
            return f"timed out at {clock.now()}"
        return "answered"

    waiting = asyncio.create_task(waits())
    await clock.run_for(4.9)
    assert not slept.done()
    assert not waiting.done()
    await clock.run_for(0.1)
    assert slept.done()
    await clock.run_for(4.9)
    assert not waiting.done()
    await clock.run_for(0.2)
    assert waiting.done()
    assert waiting.result() == "timed out at 10.0"


async def test_a_body_that_ends_before_its_deadline_is_not_cut_later() -> None:
    clock = SimulatedClock(start=0.0)
    async with clock.timeout_at(1.0):
        await asyncio.sleep(0)
    await clock.run_for(5.0)  # the timer went with the block: nothing is cancelled now
    assert clock.next_due() is None


def test_ids_come_from_the_seed() -> None:
    first, again, other = SimulatedClock(seed=7), SimulatedClock(seed=7), SimulatedClock(seed=8)
    ids = [first.new_id() for _ in range(3)]
    assert ids == [again.new_id() for _ in range(3)]
    assert ids != [other.new_id() for _ in range(3)]
    assert len(set(ids)) == 3
    assert all(len(i) == 32 for i in ids)


# ---------------------------------------------------------------------- a table on it


async def test_a_turn_clock_fires_at_its_deadline_and_not_before() -> None:
    clock = SimulatedClock()
    actor = seated_table(FakeCashier(), action_seconds=30, clock=clock)
    actor.start()
    try:
        first = await running_view(actor)
        started = clock.now()
        await clock.run_for(29.9)
        still = await view(actor, "ann")
        assert (still.hand_id, still.to_act_seat) == (first.hand_id, first.to_act_seat)
        assert clock.now() - started == pytest.approx(29.9)
        await clock.run_for(0.2)
        after = await view(actor, "ann")
        assert (after.hand_id, after.to_act_seat) != (first.hand_id, first.to_act_seat)
    finally:
        await actor.stop()


async def test_a_turn_clock_fires_at_its_deadline_while_a_sit_down_waits_for_the_cashier() -> None:
    clock = SimulatedClock()
    cashier = SlowCashier()
    actor = seated_table(cashier, action_seconds=30, clock=clock)
    actor.start()
    try:
        first = await running_view(actor)
        cashier.gate.clear()
        sitting = asyncio.create_task(actor.sit_down("cat", "sit-cat", 3, 500, False))
        for _ in range(1000):
            if cashier.waiting:
                break
            await asyncio.sleep(0)
        assert cashier.waiting == 1
        await clock.run_for(29.9)
        still = await view(actor, "ann")
        assert (still.hand_id, still.to_act_seat) == (first.hand_id, first.to_act_seat)
        await clock.run_for(0.2)
        after = await view(actor, "ann")
        assert (after.hand_id, after.to_act_seat) != (first.hand_id, first.to_act_seat)
        # The caller heard UNAVAILABLE after `seat_answer_seconds`; the table still asks the cashier,
        # the seat held, and the retry waits for that same call.
        with pytest.raises(Unavailable):
            await sitting
        retry = asyncio.create_task(actor.sit_down("cat", "sit-cat", 3, 500, False))
        cashier.gate.set()
        seated = await asyncio.wait_for(retry, timeout=10)
        assert seated.seat == 3
        assert [s.player_id for s in cashier.sessions.values()].count("cat") == 1
    finally:
        cashier.gate.set()
        await actor.stop()


async def test_a_scheduled_maintenance_window_stops_new_hands_on_the_tables_clock_and_lifts_itself() -> None:
    """A window the operator scheduled (no new hands from 60 s to 180 s from now) reaches the shard
    as times, which the table reads on its own clock: the hand running when it opens is played out,
    none starts inside it, and play goes on once it closes, with no further word from the lobby."""
    clock = SimulatedClock()
    start = clock.now()
    board = MaintenanceState(
        rooms={
            ROOM.room_id: MaintenanceSwitches(no_new_hands=True, starts_at=start + 60, ends_at=start + 180)
        }
    )
    # As the shard gives its tables the switches (TableShard._switches): the board at the clock's now.
    actor = seated_table(
        FakeCashier(),
        action_seconds=30,
        clock=clock,
        maintenance=lambda room: board.for_room(room, clock.now()),
    )
    actor.start()
    try:
        first = await running_view(actor)
        hands = {first.hand_id}
        # Each hand ends when its first turn times out (heads-up: the small blind folds) after 30 s.
        while clock.now() < start + 60:
            await clock.run_for(1.0)
            hands.add((await view(actor, "ann")).hand_id)
        assert len(hands) >= 2, "hands were dealt before the window"
        await clock.run_for(31.0)  # the hand running at the opening is played out
        paused = await view(actor, "ann")
        assert paused.phase == A.TABLE_PHASE_PAUSED
        inside = set()
        while clock.now() + 1.0 < start + 180:
            await clock.run_for(1.0)
            seen = await view(actor, "ann")
            assert seen.phase == A.TABLE_PHASE_PAUSED, clock.now() - start
            inside.add(seen.hand_id)
        await clock.run_for(2.0)
        after = await view(actor, "ann")
        assert after.phase == A.TABLE_PHASE_HAND_IN_PROGRESS
        assert after.hand_id not in hands | inside
    finally:
        await actor.stop()
