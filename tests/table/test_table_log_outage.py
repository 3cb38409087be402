"""A decision the hand log could not keep (Redis away for a moment) changed nothing (issue 30).

Found in the fault run: after Redis was killed for 3.5 s and started again, some tables never dealt
again. A decision (a player's action, the clock's timeout) was applied to the hand before its log
entry was appended; the append failed, the caller heard UNAVAILABLE, but the hand had moved on
while the turn's clock still pointed at the seat that had just folded: every wake-up tried to time
that seat out again (IllegalActionError "seat N has folded"), for ever. Driven here in-process with
a log whose next append fails.
"""

from __future__ import annotations

import asyncio

import pytest

from poker.table.v1 import table_pb2
from service_runtime.errors import Unavailable
from services.table.actor import TableActor, Timings
from services.table.chat import ChatGuard
from tests.table.fakes import ROOM, FakeCashier, FakeFairness, FakeRooms, FlakyLog

A = table_pb2
TABLE = f"{ROOM.room_id}.1"


def table_with(log: FlakyLog, action_seconds: float, players: int = 2) -> tuple[TableActor, FakeCashier]:
    cashier = FakeCashier()
    for seat, name in enumerate(("ann", "bob", "cat")[:players], start=1):
        cashier.seat(TABLE, name, seat, 500)
    timings = Timings(
        action_seconds=action_seconds,
        time_bank_seconds=0,
        countdown_seconds=0,
        retry_initial_seconds=0.01,
        retry_max_seconds=0.05,
        command_queue_size=16,
        watch_queue_size=16,
    )
    actor = TableActor(
        TABLE,
        ROOM,
        cashier=cashier,  # type: ignore[arg-type]
        fairness=FakeFairness(),  # type: ignore[arg-type]
        event_log=log,
        after_hand=lambda job: None,
        rooms=FakeRooms(),  # type: ignore[arg-type]
        timings=timings,
        chat=ChatGuard(),
    )
    return actor, cashier


async def running_view(actor: TableActor, exclude: frozenset[str] = frozenset()) -> table_pb2.TableView:
    for _ in range(500):
        async with asyncio.timeout(5):
            view = await actor.call(lambda: actor.snapshot("ann"))
        if view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and view.to_act_seat and view.hand_id not in exclude:
            return view
        await asyncio.sleep(0.01)
    raise AssertionError("no hand running")


async def test_an_action_the_log_refused_leaves_the_hand_as_it_was_and_its_retry_plays_it() -> None:
    log = FlakyLog()
    actor, cashier = table_with(log, action_seconds=30)
    actor.start()
    try:
        view = await running_view(actor)
        player = {1: "ann", 2: "bob", 3: "cat"}[view.to_act_seat]
        log.fail = 1
        with pytest.raises(Unavailable):
            await actor.call(lambda: actor.act(player, "r1", view.hand_id, A.ACTION_KIND_FOLD, 0))
        assert log.refused, "the append was not even tried"
        after = await actor.call(lambda: actor.snapshot(player))
        assert (after.hand_id, after.to_act_seat) == (view.hand_id, view.to_act_seat)
        assert [s.folded for s in after.seats] == [s.folded for s in view.seats]
        # The retry (same request id: an UNAVAILABLE answer is not kept) plays the fold.
        await actor.call(lambda: actor.act(player, "r1", view.hand_id, A.ACTION_KIND_FOLD, 0))
        for _ in range(500):
            if view.hand_id in cashier.settled:
                break
            await asyncio.sleep(0.01)
        assert view.hand_id in cashier.settled
        await running_view(actor, frozenset({view.hand_id}))
    finally:
        await actor.stop()


async def test_a_timeout_the_log_refused_is_taken_again_and_the_table_deals_on() -> None:
    log = FlakyLog()
    # Three players: the refused timeout folds a player and the hand goes on without them.
    actor, cashier = table_with(log, action_seconds=0.05, players=3)
    actor.start()
    try:
        view = await running_view(actor)
        log.fail = 1  # the clock's timeout of the player to act is refused once
        for _ in range(500):
            if log.refused:
                break
            await asyncio.sleep(0.01)
        assert log.refused
        assert log.refused[0][0]["action"] == "TIMEOUT"
        # The table goes on: the hand ends by timeouts, settles, and the next one is dealt.
        for _ in range(1000):
            if view.hand_id in cashier.settled:
                break
            await asyncio.sleep(0.01)
        assert view.hand_id in cashier.settled, "the table is stuck on the refused timeout"
        await running_view(actor, frozenset({view.hand_id}))
    finally:
        await actor.stop()
