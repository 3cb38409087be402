"""No-limit cash-table rules (docs/rules/nlhe-cash-tables.txt), one test per rule."""

from __future__ import annotations

import pytest

from poker_engine.cards import parse_cards
from poker_engine.config import ForcedPost, HandConfig, PostKind, RakeRule, SeatConfig, Variant
from poker_engine.errors import IllegalActionError, InvalidConfigError
from poker_engine.events import (
    ActionCause,
    ActionKind,
    BoardDealt,
    CardsMucked,
    CardsShown,
    HoleCardsDealt,
    PlayerActed,
    UncalledBetReturned,
)
from poker_engine.hand import Hand
from tests.engine.conftest import HandBuilder


def chips_conserved(hand: Hand) -> None:
    result = hand.result
    assert result is not None
    assert (
        sum(r.starting_stack for r in result.results)
        == sum(r.final_stack for r in result.results) + result.rake
    )
    assert sum(r.net for r in result.results) + result.rake == 0


def check_down(hand: Hand) -> None:
    while not hand.is_over:
        seat = hand.actor_seat
        assert seat is not None
        if hand.can_check(seat):
            hand.check(seat)
        else:
            hand.call(seat)


def test_hole_cards_are_dealt_one_at_a_time_from_left_of_button_and_burns_precede_each_street(
    make_hand: HandBuilder,
) -> None:
    hand = make_hand({0: 1000, 3: 1000, 7: 1000}, button=3)
    deck = hand.config.deck
    dealt = {e.seat: e.cards for e in hand.events if isinstance(e, HoleCardsDealt)}
    # Left of the button (seat 3) is seat 7, then seat 0, then the button.
    assert dealt == {7: (deck[0], deck[3]), 0: (deck[1], deck[4]), 3: (deck[2], deck[5])}
    check_down(hand)
    boards = [e.cards for e in hand.events if isinstance(e, BoardDealt)]
    assert boards == [deck[7:10], deck[11:12], deck[13:14]]  # deck[6], deck[10], deck[12] are burned


def test_three_way_all_in_with_three_different_stacks_makes_main_and_two_side_pots(
    make_hand: HandBuilder,
) -> None:
    hand = make_hand(
        {0: 100, 1: 300, 2: 600, 3: 1000},
        button=3,
        holes={0: "AsAd", 1: "KsKd", 2: "QsQd", 3: "7c2d"},
        board="3h 8c 9d Jh 4s",
    )
    hand.all_in(2)  # first to act, left of the big blind
    hand.call(3)
    hand.all_in(0)
    hand.all_in(1)
    assert hand.is_over
    result = hand.result
    assert result is not None
    pots = [(p.amount, set(p.eligible), p.winners) for p in result.pots]
    assert pots == [
        (400, {0, 1, 2, 3}, ((0, 400),)),
        (600, {1, 2, 3}, ((1, 600),)),
        (600, {2, 3}, ((2, 600),)),
    ]
    assert hand.stacks == {0: 400, 1: 600, 2: 600, 3: 400}
    chips_conserved(hand)


def test_each_side_pot_is_settled_only_among_players_who_put_chips_in_it(make_hand: HandBuilder) -> None:
    # The short stack has the best hand: it wins only the main pot, the side pot goes to the next best.
    hand = make_hand(
        {0: 50, 1: 500, 2: 500}, button=0, holes={0: "AsAd", 1: "KsKd", 2: "2c7d"}, board="3h 8c 9d Jh 4s"
    )
    hand.all_in(0)
    hand.call(1)
    hand.call(2)
    for _ in range(3):  # flop, turn, river
        hand.bet(1, 100)
        hand.call(2)
    result = hand.result
    assert result is not None
    assert [(p.amount, p.winners) for p in result.pots] == [(150, ((0, 150),)), (600, ((1, 600),))]
    chips_conserved(hand)


def test_split_pot_odd_chip_goes_to_first_winner_clockwise_from_left_of_button(
    make_hand: HandBuilder,
) -> None:
    # Both players play the board; the small blind's folded 5 chips make the pot odd (25).
    hand = make_hand(
        {0: 1000, 1: 1000, 2: 1000}, button=0, holes={0: "2c3d", 2: "2d3c"}, board="Ts Jd Qc Kh As"
    )
    hand.call(0)
    hand.fold(1)
    hand.check(2)
    check_down(hand)
    result = hand.result
    assert result is not None
    (pot,) = result.pots
    # Left of the button is seat 1 (folded), then seat 2: seat 2 gets the odd chip.
    assert pot.amount == 25
    assert pot.winners == ((2, 13), (0, 12))
    chips_conserved(hand)


def test_equal_hands_split_each_pot_on_its_own(make_hand: HandBuilder) -> None:
    hand = make_hand(
        {0: 100, 1: 400, 2: 400}, button=0, holes={0: "2c2d", 1: "Ah3c", 2: "Ad3d"}, board="Ts Jd Qc Kh 5s"
    )
    hand.all_in(0)
    hand.call(1)
    hand.call(2)
    hand.bet(1, 200)
    hand.call(2)
    check_down(hand)
    result = hand.result
    assert result is not None
    assert [(p.amount, p.winners) for p in result.pots] == [
        (300, ((1, 150), (2, 150))),
        (400, ((1, 200), (2, 200))),
    ]


def test_short_all_in_does_not_reopen_betting_for_players_who_already_acted(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 150, 2: 1000, 3: 1000}, button=0)
    hand.raise_to(3, 100)  # a full raise of 90
    hand.call(0)
    hand.all_in(1)  # to 150: 50 more, short of a full raise
    assert hand.legal_actions() is not None
    assert hand.legal_actions().can_raise
    hand.call(2)  # the big blind had not acted yet, so it could have raised
    legal = hand.legal_actions()
    assert legal is not None
    assert legal.seat == 3
    assert legal.can_call
    assert not legal.can_raise
    with pytest.raises(IllegalActionError) as caught:
        hand.raise_to(3, 400)
    assert caught.value.reason == "RAISE_NOT_ALLOWED"
    assert not hand.can_all_in(3)


def test_two_short_all_ins_that_together_make_a_full_raise_reopen_betting(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 150, 1: 200, 2: 1000, 3: 1000}, button=0)
    hand.raise_to(3, 100)  # full raise of 90
    hand.all_in(0)  # 150: +50, short
    hand.all_in(1)  # 200: +50 again, short, but 100 above seat 3's raise: together a full raise
    hand.call(2)
    legal = hand.legal_actions()
    assert legal is not None
    assert legal.seat == 3
    assert legal.can_raise
    assert legal.min_to == 290  # the minimum raise is still the last full raise (90)
    hand.raise_to(3, 290)


def test_minimum_bet_is_the_big_blind_and_a_raise_at_least_the_previous_full_raise(
    make_hand: HandBuilder,
) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0)
    legal = hand.legal_actions()
    assert legal is not None
    assert (legal.seat, legal.min_to, legal.max_to, legal.step) == (0, 20, 1000, 5)
    hand.raise_to(0, 50)  # raise of 40
    with pytest.raises(IllegalActionError) as caught:
        hand.raise_to(1, 85)
    assert caught.value.reason == "RAISE_TOO_SMALL"
    hand.raise_to(1, 90)
    hand.call(2)
    hand.call(0)
    with pytest.raises(IllegalActionError) as caught:
        hand.bet(1, 5)
    assert caught.value.reason == "BET_TOO_SMALL"
    assert hand.can_bet(1, 10)


def test_bets_move_in_the_room_step_except_all_in_for_the_exact_rest(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 333}, button=0, step=25, small_blind=25, big_blind=50)
    with pytest.raises(IllegalActionError) as caught:
        hand.raise_to(0, 110)
    assert caught.value.reason == "AMOUNT_NOT_ON_STEP"
    hand.raise_to(0, 125)
    hand.fold(1)
    assert hand.can_raise_to(2, 333)  # all-in off the step is allowed
    assert not hand.can_raise_to(2, 330)
    hand.raise_to(2, 333)


def test_heads_up_button_posts_small_blind_acts_first_preflop_and_last_after(make_hand: HandBuilder) -> None:
    hand = make_hand({2: 1000, 5: 1000}, button=5)
    posts = [(e.seat, e.post.value) for e in hand.events if e.kind == "BLIND_POSTED"]  # type: ignore[union-attr]
    assert posts == [(5, "SMALL_BLIND"), (2, "BIG_BLIND")]
    assert hand.actor_seat == 5
    hand.call(5)
    assert hand.actor_seat == 2
    hand.check(2)
    assert hand.board
    assert hand.actor_seat == 2
    hand.check(2)
    assert hand.actor_seat == 5


def test_everyone_folds_to_the_big_blind_who_takes_the_pot_without_showing(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000, 3: 1000}, button=0)
    hand.fold(3)
    hand.fold(0)
    hand.fold(1)
    assert hand.is_over
    assert [e for e in hand.events if isinstance(e, UncalledBetReturned)] == [UncalledBetReturned(2, 5)]
    assert not [e for e in hand.events if isinstance(e, CardsShown | CardsMucked)]
    assert hand.stacks == {0: 1000, 1: 995, 2: 1005, 3: 1000}
    chips_conserved(hand)


def test_uncalled_part_of_the_last_bet_returns_to_its_owner(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 300}, button=0)
    hand.raise_to(0, 1000)
    hand.call(1)  # all-in for 300 only
    result = hand.result
    assert result is not None
    assert result.uncalled == (UncalledBetReturned(0, 700),)
    assert sum(p.amount for p in result.pots) == 600
    chips_conserved(hand)


def test_rake_nothing_without_a_flop(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0, rake=RakeRule(500, 30))
    hand.raise_to(0, 300)
    hand.raise_to(1, 900)
    hand.fold(2)
    hand.fold(0)
    assert not hand.board
    assert hand.result is not None
    assert hand.result.rake == 0
    assert hand.stacks == {0: 700, 1: 1310, 2: 990}


def test_rake_percent_below_cap(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000}, button=0, rake=RakeRule(500, 30))
    hand.raise_to(0, 100)
    hand.call(1)  # pot 200 when the flop comes
    check_down(hand)
    result = hand.result
    assert result is not None
    assert result.rake == 10
    assert sum(p.amount for p in result.pots) == 190
    chips_conserved(hand)


def test_rake_cap_reached(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000}, button=0, rake=RakeRule(500, 30))
    hand.raise_to(0, 1000)
    hand.call(1)  # all-in preflop; the flop is still dealt, so the pot is raked
    result = hand.result
    assert result is not None
    assert result.rake == 30
    chips_conserved(hand)


def test_rake_is_taken_from_the_main_pot_first(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 10, 1: 1000, 2: 1000}, button=0, rake=RakeRule(500, 30), holes={0: "AsAd"})
    hand.all_in(0)
    hand.raise_to(1, 200)
    hand.call(2)
    check_down(hand)
    result = hand.result
    assert result is not None
    # 5% of 410 is 20 (under the cap), all of it from the 30-chip main pot.
    assert [(p.amount, p.rake) for p in result.pots] == [(10, 20), (380, 0)]
    chips_conserved(hand)


def test_leaving_mid_hand_folds_at_once_and_chips_already_in_stay_in_the_pot(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0)
    hand.raise_to(0, 40)
    events = hand.leave(2)  # the big blind leaves out of turn
    assert events == (PlayerActed(2, ActionKind.FOLD, 0, 10, False, ActionCause.LEFT_TABLE),)
    assert not hand.in_hand(2)
    assert hand.actor_seat == 1
    hand.call(1)
    assert hand.actor_seat == 1  # flop: seat 2 is skipped
    hand.leave(1)
    assert hand.is_over
    assert hand.stacks == {0: 1050, 1: 960, 2: 990}


def test_timeout_checks_when_a_check_is_allowed_otherwise_folds_never_calls(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0)
    (event,) = hand.timeout(0)  # facing the big blind: fold, not call
    assert event == PlayerActed(0, ActionKind.FOLD, 0, 0, False, ActionCause.TIMEOUT)
    hand.call(1)
    (event,) = hand.timeout(2)[:1]  # big blind may check its option
    assert event == PlayerActed(2, ActionKind.CHECK, 0, 10, False, ActionCause.TIMEOUT)


def test_winners_show_and_losers_muck_and_both_are_recorded(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000}, button=0, holes={0: "AsAd", 1: "7c2d"}, board="3h 8c 9d Jh 4s")
    hand.call(0)
    check_down(hand)
    shown = [e for e in hand.events if isinstance(e, CardsShown)]
    mucked = [e for e in hand.events if isinstance(e, CardsMucked)]
    assert [(e.seat, e.cards) for e in shown] == [(0, parse_cards("AsAd"))]
    assert shown[0].description == "One pair, Aces"
    assert [(e.seat, e.cards) for e in mucked] == [(1, parse_cards("7c2d"))]


def test_all_in_showdown_turns_every_hand_up(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 500, 1: 500}, button=0, holes={0: "AsAd", 1: "7c2d"}, board="3h 8c 9d Jh 4s")
    hand.all_in(0)
    hand.call(1)
    assert {e.seat for e in hand.events if isinstance(e, CardsShown)} == {0, 1}


def test_big_blind_posted_all_in_for_less_is_still_a_full_call_for_others(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 4}, button=0)
    legal = hand.legal_actions()
    assert legal is not None
    assert legal.call_amount == 10
    hand.call(0)
    hand.call(1)
    check_down(hand)
    chips_conserved(hand)


def test_a_player_who_leaves_with_the_highest_bet_gets_nothing_back(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0)
    hand.raise_to(0, 200)
    hand.leave(0)  # out of turn, with the highest bet
    hand.fold(1)
    assert hand.is_over
    assert not [e for e in hand.events if isinstance(e, UncalledBetReturned)]
    assert hand.stacks == {0: 800, 1: 995, 2: 1205}
    chips_conserved(hand)


def test_big_blind_has_the_option_to_raise_when_everyone_limps(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0)
    hand.call(0)
    hand.call(1)
    legal = hand.legal_actions()
    assert legal is not None
    assert (legal.seat, legal.can_check, legal.can_raise) == (2, True, True)
    hand.check(2)
    assert len(hand.board) == 3


def test_a_live_extra_big_blind_counts_as_a_bet_and_a_dead_small_blind_does_not(
    make_hand: HandBuilder,
) -> None:
    hand = make_hand(
        {0: 1000, 1: 1000, 2: 1000, 3: 1000},
        button=0,
        extra_posts=(ForcedPost(3, PostKind.EXTRA_BIG_BLIND), ForcedPost(3, PostKind.DEAD_SMALL_BLIND)),
    )
    assert hand.total_contributed[3] == 15
    assert hand.bets[3] == 10
    legal = hand.legal_actions()  # seat 3 acts first (left of the big blind); its live post matches
    assert legal is not None
    assert (legal.seat, legal.can_check, legal.can_call) == (3, True, False)
    hand.check(3)
    hand.call(0)
    hand.call(1)
    hand.check(2)
    assert sum(hand.total_contributed.values()) == 45  # 4 x 10 plus the dead 5


def test_folded_players_take_no_further_part(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000, 2: 1000}, button=0)
    hand.fold(0)
    hand.call(1)
    hand.check(2)
    seen = []
    while not hand.is_over:
        seat = hand.actor_seat
        assert seat is not None
        seen.append(seat)
        hand.check(seat)
    assert 0 not in seen
    with pytest.raises(IllegalActionError) as caught:
        hand.leave(0)
    assert caught.value.reason in {"NOT_IN_HAND", "HAND_IS_OVER"}


def test_config_validation_lists_every_problem_in_one_typed_error() -> None:
    config = HandConfig(
        variant=Variant.NO_LIMIT,
        seats=(SeatConfig(0, "a", 0), SeatConfig(0, "a", 100)),
        button=0,
        small_blind=10,
        big_blind=5,
        deck=(1, 2, 3),
        rake=RakeRule(900, 30),
    )
    with pytest.raises(InvalidConfigError) as caught:
        Hand(config)
    assert caught.value.reason == "INVALID_CONFIG"
    message = str(caught.value)
    for part in ("duplicate seat", "duplicate player", "positive", "small blind", "rake", "deck"):
        assert part in message
