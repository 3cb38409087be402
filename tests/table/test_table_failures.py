"""Outages: a cashier that goes away pauses the table with the hand unsettled and loses nothing; a
history outage never stops play; fairness down at sit-down time takes no seat and deals no card."""

from __future__ import annotations

import asyncio
import contextlib

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2
from poker.fairness.v1 import fairness_pb2
from poker.table.v1 import table_pb2
from service_runtime.testing import reason_of
from tests.table.conftest import ADMIN, AS_TABLE, TableWorld, nl_room, unique, wait_for
from tests.table.players import Player

pytestmark = pytest.mark.postgres

A = table_pb2


async def pair(world: TableWorld) -> tuple[Player, Player]:
    table_id = world.add_room(nl_room(unique("fail")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    bob = Player(unique("bob"), world.table_channel, table_id)
    for p in (ann, bob):
        await world.fund(p.player_id, 1000)
        await p.watch()
    await ann.sit(500, seat=1)
    await bob.sit(500, seat=2)
    return ann, bob


def running(view: table_pb2.TableView) -> bool:
    return view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and view.to_act_seat != 0


async def fold_current(players: list[Player], played: tuple[str, ...] = ()) -> str:
    """Fold the running hand (not one of `played`, whose last views may still be on the way)."""
    view = await players[0].until(lambda v: running(v) and v.hand_id not in played)
    actor = next(p for p in players if p.seat == view.to_act_seat)
    await actor.until(lambda v: v.hand_id == view.hand_id and v.to_act_seat == actor.seat)
    await actor.act(A.ACTION_KIND_FOLD, hand_id=view.hand_id)
    return view.hand_id


async def test_cashier_outage_pauses_the_table_and_the_same_settlement_goes_through_later(
    world: TableWorld,
) -> None:
    ann, bob = await pair(world)
    cashier = world.proxies["cashier"]
    view = await ann.until(running)
    cashier.take_down()
    try:
        hand_id = await fold_current([ann, bob])
        assert hand_id == view.hand_id
        paused = await ann.until(lambda v: v.phase == A.TABLE_PHASE_PAUSED)
        assert paused.hand_id == hand_id
        await asyncio.sleep(1.0)
        # No next hand before the settlement is acknowledged.
        assert (await ann.snapshot()).hand_id == hand_id
        assert hand_id not in world.history.hands
        # Sitting down needs the cashier: UNAVAILABLE, and no seat is taken.
        cara = Player(unique("cara"), world.table_channel, ann.table_id)
        with pytest.raises(grpc.aio.AioRpcError) as down:
            await cara.sit(500, seat=3, retry_unavailable=False)
        assert (down.value.code(), reason_of(down.value)) == (grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE")
        assert not any(s.display_name == cara.player_id for s in (await ann.snapshot()).seats)
        # Leaving during the unsettled hand folds nothing more and waits for the settlement.
        assert (await ann.leave()).folded_mid_hand
    finally:
        cashier.bring_up()
    await wait_for(lambda: hand_id in world.history.hands, within=20)
    # Ann's deferred cash-out went through once the hand settled.
    await wait_for(
        lambda: not any(s.display_name == ann.player_id for s in (bob.view or A.TableView()).seats)
    )
    for p in (ann, bob):
        await p.close()
    audit = await world.audit()
    assert all(pool.balanced for pool in audit.pools)


async def test_history_outage_never_stops_play_and_every_record_arrives_after(world: TableWorld) -> None:
    ann, bob = await pair(world)
    world.history.down = True
    played: tuple[str, ...] = ()
    for _ in range(3):
        played = (*played, await fold_current([ann, bob], played))
    await ann.until(lambda v: running(v) and v.hand_id not in played)
    assert not any(h in world.history.hands for h in played)
    world.history.down = False
    await wait_for(lambda: all(h in world.history.hands for h in played), within=20)
    for p in (ann, bob):
        await p.close()


async def test_fairness_outage_deals_no_card_and_play_resumes_after(world: TableWorld) -> None:
    table_id = world.add_room(nl_room(unique("fair")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    bob = Player(unique("bob"), world.table_channel, table_id)
    for p in (ann, bob):
        await world.fund(p.player_id, 1000)
        await p.watch()
    fairness = world.proxies["fairness"]
    fairness.take_down()
    try:
        await ann.sit(500, seat=1)
        await bob.sit(500, seat=2)
        await asyncio.sleep(1.0)
        view = await ann.snapshot()
        assert view.phase != A.TABLE_PHASE_HAND_IN_PROGRESS
        assert not any(c.text for s in view.seats for c in s.hole_cards)
        assert view.seed_commitment == ""
    finally:
        fairness.bring_up()
    view = await ann.until(running, within=20)
    assert len(view.seed_commitment) == 64
    for p in (ann, bob):
        await p.close()


async def test_maintenance_no_new_hands_lets_the_hand_finish_and_starts_none_until_lifted(
    world: TableWorld,
) -> None:
    ann, bob = await pair(world)
    view = await ann.until(running)
    room_id = ann.table_id.rsplit(".", 1)[0]
    world.lobby.no_new_hands.add(room_id)
    await asyncio.sleep(world.settings.maintenance_poll_seconds * 2)
    hand_id = await fold_current([ann, bob])
    assert hand_id == view.hand_id
    await wait_for(lambda: hand_id in world.history.hands)
    paused = await ann.until(lambda v: v.phase == A.TABLE_PHASE_PAUSED)
    await asyncio.sleep(1.0)
    assert (await ann.snapshot()).to_act_seat == 0
    assert paused.phase == A.TABLE_PHASE_PAUSED
    world.lobby.no_new_hands.discard(room_id)
    await ann.until(lambda v: running(v) and v.hand_id != hand_id, within=10)
    for p in (ann, bob):
        await p.close()


async def test_a_new_player_at_a_seat_never_sees_the_previous_occupants_cards(world: TableWorld) -> None:
    ann, bob = await pair(world)
    view = await ann.until(running)
    hand_id = view.hand_id
    # Keep the table between hands (no commitment for the next hand) after this one settles.
    world.proxies["fairness"].take_down()
    try:
        left = await ann.leave()
        assert left.folded_mid_hand
        # Settled (the reveal and the record wait for fairness): ann is cashed out and gone.
        await wait_for(
            lambda: not any(s.display_name == ann.player_id for s in (bob.view or A.TableView()).seats)
        )
        cara = Player(unique("cara"), world.table_channel, ann.table_id)
        await world.fund(cara.player_id, 1000)
        await cara.watch()
        await cara.sit(500, seat=ann.seat)
        view = await cara.snapshot()
        mine = cara.seat_view(view, cara.seat)
        assert view.hand_id == hand_id
        assert list(mine.hole_cards) == []
        assert not any(c.text for m in cara.messages for s in m.view.seats for c in s.hole_cards)
    finally:
        world.proxies["fairness"].bring_up()
    for p in (ann, bob):
        await p.close()


async def test_a_hand_the_cashier_refuses_for_good_is_voided_and_the_table_reads_its_seats_again(
    world: TableWorld,
) -> None:
    """A seat session closed behind the table's back (another copy of the table cashed it out, say):
    the cashier refuses the hand's settlement for good (ACCOUNT_CLOSED). The table must not wait for
    ever with the hand sealed and never ended: the hand is voided (nothing moved), the seats are
    read again from the cashier and play goes on without the closed seat."""
    table_id = world.add_room(nl_room(unique("gone")))
    names = ("ann", "bob", "cara", "dan")
    players = [Player(unique(name), world.table_channel, table_id) for name in names]
    for n, p in enumerate(players):
        await world.fund(p.player_id, 1000)
        await p.watch()
        await p.sit(500, seat=n + 1)
    ann, bob, cara, dan = players
    # A hand cara and dan are dealt into (the first may start before they sat: it settles untouched).
    view = await ann.until(
        lambda v: (
            running(v)
            and all(any(s.display_name == p.player_id and s.hole_cards for s in v.seats) for p in (cara, dan))
        ),
        within=30,
    )
    hand_id = view.hand_id
    # Dan leaves during the hand: his seat is cashed out once it ends, whatever becomes of it.
    assert (await dan.leave()).folded_mid_hand
    sessions = await world.cashier.ListOpenSeatSessions(
        cashier_pb2.ListOpenSeatSessionsRequest(table_id=table_id), metadata=ADMIN
    )
    caras = next(s for s in sessions.seat_sessions if s.player_id == cara.player_id)
    # Each seat's stack as of the last settled hand: an earlier hand (dealt before dan sat, say) may
    # have moved chips between cara and the others; the refused hand must move none.
    before = {s.player_id: 500 + s.stack for s in sessions.seat_sessions}
    await world.cashier.CashOutSeatSession(
        cashier_pb2.CashOutSeatSessionRequest(session_id=caras.session_id), metadata=AS_TABLE
    )
    # Everyone folds to the last player (or the clock acts for them): the hand ends and its
    # settlement is refused. Bounded by the clock, not by a count of tries (a loaded CI run's view
    # between two turns once ended the ten tries early, leaving the hand to the 15 s clock).
    loop = asyncio.get_running_loop()
    give_up = loop.time() + 60
    while loop.time() < give_up:
        current = await ann.snapshot()
        if current.hand_id != hand_id or current.phase != A.TABLE_PHASE_HAND_IN_PROGRESS:
            break
        actor = next((p for p in players if p.seat == current.to_act_seat), None)
        if actor is not None:
            with contextlib.suppress(grpc.aio.AioRpcError):
                await actor.act(A.ACTION_KIND_FOLD, hand_id=hand_id)
        await asyncio.sleep(0.1)

    async def voided() -> bool:
        reply = await world.fairness.GetCommitment(
            fairness_pb2.GetCommitmentRequest(hand_id=hand_id), metadata=ADMIN
        )
        return reply.commitment.state == fairness_pb2.HAND_STATE_VOIDED

    try:
        await wait_for(voided, within=60)
    except AssertionError:
        state = (
            await world.fairness.GetCommitment(
                fairness_pb2.GetCommitmentRequest(hand_id=hand_id), metadata=ADMIN
            )
        ).commitment.state
        settled = await world.cashier.LookupTransfers(
            cashier_pb2.LookupTransfersRequest(transfer_ids=[f"hand:{hand_id}:0"]), metadata=ADMIN
        )
        raise AssertionError(f"hand {hand_id} not voided: state {state}, first transfer {settled}") from None
    # Issue 24: the voided hand was dealt, so ann still gets the openings of the cards she saw.
    reveal = (
        await world.fairness.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=ann.metadata)
    ).reveal
    own = {c.index for s in view.seats if s.player_id == ann.player_id for c in s.hole_cards}
    assert len(own) == 2
    assert own <= {o.card.index for o in reveal.openings}
    after = await ann.until(lambda v: running(v) and v.hand_id != hand_id, within=60)
    assert cara.player_id not in {s.display_name for s in after.seats}
    # Dan asked to leave: the seats read again from the cashier do not seat him again.
    assert dan.player_id not in {s.display_name for s in after.seats}
    assert {ann.player_id, bob.player_id} <= {s.display_name for s in after.seats}
    assert hand_id not in world.history.hands
    # The refused hand moved nothing: cara and dan got back their stacks as they were before it (the
    # rest of their 1,000 stayed in the wallet), every pool balances.
    assert await world.wallet(cara.player_id) == before[cara.player_id]
    assert await world.wallet(dan.player_id) == before[dan.player_id]
    for p in players:
        await p.close()
    audit = await world.audit()
    assert all(pool.balanced for pool in audit.pools)
