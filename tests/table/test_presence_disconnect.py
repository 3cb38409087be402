"""Rules 9 and 13 on fast clocks: a seated player whose WatchTable stream ends is disconnected; the
seat and stack are reserved; no new hand and no blind while away; in a running hand the clock checks
or folds for them without their time bank; a new stream within the reserve restores the seat with a
full snapshot (others see the status change); not back in time: removed after the running hand and
cashed out through the cashier; a reconnect storm never stretches the hand clock."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2
from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2, table_pb2_grpc
from services.table.cash.views import public_seat
from tests.table.conftest import AS_TABLE, ServiceProcess, TableWorld, table_world, wait_for
from tests.table.presence_kit import autopilot, come_back, drop, notices, running, seated, status_of

pytestmark = pytest.mark.postgres

A = table_pb2
ACTION_SECONDS = 0.5
TIME_BANK_SECONDS = 3.0


@pytest.fixture
async def fast(backends: dict[str, ServiceProcess]) -> AsyncIterator[TableWorld]:
    async with table_world(
        backends,
        action_seconds=ACTION_SECONDS,
        time_bank_seconds=TIME_BANK_SECONDS,
        countdown_seconds=0.1,
        seat_reserve_seconds=1.5,
    ) as built:
        yield built


@pytest.fixture
async def long_reserve(backends: dict[str, ServiceProcess]) -> AsyncIterator[TableWorld]:
    async with table_world(
        backends,
        action_seconds=ACTION_SECONDS,
        time_bank_seconds=TIME_BANK_SECONDS,
        countdown_seconds=0.1,
        seat_reserve_seconds=60.0,
    ) as built:
        yield built


async def _conserved(world: TableWorld) -> None:
    audit = await world.audit()
    assert audit.balanced, audit


async def test_reserve_kept_reconnect_restores_seat_with_a_full_snapshot_and_others_see_it(
    long_reserve: TableWorld,
) -> None:
    ann, bob = await seated(long_reserve, 2, "back")
    view = await ann.until(running)
    stack = ann.seat_view(view, ann.seat).stack
    await drop(ann)
    away = await bob.until(lambda v: status_of(bob, v, ann.seat) == A.SEAT_STATUS_DISCONNECTED)
    assert ann.seat_view(away, ann.seat).display_name == ann.player_id
    assert notices(bob, "PLAYER_DISCONNECTED")[-1].seat == ann.seat
    first = await come_back(ann)
    # The first message of the new stream is the full view: no event, the seat and stack kept, and,
    # while the hand runs, the player's own cards face up.
    snapshot = ann.messages[first]
    assert not snapshot.HasField("event")
    mine = ann.seat_view(snapshot.view, ann.seat)
    assert mine.player_id == ann.player_id
    assert mine.status != A.SEAT_STATUS_DISCONNECTED
    if snapshot.view.hand_id == view.hand_id and snapshot.view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS:
        assert mine.hole_cards
        assert not any(c.hidden for c in mine.hole_cards)
    else:
        assert mine.stack >= 0
    await bob.until(lambda v: status_of(bob, v, ann.seat) != A.SEAT_STATUS_DISCONNECTED)
    assert notices(bob, "PLAYER_RECONNECTED")[-1].seat == ann.seat
    assert stack > 0
    for p in (ann, bob):
        await p.close()


async def test_reserve_expired_removes_the_player_after_the_running_hand_and_cashes_out(
    fast: TableWorld,
) -> None:
    ann, bob = await seated(fast, 2, "gone")
    view = await ann.until(running)
    await drop(ann)
    # Bob keeps the hand going; ann's turns expire (check or fold) while she is away.
    async with autopilot(bob):
        await bob.until(lambda v: not any(s.display_name == ann.player_id for s in v.seats), within=30)
    # The hand that was running when she dropped was played to its end and settled first.
    await wait_for(lambda: view.hand_id in fast.history.hands, within=10)
    assert notices(bob, "SEAT_RESERVE_EXPIRED")[-1].seat == ann.seat
    await wait_for(lambda: _no_open_session(fast, ann.player_id, view.table_id), within=10)
    # Her stack went back to her wallet (she bought in for 500 of her 1,000 and lost at most blinds).
    assert 500 < await fast.wallet(ann.player_id) <= 1000
    await _conserved(fast)
    await bob.close()


async def _no_open_session(world: TableWorld, player_id: str, table_id: str) -> bool:
    reply = await world.cashier.ListOpenSeatSessions(
        cashier_pb2.ListOpenSeatSessionsRequest(table_id=table_id), metadata=AS_TABLE
    )
    return not any(s.player_id == player_id for s in reply.seat_sessions)


async def test_no_new_hand_and_no_blind_while_disconnected(long_reserve: TableWorld) -> None:
    ann, bob, cat = await seated(long_reserve, 3, "noblind")
    first = await bob.until(running)
    await drop(ann)
    await bob.until(lambda v: status_of(bob, v, ann.seat) == A.SEAT_STATUS_DISCONNECTED)
    dropped_at = len(bob.messages)
    async with autopilot(bob, fold=True), autopilot(cat, fold=True):
        # Three more hands start without her (the big blind passes her seat at least once).
        seen: set[str] = set()
        while len(seen) < 3:
            view = await bob.until(
                lambda v: running(v) and v.hand_id not in seen | {first.hand_id}, within=30
            )
            seen.add(view.hand_id)
            mine = bob.seat_view(view, ann.seat)
            assert not mine.hole_cards, "a disconnected player was dealt in"
            assert mine.status == A.SEAT_STATUS_DISCONNECTED
    blinds = [e for e in notices(bob, "BLIND_POSTED", since=dropped_at) if e.seat == ann.seat]
    hands = {m.view.hand_id for m in bob.messages[dropped_at:] if m.view.hand_id in seen}
    assert hands == seen
    assert blinds == [], "a disconnected player posted a blind"
    for p in (bob, cat):
        await p.close()
    await _conserved(long_reserve)


async def test_disconnected_during_own_turn_the_clock_checks_then_folds_without_the_time_bank(
    long_reserve: TableWorld,
) -> None:
    ann, bob = await seated(long_reserve, 2, "turn")
    view = await ann.until(running)
    # Heads-up the button (small blind) acts first preflop; the big blind may then check.
    button = ann if view.to_act_seat == ann.seat else bob
    big = bob if button is ann else ann
    hand_id = view.hand_id
    await button.my_turn()
    await drop(big)
    await button.act(A.ACTION_KIND_CALL)
    # Preflop the clock checks for the big blind; on the flop the big blind acts first: checked again;
    # then the button bets and the clock folds (never a call).
    flop = await button.until(
        lambda v: v.hand_id == hand_id and len(v.board) == 3 and v.to_act_seat == button.seat
    )
    await button.act(A.ACTION_KIND_BET, flop.legal_actions.min_amount)
    await wait_for(lambda: hand_id in long_reserve.history.hands, within=15)
    record = long_reserve.history.hands[hand_id]
    timed = [
        (public_seat(a.seat), a.street, a.kind)
        for a in record.actions
        if a.cause == history_pb2.ACTION_CAUSE_TIMEOUT
    ]
    assert timed == [(big.seat, "PREFLOP", "CHECK"), (big.seat, "FLOP", "CHECK"), (big.seat, "FLOP", "FOLD")]
    # The time bank is not spent for a disconnected player: back, it is whole.
    await come_back(big)
    after = await big.until(lambda v: v.hand_id != hand_id or v.phase != A.TABLE_PHASE_HAND_IN_PROGRESS)
    assert big.seat_view(after, big.seat).time_bank_seconds == int(TIME_BANK_SECONDS)
    for p in (ann, bob):
        await p.close()
    await _conserved(long_reserve)


async def test_a_reconnect_storm_never_stretches_the_hand_clock(long_reserve: TableWorld) -> None:
    ann, bob = await seated(long_reserve, 2, "storm")
    view = await ann.until(running)
    sleeper = ann if view.to_act_seat == ann.seat else bob
    turn = await sleeper.my_turn()
    deadline = turn.legal_actions.deadline.ToNanoseconds() / 1e9
    stub = table_pb2_grpc.TableServiceStub(long_reserve.table_channel)

    async def storm() -> None:
        # Drop and return as fast as the client can, many streams at once, until the hand moved on.
        while True:
            calls = [
                stub.WatchTable(A.WatchTableRequest(table_id=sleeper.table_id), metadata=sleeper.metadata)
                for _ in range(5)
            ]
            for call in calls:
                await call.read()
            for call in calls:
                call.cancel()
            await asyncio.sleep(0)

    storming = asyncio.create_task(storm())
    try:
        moved = await ann.until(
            lambda v: v.hand_id != view.hand_id or v.to_act_seat != sleeper.seat, within=30
        )
    finally:
        storming.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
            await storming
    assert moved is not None
    await wait_for(lambda: view.hand_id in long_reserve.history.hands, within=15)
    expired = next(
        m.event
        for m in ann.messages
        if m.HasField("event") and m.event.HasField("action") and m.event.action.timed_out
    )
    # The timeout came by the deadline the turn started with (a little scheduling slack allowed).
    assert expired.seat == sleeper.seat
    assert expired.time.ToNanoseconds() / 1e9 <= deadline + 1.0
    for p in (ann, bob):
        await p.close()
    await _conserved(long_reserve)
