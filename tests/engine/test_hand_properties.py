"""Property tests: random legal action sequences for 2 to 10 players always end, never make a stack
negative, and conserve chips (final stacks + rake == starting stacks)."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.events import HandEnded, PotAwarded
from poker_engine.hand import Hand, rebuild_hand

MAX_ACTIONS = 400  # far above any real hand: 4 streets x 10 players x a handful of raises each


@st.composite
def hand_configs(draw: st.DrawFn) -> HandConfig:
    count = draw(st.integers(2, 10))
    seats = sorted(draw(st.lists(st.integers(0, 9), min_size=count, max_size=count, unique=True)))
    stacks = draw(st.lists(st.integers(1, 3000), min_size=count, max_size=count))
    variant = draw(st.sampled_from(Variant))
    step = draw(st.sampled_from([1, 5, 25])) if variant is Variant.NO_LIMIT else 1
    return HandConfig(
        variant=variant,
        seats=tuple(SeatConfig(seat, f"p{seat}", stack) for seat, stack in zip(seats, stacks, strict=True)),
        button=draw(st.integers(0, 9)),
        small_blind=step,
        big_blind=2 * step,
        deck=tuple(draw(st.permutations(range(52)))),
        step=step,
        rake=RakeRule(draw(st.integers(0, 500)), draw(st.integers(0, 60))),
    )


def play_randomly(hand: Hand, data: st.DataObject) -> None:
    start_total = sum(seat.stack for seat in hand.config.seats)
    for _ in range(MAX_ACTIONS):
        if hand.is_over:
            return
        legal = hand.legal_actions()
        assert legal is not None
        assert legal.seat == hand.actor_seat
        seat = legal.seat
        choice = data.draw(st.sampled_from(["fold", "check_call", "wager", "all_in", "timeout", "leave"]))
        if choice == "fold":
            hand.fold(seat)
        elif choice == "timeout":
            hand.timeout(seat)
        elif choice == "leave":
            hand.leave(data.draw(st.sampled_from([s for s in hand.seats if hand.in_hand(s)])))
        elif choice == "all_in" and hand.can_all_in(seat):
            hand.all_in(seat)
        elif choice == "wager" and (legal.can_bet or legal.can_raise):
            amounts = list(range(legal.min_to, legal.max_to + 1, legal.step))
            amounts = [a for a in amounts if a % legal.step == 0]
            if legal.all_in_to <= legal.max_to:
                amounts.append(legal.all_in_to)
            to = data.draw(st.sampled_from(amounts))
            assert hand.can_bet(seat, to) or hand.can_raise_to(seat, to)
            hand.bet(seat, to) if legal.can_bet else hand.raise_to(seat, to)
        elif legal.can_check:
            hand.check(seat)
        else:
            hand.call(seat)
        assert all(stack >= 0 for stack in hand.stacks.values())
        if not hand.is_over:
            assert sum(hand.stacks.values()) + sum(hand.total_contributed.values()) == start_total
    raise AssertionError("hand did not end")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=hand_configs(), data=st.data())
def test_random_legal_actions_always_end_with_no_negative_stack_and_chips_conserved(
    config: HandConfig, data: st.DataObject
) -> None:
    hand = Hand(config)
    play_randomly(hand, data)
    result = hand.result
    assert isinstance(result, HandEnded)
    assert all(r.final_stack >= 0 for r in result.results)
    assert (
        sum(r.starting_stack for r in result.results)
        == sum(r.final_stack for r in result.results) + result.rake
    )
    assert result.rake <= config.rake.cap
    awarded = sum(e.amount + e.rake for e in hand.events if isinstance(e, PotAwarded))
    assert awarded == sum(hand.total_contributed.values())  # every chip put in is in exactly one pot


@settings(max_examples=100, deadline=None)
@given(config=hand_configs(), data=st.data())
def test_every_pot_is_won_only_by_players_eligible_for_it(config: HandConfig, data: st.DataObject) -> None:
    hand = Hand(config)
    play_randomly(hand, data)
    for event in hand.events:
        if isinstance(event, PotAwarded):
            assert {seat for seat, _ in event.winners} <= set(event.eligible)
            assert sum(amount for _, amount in event.winners) == event.amount


@settings(max_examples=60, deadline=None)
@given(config=hand_configs(), data=st.data())
def test_a_hand_rebuilt_from_its_record_is_identical(config: HandConfig, data: st.DataObject) -> None:
    hand = Hand(config)
    play_randomly(hand, data)
    rebuilt = rebuild_hand(config, hand.events)
    assert rebuilt.events == hand.events
    assert rebuilt.result == hand.result


@settings(max_examples=100, deadline=None)
@given(config=hand_configs(), data=st.data(), cut=st.integers(0, 12))
def test_a_fork_is_independent_and_plays_like_the_hand(
    config: HandConfig, data: st.DataObject, cut: int
) -> None:
    """`Hand.fork` (what a table plays a decision on until its log has it): playing the fork to the end
    leaves the hand exactly as it was, in every part of its state; the fork starts equal to it."""
    hand = Hand(config)
    for _ in range(cut):
        if hand.is_over:
            break
        legal = hand.legal_actions()
        assert legal is not None
        hand.check(legal.seat) if legal.can_check else hand.call(legal.seat)
    before = copy.deepcopy(vars(hand))
    twin = hand.fork()
    assert vars(twin) == before
    play_randomly(twin, data)
    assert vars(hand) == before
