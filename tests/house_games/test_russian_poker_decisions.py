"""Worked examples for the Russian Poker deal, the decisions, their order and the wager rules."""

from __future__ import annotations

import pytest

from house_games.errors import IllegalDecisionError, InvalidWagerError
from house_games.russian_poker import BuySixthCard, DecisionKind, Exchange, RussianPhase, RussianPokerRound
from house_games.settings import RussianPokerSettings
from house_games.settlement import Direction, Item, Outcome
from house_games.wagers import BoxWager

from .house_games_decks import cards, stacked_deck
from .russian_poker_rounds import DEALER_ACE_KING, DEALER_NO_GAME, russian_round

TRIPS = "9s 9h 9d Kd 3c"
PAIR = "7s 7d 2c 5h 9c"


def reason_of(error: pytest.ExceptionInfo[IllegalDecisionError]) -> str:
    return error.value.reason


def test_five_cards_face_down_to_each_box_and_five_to_the_dealer_in_dealing_order():
    deck = stacked_deck(TRIPS, PAIR, DEALER_ACE_KING)
    game = RussianPokerRound(deck, [BoxWager(5, "p2", 10), BoxWager(2, "p1", 10)])
    assert game.boxes == (2, 5)
    assert game.cards(2) == cards(TRIPS)
    assert game.cards(5) == cards(PAIR)
    game.play(2)
    game.play(5)
    assert game.dealer_cards == cards(DEALER_ACE_KING)


def test_one_dealer_card_is_face_up_by_default_and_the_setting_turns_it_off():
    assert russian_round([TRIPS], DEALER_ACE_KING).dealer_upcard == cards("Ac")[0]
    hidden = russian_round([TRIPS], DEALER_ACE_KING, settings=RussianPokerSettings(dealer_upcard=False))
    assert hidden.dealer_upcard is None


def test_dealer_cards_stay_hidden_until_every_box_has_decided():
    game = russian_round([TRIPS], DEALER_ACE_KING)
    with pytest.raises(IllegalDecisionError) as error:
        _ = game.dealer_cards
    assert reason_of(error) == "DECISIONS_PENDING"
    with pytest.raises(IllegalDecisionError) as error:
        game.settle()
    assert reason_of(error) == "DECISIONS_PENDING"


def test_boxes_decide_in_dealing_order():
    game = russian_round([TRIPS, PAIR], DEALER_ACE_KING)
    assert game.current_box == 1
    assert game.legal_decisions(2) == frozenset()
    with pytest.raises(IllegalDecisionError) as error:
        game.play(2)
    assert reason_of(error) == "NOT_THIS_BOX_TURN"
    game.play(1)
    assert game.current_box == 2


def test_each_box_decides_once_and_cannot_go_back():
    game = russian_round([TRIPS, PAIR], DEALER_ACE_KING)
    game.fold(1)
    with pytest.raises(IllegalDecisionError) as error:
        game.play(1)
    assert reason_of(error) == "ALREADY_DECIDED"


def test_play_places_a_bet_of_two_antes():
    game = russian_round([TRIPS], DEALER_ACE_KING)
    assert game.legal_decisions(1) == {
        DecisionKind.PLAY,
        DecisionKind.FOLD,
        DecisionKind.EXCHANGE,
        DecisionKind.BUY_SIXTH_CARD,
    }
    assert game.play(1).bet == 20
    assert game.settle().box(1).line(Item.BET).stake == 20


def test_fold_loses_the_ante():
    game = russian_round([TRIPS], DEALER_ACE_KING)
    game.fold(1)
    box = game.settle().box(1)
    assert [(line.item, line.outcome, line.amount) for line in box.lines] == [(Item.ANTE, Outcome.LOST, 10)]


def test_exchange_replaces_one_to_five_cards_from_the_next_deck_cards_for_one_ante():
    game = russian_round([PAIR], DEALER_ACE_KING, "7h 3d")
    taken = game.exchange(1, cards("2c 5h"))
    assert taken.cards_dealt == cards("7h 3d")
    assert taken.fee == 10
    # The new cards take the discarded cards' places, in order.
    assert game.cards(1) == cards("7s 7d 7h 3d 9c")
    # After the exchange the box can only play or fold.
    assert game.legal_decisions(1) == {DecisionKind.PLAY, DecisionKind.FOLD}
    game.play(1)
    fee = game.settle().box(1).line(Item.EXCHANGE_FEE)
    assert (fee.amount, fee.direction) == (10, Direction.PLAYER_TO_HOUSE)


def test_exchange_of_all_five_cards():
    game = russian_round([PAIR], DEALER_ACE_KING, "Ah Ad 6c 6d 6h")
    game.exchange(1, cards(PAIR))
    assert game.cards(1) == cards("Ah Ad 6c 6d 6h")


def test_buy_a_sixth_card_for_one_ante():
    game = russian_round([PAIR], DEALER_ACE_KING, "7h")
    taken = game.buy_sixth_card(1)
    assert (taken.cards_dealt, taken.fee) == (cards("7h"), 10)
    assert game.cards(1) == cards("7s 7d 2c 5h 9c 7h")
    game.play(1)
    assert game.settle().box(1).line(Item.SIXTH_CARD_FEE).amount == 10


@pytest.mark.parametrize("first", ["exchange", "sixth"])
@pytest.mark.parametrize("second", ["exchange", "sixth"])
def test_exchange_or_sixth_card_only_once_per_box(first: str, second: str):
    game = russian_round([PAIR], DEALER_ACE_KING, "7h 3d")
    if first == "exchange":
        game.exchange(1, cards("2c"))
    else:
        game.buy_sixth_card(1)
    decision = Exchange(game.cards(1)[:1]) if second == "exchange" else BuySixthCard()
    with pytest.raises(IllegalDecisionError) as error:
        game.decide(1, decision)
    assert reason_of(error) == "SECOND_EXCHANGE"


@pytest.mark.parametrize("discard", ["", "As", "2c 2c", "7s 7d 2c 5h 9c 7h"])
def test_exchange_must_name_one_to_five_of_the_boxs_own_cards(discard: str):
    game = russian_round([PAIR], DEALER_ACE_KING)
    chosen = tuple(cards(discard.replace("2c 2c", "2c"))) * (2 if discard == "2c 2c" else 1)
    with pytest.raises(IllegalDecisionError) as error:
        game.decide(1, Exchange(chosen))
    assert reason_of(error) == "BAD_EXCHANGE_CARDS"


def two_boxes_of_one_player(dealer: str = DEALER_ACE_KING) -> RussianPokerRound:
    wagers = [BoxWager(1, "p1", 10), BoxWager(2, "p1", 10)]
    return russian_round([TRIPS, PAIR], dealer, wagers=wagers)


def test_several_boxes_of_one_player_cannot_exchange_or_buy_a_card():
    game = two_boxes_of_one_player()
    assert game.legal_decisions(1) == {DecisionKind.PLAY, DecisionKind.FOLD}
    for action in (lambda: game.exchange(1, cards("3c")), lambda: game.buy_sixth_card(1)):
        with pytest.raises(IllegalDecisionError) as error:
            action()
        assert reason_of(error) == "EXCHANGE_ON_MULTI_BOX"


def test_several_boxes_of_one_player_cannot_insure():
    game = two_boxes_of_one_player()
    assert game.insurance_range(1) is None
    with pytest.raises(IllegalDecisionError) as error:
        game.play(1, insurance=10)
    assert reason_of(error) == "INSURANCE_ON_MULTI_BOX"


def test_several_boxes_of_one_player_cannot_buy_a_game_and_take_the_ante():
    wagers = [BoxWager(1, "p1", 10), BoxWager(2, "p1", 10), BoxWager(3, "p2", 10)]
    game = russian_round([TRIPS, PAIR, "8s 8d 4c 6h Tc"], DEALER_NO_GAME, wagers=wagers)
    for box in (1, 2, 3):
        game.play(box)
    assert game.phase is RussianPhase.NO_GAME_CHOICES
    assert game.current_box == 3  # the multi-box player's boxes took the ante at once
    with pytest.raises(IllegalDecisionError) as error:
        game.buy_game(1)
    assert reason_of(error) == "BUY_GAME_ON_MULTI_BOX"
    game.take_ante(3)
    settlement = game.settle()
    for box in (1, 2):
        assert settlement.box(box).line(Item.ANTE).reason == "DEALER_NO_GAME"
        assert settlement.box(box).player_delta == 10


def test_a_single_multi_box_player_with_no_game_settles_at_once():
    game = two_boxes_of_one_player(DEALER_NO_GAME)
    game.play(1)
    game.play(2)
    assert game.phase is RussianPhase.COMPLETE
    assert game.settle().player_deltas() == {"p1": 20}


@pytest.mark.parametrize(
    ("wagers", "reason"),
    [
        ([BoxWager(1, "p1", 10), BoxWager(3, "p1", 10)], "BOXES_NOT_ADJACENT"),
        ([BoxWager(1, "p1", 10), BoxWager(2, "p2", 10), BoxWager(3, "p1", 10)], "BOXES_NOT_ADJACENT"),
        ([BoxWager(1, "p1", 10), BoxWager(2, "p1", 20)], "UNEQUAL_LIGHT_ANTES"),
        ([BoxWager(i, "p1", 10) for i in (1, 2, 3)], "TOO_MANY_LIGHT_BOXES"),
        ([BoxWager(1, "p1", 10, bonus=5)], "BONUS_ON_LIGHT_BOX"),
        ([BoxWager(1, "p1", 0)], "NON_POSITIVE_STAKE"),
        ([BoxWager(i, f"p{i}", 10) for i in range(1, 9)], "TOO_MANY_BOXES"),
    ],
)
def test_wager_rules_before_the_deal(wagers: list[BoxWager], reason: str):
    with pytest.raises(InvalidWagerError) as error:
        RussianPokerRound(list(range(52)), wagers)
    assert error.value.reason == reason


def test_dark_box_antes_may_differ_from_each_other_and_from_light_boxes():
    wagers = [BoxWager(1, "p1", 10), BoxWager(2, "p1", 10), BoxWager(3, "p1", 25, dark=True)]
    wagers.append(BoxWager(4, "p1", 40, dark=True))
    game = RussianPokerRound(list(range(52)), wagers)
    assert game.boxes == (1, 2, 3, 4)


def test_fixed_bonus_stake_setting_refuses_other_amounts():
    settings = RussianPokerSettings(bonus_stake=5)
    with pytest.raises(InvalidWagerError) as error:
        RussianPokerRound(list(range(52)), [BoxWager(1, "p1", 10, dark=True, bonus=6)], settings)
    assert error.value.reason == "BONUS_AMOUNT_NOT_ALLOWED"


def test_dark_box_places_ante_and_bet_before_the_deal_and_takes_no_decisions():
    wagers = [BoxWager(1, "p1", 10, dark=True), BoxWager(2, "p2", 10)]
    game = russian_round([TRIPS, PAIR], DEALER_ACE_KING, wagers=wagers)
    assert game.current_box == 2
    with pytest.raises(IllegalDecisionError) as error:
        game.fold(1)
    assert reason_of(error) == "DARK_BOX"
    game.fold(2)
    box = game.settle().box(1)
    assert box.line(Item.BET).stake == 20
    assert box.line(Item.BET).amount == 60  # trips 3:1, played blind


def test_decisions_after_the_dealer_shows_are_refused():
    game = russian_round([TRIPS], DEALER_ACE_KING)
    game.play(1)
    assert game.phase is RussianPhase.COMPLETE
    with pytest.raises(IllegalDecisionError) as error:
        game.fold(1)
    assert reason_of(error) == "WRONG_PHASE"
    with pytest.raises(IllegalDecisionError) as error:
        game.take_ante(1)
    assert reason_of(error) == "WRONG_PHASE"


def test_unknown_box_is_refused():
    game = russian_round([TRIPS], DEALER_ACE_KING)
    with pytest.raises(IllegalDecisionError) as error:
        game.play(7)
    assert reason_of(error) == "UNKNOWN_BOX"


def test_exchange_is_not_offered_when_the_deck_cannot_cover_it():
    # Seven boxes use 35 cards and the dealer 5: 12 are left, two of them kept for a bought game.
    wagers = [BoxWager(i, f"p{i}", 10) for i in range(1, 8)]
    game = RussianPokerRound(list(range(52)), wagers)
    for box, count in ((1, 5), (2, 3)):
        game.exchange(box, game.cards(box)[:count])
        game.fold(box)
    # Four cards left: two for an exchange, two for a bought game.
    assert DecisionKind.EXCHANGE in game.legal_decisions(3)
    with pytest.raises(IllegalDecisionError) as error:
        game.exchange(3, game.cards(3)[:3])
    assert reason_of(error) == "DECK_EXHAUSTED"
    game.exchange(3, game.cards(3)[:2])
    assert game.legal_decisions(3) == {DecisionKind.PLAY, DecisionKind.FOLD}
