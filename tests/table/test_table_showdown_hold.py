"""The showdown stays on the table (issue 36): a hand that ended with cards shown is held for
`POKER_TABLE_SHOWDOWN_SECONDS` before the next hand's countdown begins, and every view meanwhile is
that hand's: the board, the cards shown at the seats, each pot's award and the winning hand's words.
A hand won by a fold is not held (nothing to see). In-process, with the stand-ins of fakes.py."""

from __future__ import annotations

import asyncio

from poker.table.v1 import table_pb2
from services.table.cash.actor import TableActor
from services.table.ports.clock import SimulatedClock
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


async def all_in_and_call(actor: TableActor, hand_id: str) -> None:
    """The first to act goes all-in, the other calls: a showdown where one of them (unless they split)
    loses every chip."""
    for n in range(4):
        view = await view_of(actor, "ann")
        if view.hand_id != hand_id or view.phase != A.TABLE_PHASE_HAND_IN_PROGRESS or not view.to_act_seat:
            return
        player = NAMES[view.to_act_seat]
        own = await view_of(actor, player)
        kind = (
            A.ACTION_KIND_ALL_IN if A.ACTION_KIND_ALL_IN in own.legal_actions.actions else A.ACTION_KIND_CALL
        )
        await actor.call(lambda p=player, k=kind, n=n: actor.act(p, f"in{n}", hand_id, k, 0))
    raise AssertionError("the hand did not end")


async def test_a_player_who_lost_every_chip_at_the_showdown_sees_it_until_the_hold_is_over() -> None:
    """Seen in the browser (a side-pot run): the player who lost everything at a held showdown was
    cashed out as the hand settled, so their page fell to the empty waiting table and never showed the
    showdown they lost. Their seat (and its cards) stays until the hold is over; then the cash-out."""
    # The table's time is simulated: a split hand's 60 s hold passes when the test moves it on (on the
    # wall clock, a split made the next hand wait a minute and the test gave up after ten seconds).
    clock = SimulatedClock()
    cashier = FakeCashier()
    actor = seated_table(cashier, showdown_seconds=60, clock=clock)
    actor.start()
    try:
        seen: set[str] = set()
        for _ in range(10):  # until a hand does not split
            hand = await running_view(actor, frozenset(seen))
            seen.add(hand.hand_id)
            await all_in_and_call(actor, hand.hand_id)
            await settled(cashier, hand.hand_id)
            views = {p: await view_of(actor, p) for p in ("ann", "bob")}
            busted = [p for p, v in views.items() if any(s.player_id == p and s.stack == 0 for s in v.seats)]
            if busted:
                break
            await clock.run_for(61)  # the split hand's hold is over: the next hand deals
        else:
            raise AssertionError("every hand split")
        (loser,) = busted
        # A cash-out would be under way by now (it starts in the same step); the hold has 59 s left.
        await clock.run_for(1.0)
        held = await view_of(actor, loser)
        mine = next(s for s in held.seats if s.player_id == loser)
        assert held.hand_id == hand.hand_id
        assert held.awards
        assert len(mine.hole_cards) == 2
        assert mine.stack == 0
        assert not cashier.cashed_out, "cashed out during the hold"
    finally:
        await actor.stop()


async def test_a_busted_player_is_cashed_out_once_the_hold_is_over() -> None:
    cashier = FakeCashier()
    actor = seated_table(cashier, showdown_seconds=0.2)
    actor.start()
    try:
        seen: set[str] = set()
        for _ in range(10):
            hand = await running_view(actor, frozenset(seen))
            seen.add(hand.hand_id)
            await all_in_and_call(actor, hand.hand_id)
            await settled(cashier, hand.hand_id)
            for _ in range(500):
                if cashier.cashed_out:
                    return
                await asyncio.sleep(0.01)
        raise AssertionError("nobody was cashed out")
    finally:
        await actor.stop()
