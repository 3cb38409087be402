"""Property test: any sequence of players coming, going, sitting out and busting between hands always
gives a playable hand plan that obeys the blind rules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from poker_engine.hand import Hand
from poker_engine.seating import Entry, TableState

EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["sit_down", "stand_up", "sit_out", "sit_in", "bust", "play"]),
        st.integers(0, 9),
        st.sampled_from(Entry),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(max_seats=st.integers(2, 10), events=EVENTS)
def test_every_plan_is_playable_and_nobody_posts_the_big_blind_twice_running(
    max_seats: int, events: list[tuple[str, int, Entry]]
) -> None:
    table = TableState.empty(max_seats, 5, 10)
    previous_big: str | None = None
    for number, (kind, raw_seat, entry) in enumerate(events):
        seat = raw_seat % max_seats
        player = table.player_at(seat)
        if kind == "sit_down" and player is None:
            table = table.sit_down(seat, f"p{number}", 500, entry)
        elif kind == "stand_up" and player is not None:
            table = table.stand_up(seat)
        elif kind == "sit_out" and player is not None:
            table = table.sit_out(seat)
        elif kind == "sit_in" and player is not None:
            table = table.sit_in(seat, entry)
        elif kind == "bust" and player is not None:
            table = table.set_stack(seat, 0)
        elif kind == "play":
            plan = table.plan_next_hand()
            playable = [p.seat for p in table.players if p.can_play]
            if plan is None:
                continue
            dealt = [s.seat for s in plan.seats]
            assert len(dealt) >= 2
            assert set(dealt) <= set(playable)
            assert plan.big_blind_seat in dealt
            assert plan.small_blind_seat is None or plan.small_blind_seat in dealt
            assert plan.small_blind_seat != plan.big_blind_seat
            if len(dealt) == 2:
                assert plan.button == plan.small_blind_seat
            else:
                assert plan.button not in (plan.small_blind_seat, plan.big_blind_seat)
            big_player = next(s.player_id for s in plan.seats if s.seat == plan.big_blind_seat)
            # The big blind moves forward: the same player never posts it twice running.
            assert big_player != previous_big
            hand = Hand(plan.hand_config(tuple(range(52)), step=5))
            while not hand.is_over:
                seat_to_act = hand.actor_seat
                assert seat_to_act is not None
                hand.check(seat_to_act) if hand.can_check(seat_to_act) else hand.call(seat_to_act)
            assert hand.result is not None
            table = plan.table_after.apply_result(hand.result)
            previous_big = big_player
