"""Worked examples for the Russian Poker showdown: the dealer's game, payouts, buying a game, two
combinations, insurance and the table maximum."""

from __future__ import annotations

import pytest

from house_games.errors import IllegalDecisionError
from house_games.russian_combinations import RussianCombination, assess_hand
from house_games.russian_poker import DealerReplacement, DecisionKind, RussianPhase
from house_games.settings import RussianPokerSettings, StillNoGameAnte
from house_games.settlement import Direction, Item, Outcome
from house_games.wagers import BoxWager

from .house_games_decks import cards
from .russian_poker_rounds import DEALER_ACE_KING, DEALER_NO_GAME, russian_round

TRIPS = "9s 9h 9d Kd 3c"  # three nines; no ace, so no ace-king second combination


def card(text: str) -> int:
    return cards(text)[0]


def items(box_lines: tuple[object, ...]) -> list[object]:
    return [line.item for line in box_lines]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("dealer", "has_game"),
    [
        (DEALER_ACE_KING, True),  # ace-king is the least game
        ("Ac Qc 4d 3h 2s", False),  # ace-queen is "no game"
        (DEALER_NO_GAME, False),
        ("2c 2d 4d 3h 5s", True),  # any pair
    ],
)
def test_dealer_has_a_game_with_ace_king_or_better(dealer: str, has_game: bool):
    assert assess_hand(cards(dealer)).has_game is has_game


def test_no_game_the_player_may_take_the_ante_paid_one_to_one_with_the_bet_returned():
    game = russian_round([TRIPS], DEALER_NO_GAME)
    game.play(1)
    assert game.phase is RussianPhase.NO_GAME_CHOICES
    assert game.legal_decisions(1) == {DecisionKind.TAKE_ANTE, DecisionKind.BUY_GAME}
    game.take_ante(1)
    box = game.settle().box(1)
    assert (box.line(Item.ANTE).outcome, box.line(Item.ANTE).amount) == (Outcome.WON, 10)
    assert box.line(Item.BET).outcome is Outcome.RETURNED
    assert box.player_delta == 10


def test_player_beats_a_qualified_dealer_bet_paid_by_the_pay_table_and_ante_returned_not_paid():
    game = russian_round([TRIPS], DEALER_ACE_KING)
    game.play(1)
    box = game.settle().box(1)
    assert box.line(Item.BET).amount == 3 * 20
    ante = box.line(Item.ANTE)
    assert (ante.outcome, ante.amount, ante.reason) == (Outcome.RETURNED, 0, "ANTE_RETURNED_ON_WIN")
    assert box.player_delta == 60


@pytest.mark.parametrize(
    ("hand", "combination", "odds"),
    [
        ("Ad Kd Qc Jh 9s", RussianCombination.ACE_KING, 1),
        ("7s 7d 5c Jh 9s", RussianCombination.ONE_PAIR, 1),
        ("7s 7d 5c 5h 9s", RussianCombination.TWO_PAIR, 2),
        ("7s 7d 7c 5h 9s", RussianCombination.THREE_OF_A_KIND, 3),
        ("5c 6d 7s 8h 9s", RussianCombination.STRAIGHT, 4),
        ("2h 5h 7h 9h Jh", RussianCombination.FLUSH, 5),
        ("7s 7d 7c 5h 5s", RussianCombination.FULL_HOUSE, 7),
        ("7s 7d 7c 7h 9s", RussianCombination.FOUR_OF_A_KIND, 20),
        ("5s 6s 7s 8s 9s", RussianCombination.STRAIGHT_FLUSH, 50),
        ("Ts Js Qs Ks As", RussianCombination.ROYAL_FLUSH, 100),
    ],
)
def test_default_main_pay_table_on_the_bet(hand: str, combination: RussianCombination, odds: int):
    game = russian_round([hand], DEALER_ACE_KING)
    assert game.hand(1).main.kind is combination
    assert game.hand(1).second is None
    game.play(1)
    box = game.settle().box(1)
    assert box.line(Item.BET).amount == odds * 20
    assert box.player_delta == odds * 20


def test_dealer_higher_takes_the_ante_and_the_bet():
    game = russian_round(["7s 7d 5c Jh 9s"], "8s 8d 4c 3h 2s")
    game.play(1)
    box = game.settle().box(1)
    assert [(line.item, line.outcome) for line in box.lines] == [
        (Item.ANTE, Outcome.LOST),
        (Item.BET, Outcome.LOST),
    ]
    assert box.player_delta == -30


@pytest.mark.parametrize(
    ("hand", "dealer", "delta"),
    [
        ("7s 7d Jc 5h 3s", "7h 7c Td 4h 2s", 20),  # sevens, jack kicker beats ten kicker
        ("7s 7d Tc 5h 3s", "7h 7c Td 6h 2s", -30),  # sevens, ten, then six beats five
        ("Ad Kd Qc 5h 3s", "Ac Kc Jd 9h 8s", 20),  # ace-king against ace-king: the queen decides
        ("8s 8d 5c 5h Ks", "8h 8c 5d 5s Qs", 40),  # same two pairs: the king kicker decides
    ],
)
def test_equal_combinations_compare_by_the_higher_cards(hand: str, dealer: str, delta: int):
    game = russian_round([hand], dealer)
    game.play(1)
    assert game.settle().box(1).player_delta == delta


def test_a_complete_tie_pushes():
    game = russian_round(["7s 7d Jc 5h 3s"], "7h 7c Jd 5s 3h")
    game.play(1)
    box = game.settle().box(1)
    assert [line.outcome for line in box.lines] == [Outcome.RETURNED, Outcome.RETURNED]
    assert box.player_delta == 0


# Buying a game ------------------------------------------------------------------------------------


def test_buy_game_replaces_the_dealers_highest_card_with_the_next_card_for_one_ante():
    game = russian_round([TRIPS], DEALER_NO_GAME, "7d")
    game.play(1)
    taken = game.buy_game(1)
    assert taken.fee == 10
    assert game.dealer_replacements == (DealerReplacement(card("Qh"), card("7d"), free=False),)
    assert game.dealer_cards == cards("7d Jd 7c 5s 2h")
    box = game.settle().box(1)
    # Dealer now has sevens, lower than the nines: bet paid 3:1, ante returned, fee kept by the house.
    assert items(box.lines) == [Item.BUY_GAME_FEE, Item.ANTE, Item.BET]
    assert box.line(Item.BUY_GAME_FEE).direction is Direction.PLAYER_TO_HOUSE
    assert box.player_delta == -10 + 60


def test_buy_game_that_gives_the_dealer_a_higher_game_loses_ante_bet_and_fee():
    game = russian_round(["3s 3d Jc 9h 4s"], "Qh Jd 8c 5s 2h", "8d")
    game.play(1)
    game.buy_game(1)
    assert game.settle().box(1).player_delta == -40


def test_buy_game_next_card_of_the_same_rank_gives_one_free_second_replacement():
    game = russian_round([TRIPS], DEALER_NO_GAME, "Qc 5d")
    game.play(1)
    game.buy_game(1)
    assert game.dealer_replacements == (
        DealerReplacement(card("Qh"), card("Qc"), free=False),
        DealerReplacement(card("Qc"), card("5d"), free=True),
    )
    box = game.settle().box(1)
    assert box.line(Item.BUY_GAME_FEE).amount == 10  # the second replacement is free
    assert box.player_delta == -10 + 60  # dealer's fives lose to the nines


def test_buy_game_free_replacement_happens_only_once():
    game = russian_round([TRIPS], DEALER_NO_GAME, "Qc Qd")
    game.play(1)
    game.buy_game(1)
    assert len(game.dealer_replacements) == 2
    assert not game.dealer_hand().has_game


def test_buy_game_still_no_game_returns_the_bet():
    game = russian_round([TRIPS], DEALER_NO_GAME, "Td")
    game.play(1)
    game.buy_game(1)
    assert len(game.dealer_replacements) == 1  # a different rank: no free replacement
    box = game.settle().box(1)
    assert box.line(Item.BET).outcome is Outcome.RETURNED
    # Decision where the text is silent: the ante keeps its no-game 1:1; the fee is lost.
    assert box.line(Item.ANTE).amount == 10
    assert box.player_delta == 0


def test_buy_game_still_no_game_returns_the_ante_when_the_operator_chooses_so():
    # Decision 1 is a setting: the other reading returns the ante instead of paying it.
    settings = RussianPokerSettings(still_no_game_ante=StillNoGameAnte.RETURN)
    game = russian_round([TRIPS], DEALER_NO_GAME, "Td", settings=settings)
    game.play(1)
    game.buy_game(1)
    box = game.settle().box(1)
    ante = box.line(Item.ANTE)
    assert (ante.outcome, ante.amount, ante.direction) == (Outcome.RETURNED, 0, Direction.NO_TRANSFER)
    assert ante.reason == "DEALER_STILL_NO_GAME"
    assert box.line(Item.BET).outcome is Outcome.RETURNED
    assert box.player_delta == -10  # only the fee for the bought game is lost


def test_the_still_no_game_setting_leaves_a_plain_no_game_paid():
    settings = RussianPokerSettings(still_no_game_ante=StillNoGameAnte.RETURN)
    game = russian_round([TRIPS], DEALER_NO_GAME, settings=settings)
    game.play(1)
    game.take_ante(1)
    assert game.settle().box(1).player_delta == 10


def test_same_rank_replacement_that_makes_a_game_gets_no_free_replacement():
    game = russian_round([TRIPS], "Qh Jc 7c 5c 2c", "Qc")  # the new queen makes a club flush
    game.play(1)
    game.buy_game(1)
    assert len(game.dealer_replacements) == 1
    assert game.settle().box(1).player_delta == -40


def test_boxes_that_take_the_ante_keep_it_when_another_box_buys_a_game():
    game = russian_round([TRIPS, "4s 4d Jc 8h 3s"], DEALER_NO_GAME, "7d")
    game.play(1)
    game.play(2)
    assert game.current_box == 1
    with pytest.raises(IllegalDecisionError) as error:
        game.take_ante(2)
    assert error.value.reason == "NOT_THIS_BOX_TURN"
    game.buy_game(1)
    game.take_ante(2)
    settlement = game.settle()
    assert settlement.box(1).player_delta == 50
    assert settlement.box(2).line(Item.ANTE).reason == "DEALER_NO_GAME"
    assert settlement.box(2).player_delta == 10


def test_folded_box_has_no_no_game_choice():
    game = russian_round(["4s 4d Jc 8h 3s", TRIPS], DEALER_NO_GAME)
    game.fold(1)
    game.play(2)
    assert game.current_box == 2
    with pytest.raises(IllegalDecisionError) as error:
        game.buy_game(1)
    assert error.value.reason == "BOX_NOT_IN_PLAY"


# Two combinations ---------------------------------------------------------------------------------


def test_two_combinations_on_five_cards_pair_and_ace_king_are_both_paid():
    game = russian_round(["7s 7d As Kd 3c"], "Ah Kc 5c 4s 2h")
    hand = game.hand(1)
    assert (hand.main.kind, hand.second and hand.second.kind) == (
        RussianCombination.ONE_PAIR,
        RussianCombination.ACE_KING,
    )
    game.play(1)
    box = game.settle().box(1)
    assert box.line(Item.BET).amount == 20
    assert box.line(Item.SECOND_COMBINATION).amount == 20
    assert box.player_delta == 40


def test_two_combinations_on_five_cards_three_of_a_kind_and_ace_king():
    game = russian_round(["9s 9h 9d As Kd"], DEALER_ACE_KING)
    game.play(1)
    assert game.settle().box(1).player_delta == (3 + 1) * 20


def test_on_five_cards_the_second_combination_can_only_be_ace_king():
    game = russian_round(["7s 7d 5c 5h As"], DEALER_ACE_KING)  # two pairs and an ace: no second
    assert game.hand(1).second is None
    game.play(1)
    assert not game.settle().box(1).has(Item.SECOND_COMBINATION)


def test_second_combination_is_paid_only_when_the_first_beats_the_dealer():
    game = russian_round(["7s 7d As Kd 3c"], "8s 8d 5c 4s 2h")
    game.play(1)
    box = game.settle().box(1)
    assert not box.has(Item.SECOND_COMBINATION)
    assert box.player_delta == -30


def test_two_full_combinations_on_six_cards():
    game = russian_round(["7s 7d 8c 8h 9s"], DEALER_ACE_KING, "9d")
    game.buy_sixth_card(1)
    hand = game.hand(1)
    assert hand.main.kind is RussianCombination.TWO_PAIR  # nines and eights
    assert hand.second is not None
    assert hand.second.kind is RussianCombination.TWO_PAIR  # with the sevens
    game.play(1)
    box = game.settle().box(1)
    assert box.line(Item.BET).amount == 2 * 20
    assert box.line(Item.SECOND_COMBINATION).amount == 2 * 20
    assert box.player_delta == 80 - 10  # minus the sixth-card fee


def test_six_suited_cards_make_two_flushes():
    game = russian_round(["2h 5h 7h 9h Jh"], DEALER_ACE_KING, "Kh")
    game.buy_sixth_card(1)
    game.play(1)
    assert game.settle().box(1).player_delta == (5 + 5) * 20 - 10


def test_second_combination_must_include_a_card_not_in_the_first():
    # Four nines with a king and a deuce: every pair or three of a kind lies inside the four.
    game = russian_round(["9s 9h 9d 9c Kd"], DEALER_ACE_KING, "2d")
    game.buy_sixth_card(1)
    assert game.hand(1).second is None


def test_pair_of_aces_with_a_king_pays_ace_king_as_the_second_combination():
    # The king is a card outside the pair, which is all the rule asks (a literal reading, see docs).
    hand = assess_hand(cards("As Ad Kc 7h 3s"))
    assert hand.second is not None
    assert hand.second.kind is RussianCombination.ACE_KING


# Insurance ----------------------------------------------------------------------------------------


def test_insurance_needs_three_of_a_kind_or_better():
    game = russian_round(["7s 7d 5c 5h 9s"], DEALER_NO_GAME)
    assert game.insurance_range(1) is None
    with pytest.raises(IllegalDecisionError) as error:
        game.play(1, insurance=10)
    assert error.value.reason == "INSURANCE_WITHOUT_THREE_OF_A_KIND"


@pytest.mark.parametrize(
    ("hand", "high"),
    [
        (TRIPS, 60),  # three of a kind pays 3 x bet 20
        ("9s 9h 9d As Kd", 80),  # plus ace-king as a second combination
        ("8s 8d 8c 6h 6s", 140),  # full house 7 x 20
    ],
)
def test_insurance_stake_is_from_one_ante_to_the_expected_payout(hand: str, high: int):
    game = russian_round([hand], DEALER_NO_GAME)
    assert game.insurance_range(1) == (10, high)
    for stake in (9, high + 1):
        with pytest.raises(IllegalDecisionError) as error:
            game.play(1, insurance=stake)
        assert error.value.reason == "INSURANCE_OUT_OF_RANGE"


def test_insurance_stake_is_within_the_table_maximum():
    # Four of a kind would pay 80,000; insurance wins only beside the ante's 1:1 (2,000), so at most
    # 48,000 of insurance can still be paid under the 50,000 maximum.
    game = russian_round(["8s 8d 8c 8h 9s"], DEALER_NO_GAME, wagers=[BoxWager(1, "p1", 2000)])
    assert game.insurance_range(1) == (2000, 48_000)


def test_insurance_the_table_maximum_could_not_pay_in_full_is_refused_up_front():
    # Issue 11: a 50,000 stake on a straight flush (ante 1,000) was accepted and then paid 49,000.
    game = russian_round(["5d 6d 7d 8d 9d"], DEALER_NO_GAME, wagers=[BoxWager(1, "p1", 1000)])
    assert game.insurance_range(1) == (1000, 49_000)
    with pytest.raises(IllegalDecisionError) as error:
        game.play(1, insurance=50_000)
    assert error.value.reason == "INSURANCE_OUT_OF_RANGE"
    game.play(1, insurance=49_000)
    game.take_ante(1)
    box = game.settle().box(1)
    insurance = box.line(Item.INSURANCE)
    assert (insurance.outcome, insurance.amount, insurance.withheld) == (Outcome.WON, 49_000, 0)
    assert box.player_delta == 1000 + 49_000


def test_no_insurance_when_the_table_maximum_leaves_no_room_beside_the_ante():
    settings = RussianPokerSettings(table_maximum=1500)
    game = russian_round(
        ["8s 8d 8c 8h 9s"], DEALER_NO_GAME, wagers=[BoxWager(1, "p1", 1000)], settings=settings
    )
    assert game.insurance_range(1) is None
    with pytest.raises(IllegalDecisionError) as error:
        game.play(1, insurance=1000)
    assert error.value.reason == "INSURANCE_OUT_OF_RANGE"


def test_insurance_dealer_no_game_pays_one_to_one():
    game = russian_round([TRIPS], DEALER_NO_GAME)
    assert game.play(1, insurance=60).insurance == 60
    game.take_ante(1)
    box = game.settle().box(1)
    assert (box.line(Item.INSURANCE).outcome, box.line(Item.INSURANCE).amount) == (Outcome.WON, 60)
    assert box.player_delta == 10 + 60


def test_insurance_dealer_game_lower_is_lost():
    game = russian_round([TRIPS], DEALER_ACE_KING)
    game.play(1, insurance=60)
    box = game.settle().box(1)
    assert (box.line(Item.INSURANCE).outcome, box.line(Item.INSURANCE).amount) == (Outcome.LOST, 60)
    assert box.player_delta == 60 - 60


def test_insurance_dealer_game_equal_is_returned():
    game = russian_round(["5c 6d 7s 8h 9s"], "5d 6c 7h 8s 9d")  # equal straights
    game.play(1, insurance=40)
    box = game.settle().box(1)
    assert box.line(Item.INSURANCE).outcome is Outcome.RETURNED
    assert box.player_delta == 0


def test_insurance_dealer_game_higher_is_returned():
    game = russian_round([TRIPS], "5d 6c 7h 8s 9c")  # dealer straight beats the nines
    game.play(1, insurance=60)
    box = game.settle().box(1)
    assert box.line(Item.INSURANCE).outcome is Outcome.RETURNED
    assert box.player_delta == -30


def test_insurance_does_not_exclude_buying_a_game():
    game = russian_round([TRIPS], DEALER_NO_GAME, "7d")
    game.play(1, insurance=20)
    game.buy_game(1)
    box = game.settle().box(1)
    # Insurance is settled on the dealer's first hand (no game: 1:1); the bought game then pays 3:1.
    assert box.line(Item.INSURANCE).amount == 20
    assert box.player_delta == 20 - 10 + 60


# Table maximum and fees ---------------------------------------------------------------------------


def test_total_paid_on_a_box_never_exceeds_the_table_maximum():
    game = russian_round(["7s 7d 7c 7h 9s"], DEALER_ACE_KING, wagers=[BoxWager(1, "p1", 2000)])
    game.play(1)
    bet = game.settle().box(1).line(Item.BET)
    assert (bet.amount, bet.withheld) == (50_000, 30_000)


def test_table_maximum_covers_combinations_plus_insurance():
    settings = RussianPokerSettings(table_maximum=100)
    game = russian_round(["9s 9h 9d As Kd"], DEALER_NO_GAME, "7d", settings=settings)
    game.play(1, insurance=80)
    game.buy_game(1)
    box = game.settle().box(1)
    # Bet 3:1 = 60, ace-king 1:1 = 20, insurance 80: 160 due, 100 paid, the last lines cut first.
    assert box.paid_to_player == 100
    assert box.line(Item.BET).amount == 60
    assert box.line(Item.SECOND_COMBINATION).amount == 20
    insurance = box.line(Item.INSURANCE)
    assert (insurance.amount, insurance.withheld) == (20, 60)


def test_exchange_fee_is_never_returned_even_when_the_box_wins():
    game = russian_round(["7s 7d 2c 5h 9c"], DEALER_ACE_KING, "7h")
    game.exchange(1, cards("2c"))
    game.play(1)
    box = game.settle().box(1)
    assert box.line(Item.EXCHANGE_FEE).outcome is Outcome.LOST
    assert box.player_delta == 3 * 20 - 10


def test_insurance_is_offered_only_on_the_box_whose_turn_it_is():
    game = russian_round(["5s 5d Jc 8h 3s", TRIPS], DEALER_ACE_KING)
    assert game.insurance_range(2) is None
    game.fold(1)
    assert game.insurance_range(2) == (10, 60)


def test_decision_records_tell_when_the_dealer_shows_and_what_a_bought_game_replaced():
    game = russian_round([TRIPS], DEALER_NO_GAME, "Qc 5d")
    assert game.play(1).phase_after is RussianPhase.NO_GAME_CHOICES
    taken = game.buy_game(1)
    assert taken.phase_after is RussianPhase.COMPLETE
    assert taken.dealer_replacements == game.dealer_replacements
    assert len(taken.dealer_replacements) == 2
