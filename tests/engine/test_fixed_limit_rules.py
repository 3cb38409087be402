"""Fixed-limit Hold'em (docs/rules/limit-holdem.txt)."""

from __future__ import annotations

import pytest

from poker_engine.actions import Action
from poker_engine.config import Variant
from poker_engine.errors import IllegalActionError
from poker_engine.events import ActionKind, PlayerActed
from tests.engine.conftest import HandBuilder


def test_fixed_limit_blinds_are_half_a_small_bet_and_a_small_bet(make_hand: HandBuilder) -> None:
    hand = make_hand(
        {0: 500, 1: 500, 2: 500}, button=0, variant=Variant.FIXED_LIMIT, small_blind=5, big_blind=10
    )
    legal = hand.legal_actions()
    assert legal is not None
    assert (legal.call_amount, legal.min_to, legal.max_to) == (10, 20, 20)


def test_fixed_limit_cap_of_four_bets_before_the_flop(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 500, 1: 500, 2: 500}, button=0, variant=Variant.FIXED_LIMIT)
    hand.raise_to(0, 20)  # the big blind counts as the first bet: this is the second
    hand.raise_to(1, 30)
    hand.raise_to(2, 40)  # fourth bet: capped
    legal = hand.legal_actions()
    assert legal is not None
    assert legal.seat == 0
    assert legal.can_call
    assert not legal.can_raise
    with pytest.raises(IllegalActionError) as caught:
        hand.raise_to(0, 50)
    assert caught.value.reason == "BETTING_CAPPED"


def test_fixed_limit_cap_of_four_bets_after_the_flop_with_the_big_bet_on_the_turn(
    make_hand: HandBuilder,
) -> None:
    hand = make_hand({0: 500, 1: 500, 2: 500}, button=0, variant=Variant.FIXED_LIMIT)
    hand.call(0)
    hand.call(1)
    hand.check(2)
    hand.bet(1, 10)  # flop: the small bet
    hand.raise_to(2, 20)
    hand.raise_to(0, 30)
    hand.raise_to(1, 40)
    assert not hand.legal_actions().can_raise  # type: ignore[union-attr]
    hand.call(2)
    hand.call(0)
    legal = hand.legal_actions()
    assert legal is not None
    assert (legal.seat, legal.min_to, legal.max_to) == (1, 20, 20)
    with pytest.raises(IllegalActionError) as caught:
        hand.bet(1, 10)
    assert caught.value.reason == "BET_TOO_SMALL"


def test_fixed_limit_bet_without_amount_uses_the_fixed_size(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 500, 1: 500}, button=0, variant=Variant.FIXED_LIMIT)
    events = hand.act(Action(0, ActionKind.RAISE))
    assert isinstance(events[0], PlayerActed)
    assert events[0].to == 20


def test_fixed_limit_all_in_for_less_than_a_bet_makes_a_side_pot(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 15, 1: 500, 2: 500}, button=0, variant=Variant.FIXED_LIMIT)
    hand.raise_to(0, 15)  # all-in short of a full raise
    hand.call(1)
    hand.call(2)
    while not hand.is_over:
        seat = hand.actor_seat
        assert seat is not None
        hand.check(seat) if hand.can_check(seat) else hand.call(seat)
    result = hand.result
    assert result is not None
    assert sum(p.amount for p in result.pots) == 45
    assert sum(r.net for r in result.results) == 0


def test_fixed_limit_allows_ten_seats(make_hand: HandBuilder) -> None:
    hand = make_hand(dict.fromkeys(range(10), 200), button=9, variant=Variant.FIXED_LIMIT)
    assert len(hand.seats) == 10
    assert hand.actor_seat == 2


def test_fixed_limit_all_in_only_when_the_stack_is_at_most_the_fixed_bet(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 500, 1: 500, 2: 500}, button=0, variant=Variant.FIXED_LIMIT)
    with pytest.raises(IllegalActionError) as caught:
        hand.all_in(0)
    assert caught.value.reason == "AMOUNT_TOO_LARGE"
    with pytest.raises(IllegalActionError):
        hand.raise_to(0, 500)


def test_fixed_limit_wager_without_amount_out_of_turn_reports_the_real_reason(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 500, 1: 500}, button=0, variant=Variant.FIXED_LIMIT)
    with pytest.raises(IllegalActionError) as caught:
        hand.act(Action(1, ActionKind.RAISE))
    assert caught.value.reason == "NOT_YOUR_TURN"
    hand.fold(0)
    with pytest.raises(IllegalActionError) as caught:
        hand.act(Action(1, ActionKind.BET))
    assert caught.value.reason == "HAND_IS_OVER"
