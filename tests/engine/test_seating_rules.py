"""Seating between hands: button, blinds, entering, sitting out, missed blinds and the dead button."""

from __future__ import annotations

import pytest

from poker_engine.config import PostKind
from poker_engine.errors import SeatingError
from poker_engine.hand import Hand
from poker_engine.seating import Entry, HandPlan, TableState


def table_with(*seats: int, stack: int = 1000, max_seats: int = 6) -> TableState:
    table = TableState.empty(max_seats, 5, 10)
    for seat in seats:
        table = table.sit_down(seat, f"p{seat}", stack)
    return table


def plan(table: TableState, first_button: int | None = None) -> HandPlan:
    result = table.plan_next_hand(first_button)
    assert result is not None
    return result


def positions(hand_plan: HandPlan) -> tuple[int, int | None, int, list[int]]:
    return (
        hand_plan.button,
        hand_plan.small_blind_seat,
        hand_plan.big_blind_seat,
        [s.seat for s in hand_plan.seats],
    )


def test_button_and_blinds_move_one_seat_clockwise_each_hand() -> None:
    first = plan(table_with(0, 2, 5), first_button=0)
    assert positions(first) == (0, 2, 5, [0, 2, 5])
    second = plan(first.table_after)
    assert positions(second) == (2, 5, 0, [0, 2, 5])
    third = plan(second.table_after)
    assert positions(third) == (5, 0, 2, [0, 2, 5])


def test_a_hand_needs_at_least_two_eligible_players() -> None:
    assert table_with(3).plan_next_hand() is None
    assert table_with(1, 3).sit_out(1).plan_next_hand() is None


def test_player_with_no_chips_is_not_dealt_in() -> None:
    table = plan(table_with(0, 1, 2), first_button=0).table_after.set_stack(1, 0)
    assert 1 not in [s.seat for s in plan(table).seats]


def test_new_player_waits_for_the_big_blind_by_default() -> None:
    started = plan(table_with(0, 2, 5), first_button=0).table_after
    table = started.sit_down(3, "late", 1000)
    hands = []
    for _ in range(3):
        next_plan = plan(table)
        hands.append(positions(next_plan))
        table = next_plan.table_after
    assert hands[0][3] == [0, 2, 5]
    assert hands[1][3] == [0, 2, 5]
    assert hands[2] == (0, 2, 3, [0, 2, 3, 5])  # enters when the big blind reaches seat 3


def test_new_player_may_post_a_big_blind_to_enter_at_once() -> None:
    started = plan(table_with(0, 2, 5), first_button=0).table_after
    next_plan = plan(started.sit_down(3, "late", 1000, Entry.POST_NOW))
    assert [s.seat for s in next_plan.seats] == [0, 2, 3, 5]
    assert [(p.seat, p.kind) for p in next_plan.extra_posts] == [(3, PostKind.EXTRA_BIG_BLIND)]
    hand = Hand(next_plan.hand_config(tuple(range(52)), step=5))
    assert hand.total_contributed[3] == 10


def test_sitting_out_player_is_not_dealt_and_owes_the_big_blind_it_missed() -> None:
    table = plan(table_with(0, 1, 2, 3), first_button=0).table_after.sit_out(3)  # blinds were 1 and 2
    missed = plan(table)
    assert positions(missed) == (1, 2, 0, [0, 1, 2])  # the big blind passed seat 3
    back = missed.table_after.sit_in(3, Entry.POST_NOW)
    returned = plan(back)
    assert 3 in [s.seat for s in returned.seats]
    assert [(p.seat, p.kind) for p in returned.extra_posts] == [(3, PostKind.EXTRA_BIG_BLIND)]


def test_missed_small_and_big_blind_are_paid_big_live_and_small_dead() -> None:
    table = plan(table_with(0, 1, 2, 3), first_button=0).table_after  # button 0, blinds 1 and 2
    table = table.sit_out(2)
    hands = []
    for _ in range(4):
        next_plan = plan(table)
        hands.append(positions(next_plan))
        table = next_plan.table_after
    # Seat 2 was the small-blind position (dead small blind), then the big blind passed it.
    assert hands[0] == (1, None, 3, [0, 1, 3])
    player = table.player_at(2)
    assert player is not None
    assert player.owes_small_blind
    assert player.owes_big_blind
    returned = plan(table.sit_in(2, Entry.POST_NOW))
    kinds = [(p.seat, p.kind) for p in returned.extra_posts]
    assert returned.big_blind_seat == 0
    assert kinds == [(2, PostKind.EXTRA_BIG_BLIND), (2, PostKind.DEAD_SMALL_BLIND)]
    hand = Hand(returned.hand_config(tuple(range(52))))
    assert hand.total_contributed[2] == 15
    assert hand.config.small_blind_seat == 3


def test_dead_button_when_the_small_blind_leaves_nobody_skips_the_big_blind() -> None:
    first = plan(table_with(0, 1, 2, 3), first_button=0)  # button 0, blinds 1 and 2
    table = first.table_after.stand_up(1)
    dead = plan(table)
    # Big blind moves forward to 3; seat 2 (last big blind) posts the small; the button is the empty
    # seat 1 where the small blind was.
    assert positions(dead) == (1, 2, 3, [0, 2, 3])
    hand = Hand(dead.hand_config(tuple(range(52))))
    assert hand.actor_seat == 0
    assert positions(plan(dead.table_after)) == (2, 3, 0, [0, 2, 3])


def test_dead_small_blind_when_the_last_big_blind_leaves() -> None:
    first = plan(table_with(0, 1, 2, 3), first_button=0)
    dead = plan(first.table_after.stand_up(2))
    assert positions(dead) == (1, None, 3, [0, 1, 3])
    hand = Hand(dead.hand_config(tuple(range(52))))
    assert [e.seat for e in hand.events if e.kind == "BLIND_POSTED"] == [3]  # type: ignore[union-attr]


def test_going_heads_up_the_button_posts_the_small_blind_and_nobody_posts_big_twice() -> None:
    first = plan(table_with(0, 1, 2), first_button=0)  # button 0, blinds 1 and 2
    heads_up = plan(first.table_after.stand_up(0))
    assert positions(heads_up) == (2, 2, 1, [1, 2])
    again = plan(heads_up.table_after)
    assert positions(again) == (1, 1, 2, [1, 2])


def test_from_heads_up_to_three_handed_button_sits_before_the_small_blind() -> None:
    heads_up = plan(table_with(1, 2), first_button=2)
    assert positions(heads_up) == (2, 2, 1, [1, 2])
    joined = plan(heads_up.table_after.sit_down(5, "new", 1000, Entry.POST_NOW))
    button, small, big, dealt = positions(joined)
    assert (small, big, dealt) == (1, 2, [1, 2, 5])
    assert button == 5


def test_new_player_at_a_table_that_was_waiting_starts_without_posting() -> None:
    table = table_with(0)
    assert table.plan_next_hand() is None
    started = plan(table.sit_down(4, "second", 500))
    assert started.extra_posts == ()
    assert [s.seat for s in started.seats] == [0, 4]


def test_seat_rules_one_player_per_seat_and_one_seat_per_player() -> None:
    table = table_with(0)
    with pytest.raises(SeatingError) as caught:
        table.sit_down(0, "other", 100)
    assert caught.value.reason == "SEAT_TAKEN"
    with pytest.raises(SeatingError) as caught:
        table.sit_down(1, "p0", 100)
    assert caught.value.reason == "ALREADY_SEATED"
    with pytest.raises(SeatingError):
        TableState.empty(11, 5, 10)
