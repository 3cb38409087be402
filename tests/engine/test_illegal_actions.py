"""Illegal actions raise typed errors with stable reasons and change nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from poker_engine.errors import EngineError, IllegalActionError
from poker_engine.hand import Hand
from tests.engine.conftest import HandBuilder


def snapshot(hand: Hand) -> object:
    return (
        hand.events,
        hand.stacks,
        hand.total_contributed,
        hand.actor_seat,
        hand.legal_actions(),
        hand.street,
    )


@pytest.mark.parametrize(
    ("attempt", "reason"),
    [
        (lambda h: h.call(1), "NOT_YOUR_TURN"),
        (lambda h: h.check(0), "CHECK_NOT_ALLOWED"),
        (lambda h: h.raise_to(0, 15), "RAISE_TOO_SMALL"),
        (lambda h: h.raise_to(0, 23), "AMOUNT_NOT_ON_STEP"),
        (lambda h: h.raise_to(0, 5000), "AMOUNT_TOO_LARGE"),
        (lambda h: h.bet(0, 50), "BET_NOT_ALLOWED"),
        (lambda h: h.fold(9), "UNKNOWN_SEAT"),
        (lambda h: h.timeout(2), "NOT_YOUR_TURN"),
    ],
)
def test_illegal_action_raises_its_reason_and_changes_nothing(
    make_hand: HandBuilder, attempt: Callable[[Hand], object], reason: str
) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0)
    before = snapshot(hand)
    with pytest.raises(IllegalActionError) as caught:
        attempt(hand)
    assert caught.value.reason == reason
    assert isinstance(caught.value, EngineError)
    assert snapshot(hand) == before


def test_actions_after_the_hand_is_over_are_refused_with_hand_is_over(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000}, button=0)
    hand.fold(0)
    before = snapshot(hand)
    for attempt in (lambda: hand.check(1), lambda: hand.leave(1), lambda: hand.timeout(1)):
        with pytest.raises(IllegalActionError) as caught:
            attempt()
        assert caught.value.reason == "HAND_IS_OVER"
    assert snapshot(hand) == before


def test_folded_player_cannot_act_again(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0)
    hand.fold(0)
    with pytest.raises(IllegalActionError) as caught:
        hand.leave(0)
    assert caught.value.reason == "NOT_IN_HAND"


def test_can_answers_without_raising_and_verify_raises_the_same_reason(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0)
    assert not hand.can_check(0)
    assert hand.can_call(0)
    assert hand.can_raise_to(0, 20)
    assert not hand.can_bet(0, 20)
    with pytest.raises(IllegalActionError, match="bet to call"):
        hand.verify_check(0)
    hand.verify_call(0)


def test_legal_actions_list_what_the_player_to_act_may_do(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0)
    legal = hand.legal_actions()
    assert legal is not None
    assert legal.to_dict() == {
        "seat": 0,
        "actions": ["FOLD", "CALL", "RAISE"],
        "call_amount": 10,
        "min_to": 20,
        "max_to": 1000,
        "step": 5,
        "all_in_to": 1000,
    }
