"""Worked examples for each Casino Hold'em rule sentence of issue 4 (and the operator's text)."""

from __future__ import annotations

import pytest

from house_games.casino_holdem import CasinoHoldemRound, HoldemDecision, HoldemPhase, dealer_qualifies
from house_games.errors import HouseGameError, IllegalDecisionError, InvalidDeckError, InvalidWagerError
from house_games.pay_tables import DEFAULT_CASINO_HOLDEM_ANTE_ODDS, CasinoHoldemPayTable
from house_games.settings import CasinoHoldemSettings
from house_games.settlement import Account, Direction, Item, Outcome, Transfer
from house_games.wagers import BoxWager
from poker_engine.evaluator import HandCategory, evaluate

from .house_games_decks import cards, stacked_deck


def one_box_round(hole: str, dealer: str, board: str, ante: int = 10, **settings: int) -> CasinoHoldemRound:
    return CasinoHoldemRound(
        stacked_deck(hole, dealer, board), [BoxWager(1, "p1", ante)], CasinoHoldemSettings(**settings)
    )


def test_each_box_and_the_dealer_get_two_cards_and_three_board_cards_are_dealt():
    deck = stacked_deck("As Ks", "Qh Qd", "2c 2d", "7h 8h 9h", "Tc", "Jc")
    game = CasinoHoldemRound(deck, [BoxWager(4, "p2", 5), BoxWager(1, "p1", 10)])
    # Boxes are dealt in ascending position, then the dealer, then the flop, the turn and the river.
    assert game.hole_cards(1) == cards("As Ks")
    assert game.hole_cards(4) == cards("Qh Qd")
    assert game.flop == cards("7h 8h 9h")
    game.fold(1)
    game.fold(4)
    assert game.dealer_cards == cards("2c 2d")
    assert game.board == cards("7h 8h 9h Tc Jc")


def test_several_boxes_share_the_board_and_the_dealers_hand():
    deck = stacked_deck("Ks Kd", "Ah Qs", "4c 4d", "9h Jc 2s 7d 5h")
    game = CasinoHoldemRound(deck, [BoxWager(1, "p1", 10), BoxWager(2, "p2", 10)])
    game.call(1)
    game.call(2)
    settlement = game.settle()
    # Same dealer pair of fours for both: kings beat it, ace high does not.
    assert settlement.box(1).player_delta == 10 + 20
    assert settlement.box(2).player_delta == -30


def test_fold_loses_the_ante():
    game = one_box_round("Ah Qs", "4c 4d", "9h Jc 2s 7d Kh")
    taken = game.fold(1)
    assert taken.bet == 0
    (line,) = game.settle().box(1).lines
    assert (line.item, line.outcome, line.amount, line.direction) == (
        Item.ANTE,
        Outcome.LOST,
        10,
        Direction.PLAYER_TO_HOUSE,
    )


def test_call_places_a_bet_of_twice_the_ante():
    game = one_box_round("Ah Qs", "4c 4d", "9h Jc 2s 7d Kh", ante=15)
    assert game.call(1).bet == 30
    assert game.settle().box(1).line(Item.BET).stake == 30


def test_turn_and_river_and_dealer_cards_stay_hidden_until_every_box_decided():
    game = one_box_round("Ah Qs", "4c 4d", "9h Jc 2s 7d Kh")
    for view in (lambda: game.board, lambda: game.dealer_cards, game.settle):
        with pytest.raises(IllegalDecisionError) as error:
            view()
        assert error.value.reason == "DECISIONS_PENDING"


@pytest.mark.parametrize(
    ("dealer", "board", "qualifies"),
    [
        ("4c 4d", "9h Jc 2s 7d Kh", True),  # a pair of fours is the minimum game
        ("3c 3d", "9h Jc 2s 7d Kh", False),  # a pair of threes is not
        ("Ac 3d", "9h Jc 2s 7d Kh", False),  # ace high is not
        ("Ac 3d", "9h 9c 2s 7d Kh", True),  # a pair on the board counts for the dealer too
        ("2c 3d", "Ah 4c 5s 7d Kh", True),  # a straight (A-2-3-4-5) qualifies
    ],
)
def test_dealer_qualifies_with_a_pair_of_fours_or_better(dealer: str, board: str, qualifies: bool):
    assert dealer_qualifies(evaluate(cards(dealer) + cards(board))) is qualifies


def test_dealer_not_qualifying_pays_the_ante_by_the_pay_table_and_returns_the_bet():
    game = one_box_round("As 4s", "3c 3d", "8s 6s 2s Kd 9h")  # player flush; dealer pair of threes
    game.call(1)
    box = game.settle().box(1)
    assert box.line(Item.ANTE).amount == 2 * 10  # flush 2:1
    assert box.line(Item.BET).outcome is Outcome.RETURNED
    assert box.line(Item.BET).amount == 0
    assert box.player_delta == 20


def test_player_higher_than_a_qualified_dealer_wins_the_ante_by_the_pay_table_and_the_bet_one_to_one():
    game = one_box_round("Ks Kh", "4c 4d", "Kd 7c 7s 2h 9h")  # kings full of sevens vs sevens and fours
    game.call(1)
    box = game.settle().box(1)
    assert box.line(Item.ANTE).amount == 3 * 10  # full house 3:1
    assert box.line(Item.BET).amount == 20  # 1:1
    assert box.player_delta == 50


def test_dealer_higher_takes_the_ante_and_the_bet():
    game = one_box_round("Ah Qs", "4c 4d", "9h Jc 2s 7d Kh")
    game.call(1)
    box = game.settle().box(1)
    assert [line.outcome for line in box.lines] == [Outcome.LOST, Outcome.LOST]
    assert box.player_delta == -30


def test_identical_best_fives_push_and_the_other_two_cards_never_count():
    # Both play the board straight; the player's 3c 2d and the dealer's 5h 4s do not count.
    game = one_box_round("3c 2d", "5h 4s", "9d Tc Jh Qs Kd")
    game.call(1)
    box = game.settle().box(1)
    assert [line.outcome for line in box.lines] == [Outcome.RETURNED, Outcome.RETURNED]
    assert box.player_delta == 0


def test_only_the_best_five_count_a_sixth_card_does_not_break_a_tie():
    # The board alone is the best five for both (aces full of kings): the player's queen against the
    # dealer's jack would be a sixth card, which never counts.
    game = one_box_round("Qc 2d", "Jc 3d", "Ah Ad As Kc Kd")  # both: aces full of kings
    game.call(1)
    assert game.settle().box(1).player_delta == 0


@pytest.mark.parametrize(
    ("hole", "dealer", "board", "category", "odds"),
    [
        ("As Ks", "7h 6d", "Qs Js Ts 4d 2c", HandCategory.ROYAL_FLUSH, 100),
        ("9s 8s", "Jh 3d", "7s 6s 5s Kd 2c", HandCategory.STRAIGHT_FLUSH, 20),
        ("2s 2h", "Jh 4d", "2d 2c 7s Kd 9h", HandCategory.FOUR_OF_A_KIND, 10),
        ("3s 3h", "Jh 4d", "3d 2c 2s Kd 9h", HandCategory.FULL_HOUSE, 3),
        ("As 4s", "Jh 3d", "8s 6s 2s Kd 9h", HandCategory.FLUSH, 2),
        ("5h 6d", "Jh 3c", "7s 8c 9d Kd 2h", HandCategory.STRAIGHT, 1),
        ("5h 5d", "Jh 3c", "5s 8c 9d Kd 2h", HandCategory.THREE_OF_A_KIND, 1),
        ("5h 8d", "Jh 3c", "5s 8c 9d Kd 2h", HandCategory.TWO_PAIR, 1),
        ("5h Ad", "Jh 3c", "5s 8c 9d Kd 2h", HandCategory.ONE_PAIR, 1),
        ("Ah 4d", "Jh 3c", "5s 8c 9d Kd 2h", HandCategory.HIGH_CARD, 1),
    ],
)
def test_default_ante_pay_table(hole: str, dealer: str, board: str, category: HandCategory, odds: int):
    game = one_box_round(hole, dealer, board)
    game.call(1)
    assert game.player_hand(1).category is category
    assert not dealer_qualifies(game.dealer_hand())
    assert game.settle().box(1).line(Item.ANTE).amount == odds * 10


def test_ante_pay_table_is_a_setting():
    table = CasinoHoldemPayTable({**DEFAULT_CASINO_HOLDEM_ANTE_ODDS, "FLUSH": 5})
    deck = stacked_deck("As 4s", "3c 3d", "8s 6s 2s Kd 9h")
    game = CasinoHoldemRound(deck, [BoxWager(1, "p1", 10)], CasinoHoldemSettings(pay_table=table))
    game.call(1)
    assert game.settle().box(1).line(Item.ANTE).amount == 50


def test_table_maximum_caps_what_one_box_can_win():
    game = one_box_round("As Ks", "7h 6d", "Qs Js Ts 4d 2c", ante=1000)  # royal flush, 100:1
    game.call(1)
    box = game.settle().box(1)
    ante = box.line(Item.ANTE)
    assert (ante.amount, ante.withheld) == (50_000, 50_000)
    assert box.paid_to_player == 50_000


def test_table_maximum_caps_ante_and_bet_together():
    # Kings full vs a qualified dealer: ante 3:1 = 150 and bet 1:1 = 100; a 200 maximum cuts the bet.
    game = one_box_round("Ks Kh", "4c 4d", "Kd 7c 7s 2h 9h", ante=50, table_maximum=200)
    game.call(1)
    box = game.settle().box(1)
    assert box.line(Item.ANTE).amount == 150
    assert (box.line(Item.BET).amount, box.line(Item.BET).withheld) == (50, 50)
    assert box.paid_to_player == 200


def test_a_box_decides_only_once():
    game = one_box_round("Ah Qs", "4c 4d", "9h Jc 2s 7d Kh")
    assert game.legal_decisions(1) == {HoldemDecision.CALL, HoldemDecision.FOLD}
    game.call(1)
    assert game.legal_decisions(1) == frozenset()
    assert game.phase is HoldemPhase.COMPLETE
    with pytest.raises(IllegalDecisionError) as error:
        game.fold(1)
    assert error.value.reason == "ALREADY_DECIDED"


def test_unknown_box_is_refused():
    game = one_box_round("Ah Qs", "4c 4d", "9h Jc 2s 7d Kh")
    with pytest.raises(IllegalDecisionError) as error:
        game.call(2)
    assert error.value.reason == "UNKNOWN_BOX"


@pytest.mark.parametrize(
    ("wagers", "reason"),
    [
        ([], "NO_BOXES"),
        ([BoxWager(1, "p", 0)], "NON_POSITIVE_STAKE"),
        ([BoxWager(1, "p", 10), BoxWager(1, "q", 10)], "DUPLICATE_BOX"),
        ([BoxWager(i, f"p{i}", 10) for i in range(1, 9)], "TOO_MANY_BOXES"),
        ([BoxWager(1, "p", 10, dark=True)], "NOT_IN_THIS_GAME"),
    ],
)
def test_bad_wagers_are_refused_with_a_reason(wagers: list[BoxWager], reason: str):
    with pytest.raises(InvalidWagerError) as error:
        CasinoHoldemRound(list(range(52)), wagers)
    assert error.value.reason == reason
    assert isinstance(error.value, HouseGameError)


@pytest.mark.parametrize("deck", [list(range(51)), [0, *range(51)], list(range(1, 53))])
def test_deck_must_be_a_permutation_of_the_52_cards(deck: list[int]):
    with pytest.raises(InvalidDeckError) as error:
        CasinoHoldemRound(deck, [BoxWager(1, "p", 10)])
    assert error.value.reason == "INVALID_DECK"


def test_last_decision_completes_the_round_and_settles_into_net_cashier_transfers():
    deck = stacked_deck("Ks Kd", "Ah Qs", "4c 4d", "9h Jc 2s 7d 5h")
    game = CasinoHoldemRound(deck, [BoxWager(1, "p1", 10), BoxWager(2, "p2", 10)])
    assert game.call(1).phase_after is HoldemPhase.DECISIONS
    assert game.call(2).phase_after is HoldemPhase.COMPLETE
    assert game.settle().net_transfers() == (
        Transfer("p1", Account.HOUSE_BANK, Account.PLAYER, 30),
        Transfer("p2", Account.PLAYER, Account.HOUSE_BANK, 30),
    )
