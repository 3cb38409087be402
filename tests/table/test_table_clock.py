"""Rules 9 on a fast clock: check-else-fold on expiry, never a call; the time bank is the seat's and
what is left of it stays across hands; the deadline is in the legal actions."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from services.table.cash.views import public_seat
from tests.table.conftest import ServiceProcess, TableWorld, nl_room, table_world, unique, wait_for
from tests.table.players import Player

pytestmark = pytest.mark.postgres

A = table_pb2
ACTION_SECONDS = 0.4
TIME_BANK_SECONDS = 2.0


@pytest.fixture
async def slow_world(backends: dict[str, ServiceProcess]) -> AsyncIterator[TableWorld]:
    async with table_world(
        backends, action_seconds=ACTION_SECONDS, time_bank_seconds=TIME_BANK_SECONDS, countdown_seconds=0.2
    ) as built:
        yield built


async def pair(world: TableWorld) -> tuple[Player, Player]:
    table_id = world.add_room(nl_room(unique("clock")))
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


async def test_timeout_folds_when_a_check_is_not_allowed_and_the_bank_is_spent_for_good(
    slow_world: TableWorld,
) -> None:
    ann, bob = await pair(slow_world)
    view = await ann.until(running)
    first_hand = view.hand_id
    # Heads-up preflop the button (small blind) faces the big blind: no check, so a timeout folds.
    sleeper = ann if view.to_act_seat == ann.seat else bob
    other = bob if sleeper is ann else ann
    turn = await sleeper.my_turn()
    assert turn.legal_actions.HasField("deadline")
    left = turn.legal_actions.deadline.ToNanoseconds() / 1e9 - turn.as_of.ToNanoseconds() / 1e9
    assert ACTION_SECONDS < left <= ACTION_SECONDS + TIME_BANK_SECONDS + 0.1
    await wait_for(lambda: first_hand in slow_world.history.hands, within=10)
    record = slow_world.history.hands[first_hand]
    timed = [a for a in record.actions if a.cause == history_pb2.ACTION_CAUSE_TIMEOUT]
    # History numbers seats as the engine does (from 0); the table shows them from 1.
    assert [(public_seat(a.seat), a.kind) for a in timed] == [(sleeper.seat, "FOLD")]
    # The bank ran out with the timeout and stays spent in the next hand; the other's is whole.
    nxt = await ann.until(lambda v: running(v) and v.hand_id != first_hand)
    assert sleeper.seat_view(nxt, sleeper.seat).time_bank_seconds == 0
    assert other.seat_view(nxt, other.seat).time_bank_seconds == int(TIME_BANK_SECONDS)
    for p in (ann, bob):
        await p.close()


async def test_timeout_checks_when_a_check_is_allowed_never_calls(slow_world: TableWorld) -> None:
    ann, bob = await pair(slow_world)
    view = await ann.until(running)
    hand_id = view.hand_id
    button = ann if view.to_act_seat == ann.seat else bob
    big_blind = bob if button is ann else ann
    await button.my_turn()
    await button.act(A.ACTION_KIND_CALL)
    # The big blind may check: the clock checks for them. Later streets: both sleep, both check.
    await wait_for(lambda: hand_id in slow_world.history.hands, within=20)
    record = slow_world.history.hands[hand_id]
    timed = [a for a in record.actions if a.cause == history_pb2.ACTION_CAUSE_TIMEOUT]
    assert timed
    assert {a.kind for a in timed} == {"CHECK"}
    assert (public_seat(timed[0].seat), timed[0].street) == (big_blind.seat, "PREFLOP")
    for p in (ann, bob):
        await p.close()


async def test_leaving_and_sitting_down_again_keeps_what_was_left_of_the_time_bank(
    slow_world: TableWorld,
) -> None:
    # Rules 9: the unused remainder stays; leaving and coming back is no refill (issue 25 item 3).
    ann, bob = await pair(slow_world)
    view = await ann.until(running)
    first_hand = view.hand_id
    sleeper = ann if view.to_act_seat == ann.seat else bob
    await sleeper.my_turn()  # and let it run out: the bank is spent
    await wait_for(lambda: first_hand in slow_world.history.hands, within=10)
    await sleeper.leave()
    seat = sleeper.seat
    await ann.until(lambda v: all(s.display_name != sleeper.player_id for s in v.seats))
    await sleeper.sit(500, seat=seat)
    back = await ann.until(lambda v: any(s.display_name == sleeper.player_id for s in v.seats))
    assert sleeper.seat_view(back, seat).time_bank_seconds == 0
    for p in (ann, bob):
        await p.close()


async def test_every_watcher_sees_the_clock_of_the_seat_to_act(slow_world: TableWorld) -> None:
    """Whose turn, with its countdown, for everybody at the table (the web client shows it at the
    seat): the deadline is the actor's own, never another field of theirs."""
    ann, bob = await pair(slow_world)
    await ann.until(running)
    actor = ann if ann.view is not None and ann.view.to_act_seat == ann.seat else bob
    other = bob if actor is ann else ann
    turn = await actor.my_turn()
    seen = await other.until(lambda v: v.hand_id == turn.hand_id and v.to_act_seat == actor.seat)
    assert not seen.HasField("legal_actions")
    assert seen.to_act_deadline == turn.legal_actions.deadline
    assert turn.to_act_deadline == turn.legal_actions.deadline
    for p in (ann, bob):
        await p.close()
