"""The showdown stays on the table (issue 36): a hand that ended with cards shown is held for
`POKER_TABLE_SHOWDOWN_SECONDS` before the next hand's countdown begins, and every view meanwhile is
that hand's: the board, the cards shown at the seats, each pot's award and the winning hand's words.
A hand won by a fold is not held (nothing to see). In-process, with the stand-ins of fakes.py."""

from __future__ import annotations

import asyncio

from poker.table.v1 import table_pb2
from services.table.cash.actor import TableActor
from tests.table.fakes import FakeCashier
from tests.table.inprocess_table import running_view, seated_table

A = table_pb2
NAMES = {1: "ann", 2: "bob"}


async def view_of(actor: TableActor, player: str) -> table_pb2.TableView:
    return await asyncio.wait_for(actor.call(lambda: actor.snapshot(player)), timeout=5)


async def play_to_showdown(actor: TableActor, hand_id: str) -> None:
    """Each player checks or calls until the hand is over (heads-up: a showdown)."""
    for n in range(40):
        view = await view_of(actor, "ann")
        if view.hand_id != hand_id or view.phase != A.TABLE_PHASE_HAND_IN_PROGRESS or not view.to_act_seat:
            return
        player = NAMES[view.to_act_seat]
        own = await view_of(actor, player)
        kind = A.ACTION_KIND_CHECK if A.ACTION_KIND_CHECK in own.legal_actions.actions else A.ACTION_KIND_CALL
        await actor.call(lambda p=player, k=kind, n=n: actor.act(p, f"a{n}", hand_id, k, 0))
    raise AssertionError("the hand did not end")


async def settled(cashier: FakeCashier, hand_id: str) -> None:
    for _ in range(500):
        if hand_id in cashier.settled:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not settled")


async def test_a_showdown_is_held_on_the_table_before_the_next_countdown() -> None:
    cashier = FakeCashier()
    actor = seated_table(cashier, showdown_seconds=60)
    actor.start()
    try:
        first = await running_view(actor)
        await play_to_showdown(actor, first.hand_id)
        await settled(cashier, first.hand_id)
        for _ in range(5):
            # Held: the finished hand's view, not the next hand's countdown.
            seen = await view_of(actor, "ann")
            assert seen.hand_id == first.hand_id
            assert seen.phase == A.TABLE_PHASE_BETWEEN_HANDS
            assert len(seen.board) == 5
            assert seen.awards
            assert seen.awards[0].hand_description
            shown = {s.seat: len(s.hole_cards) for s in seen.seats if s.player_id}
            assert shown == {1: 2, 2: 2}, "both hands face up at their seats"
            await asyncio.sleep(0.05)
    finally:
        await actor.stop()


async def test_the_next_hand_comes_once_the_hold_is_over() -> None:
    cashier = FakeCashier()
    actor = seated_table(cashier, showdown_seconds=0.2)
    actor.start()
    try:
        first = await running_view(actor)
        await play_to_showdown(actor, first.hand_id)
        second = await running_view(actor, frozenset({first.hand_id}))
        assert second.hand_id != first.hand_id
    finally:
        await actor.stop()


async def test_a_hand_won_by_a_fold_is_not_held() -> None:
    cashier = FakeCashier()
    actor = seated_table(cashier, showdown_seconds=60)
    actor.start()
    try:
        first = await running_view(actor)
        player = NAMES[first.to_act_seat]
        await actor.call(lambda: actor.act(player, "fold", first.hand_id, A.ACTION_KIND_FOLD, 0))
        second = await running_view(actor, frozenset({first.hand_id}))
        assert second.hand_id != first.hand_id
    finally:
        await actor.stop()
