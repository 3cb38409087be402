"""Worked examples for the Russian Poker bonus bet and the jackpot shares."""

from __future__ import annotations

import pytest

from house_games.errors import InvalidSettingsError, InvalidWagerError
from house_games.pay_tables import BonusPayTable
from house_games.russian_poker_bonus import jackpot_share
from house_games.settings import RussianPokerSettings
from house_games.settlement import Account, Direction, Item, Outcome
from house_games.wagers import BoxWager

from .russian_poker_rounds import DEALER_ACE_KING, russian_round


def dark_bonus_box(box: int = 1, player: str = "p1", bonus: int = 5) -> BoxWager:
    return BoxWager(box, player, 10, dark=True, bonus=bonus)


@pytest.mark.parametrize(
    ("hand", "odds"),
    [
        ("7s 7d 5c 5h 9s", 2),  # two pairs 2:1
        ("7s 7d 7c 5h 9s", 7),  # three of a kind 7:1
        ("5c 6d 7s 8h 9s", 40),  # straight 40:1
        ("2h 5h 7h 9h Jh", 50),  # flush 50:1
        ("7s 7d 7c 5h 5s", 70),  # full house 70:1
        ("7s 7d 7c 7h 9s", 200),  # four of a kind 200:1
    ],
)
def test_default_bonus_table_fixed_odds(hand: str, odds: int):
    game = russian_round([hand], DEALER_ACE_KING, wagers=[dark_bonus_box()], jackpot=1000)
    bonus = game.settle().box(1).line(Item.BONUS)
    assert (bonus.outcome, bonus.amount, bonus.direction) == (
        Outcome.WON,
        5 * odds,
        Direction.HOUSE_TO_PLAYER,
    )


@pytest.mark.parametrize("hand", ["7s 7d 5c Jh 9s", "Ad Kd Qc Jh 9s", "2d 5d 6c 8h Ts"])
def test_bonus_below_two_pairs_is_lost(hand: str):
    game = russian_round([hand], DEALER_ACE_KING, wagers=[dark_bonus_box(bonus=8)])
    box = game.settle().box(1)
    bonus, contribution = box.line(Item.BONUS), box.line(Item.JACKPOT_CONTRIBUTION)
    # Decision 9: the default 25% of the lost stake goes to the jackpot, the rest to the house bank.
    assert (bonus.outcome, bonus.amount, bonus.direction) == (Outcome.LOST, 6, Direction.PLAYER_TO_HOUSE)
    assert (contribution.outcome, contribution.amount, contribution.direction, contribution.reason) == (
        Outcome.LOST,
        2,
        Direction.PLAYER_TO_JACKPOT,
        "JACKPOT_CONTRIBUTION_25_PERCENT",
    )


LOSING_BONUS_HAND = "2d 5d 6c 8c Ts"


@pytest.mark.parametrize(
    ("percent", "stake", "to_jackpot"),
    [(25, 8, 2), (25, 10, 2), (25, 3, 0), (0, 10, 0), (100, 7, 7), (33, 100, 33), (1, 99, 0)],
)
def test_a_lost_bonus_is_split_between_jackpot_and_house_bank_rounded_down(
    percent: int, stake: int, to_jackpot: int
):
    settings = RussianPokerSettings(jackpot_contribution_percent=percent)
    game = russian_round(
        [LOSING_BONUS_HAND],
        DEALER_ACE_KING,
        wagers=[dark_bonus_box(bonus=stake)],
        settings=settings,
        jackpot=500,
    )
    settlement = game.settle()
    box = settlement.box(1)
    # The jackpot gets whole chips, rounded down; the remainder goes to the house bank as before.
    assert box.line(Item.BONUS).amount == stake - to_jackpot
    assert box.has(Item.JACKPOT_CONTRIBUTION) is (to_jackpot > 0)
    assert settlement.jackpot_after == 500 + to_jackpot
    assert settlement.delta(Account.JACKPOT) == to_jackpot
    # The player loses the whole bonus stake whatever the split (the main game is settled beside it).
    plain = russian_round(
        [LOSING_BONUS_HAND],
        DEALER_ACE_KING,
        wagers=[dark_bonus_box(bonus=stake)],
        settings=RussianPokerSettings(jackpot_contribution_percent=0),
        jackpot=500,
    ).settle()
    assert settlement.player_deltas() == plain.player_deltas()
    assert settlement.delta(Account.HOUSE_BANK) == plain.delta(Account.HOUSE_BANK) - to_jackpot


def test_won_bonus_stakes_give_nothing_to_the_jackpot():
    # Fixed odds are paid by the house bank, jackpot shares by the jackpot, as without the setting.
    fixed = russian_round(
        ["7s 7d 5c 5h 9s"], DEALER_ACE_KING, wagers=[dark_bonus_box()], jackpot=1000
    ).settle()
    assert not fixed.box(1).has(Item.JACKPOT_CONTRIBUTION)
    assert fixed.jackpot_after == 1000
    flush = russian_round(
        ["5s 6s 7s 8s 9s"], DEALER_ACE_KING, wagers=[dark_bonus_box()], jackpot=1000
    ).settle()
    assert not flush.box(1).has(Item.JACKPOT_CONTRIBUTION)
    assert flush.jackpot_after == 900


def test_contributions_count_for_later_rounds_not_for_shares_in_the_same_round():
    # Box 1 loses its bonus (2 of 10 to the jackpot), box 2 hits a straight flush: its 10% share is
    # taken from the balance before the round, and the contribution is in the balance after it.
    wagers = [dark_bonus_box(1, "p1", bonus=10), dark_bonus_box(2, "p2")]
    game = russian_round([LOSING_BONUS_HAND, "5h 6h 7h 8h 9h"], DEALER_ACE_KING, wagers=wagers, jackpot=1000)
    settlement = game.settle()
    assert settlement.box(1).line(Item.JACKPOT_CONTRIBUTION).amount == 2
    assert settlement.box(2).line(Item.JACKPOT).amount == 100
    assert settlement.jackpot_after == 1000 + 2 - 100
    # One net transfer per player and account pair: p1 pays the jackpot, the jackpot pays p2.
    jackpot_transfers = [
        t for t in settlement.net_transfers() if Account.JACKPOT in (t.source, t.destination)
    ]
    assert [(t.player, t.source, t.destination, t.amount) for t in jackpot_transfers] == [
        ("p1", Account.PLAYER, Account.JACKPOT, 2),
        ("p2", Account.JACKPOT, Account.PLAYER, 100),
    ]


def test_bonus_is_settled_at_the_deal_before_any_exchange():
    wagers = [dark_bonus_box(1, "p1"), BoxWager(2, "p2", 10)]
    game = russian_round(["7s 7d 5c 5h 9s", "2d 5d 6c 8h Ts"], DEALER_ACE_KING, wagers=wagers)
    # Known before box 2 has even decided whether to exchange.
    (result,) = game.bonus_results
    assert (result.box, result.lines[0].amount) == (1, 10)


def test_bonus_does_not_depend_on_the_main_game():
    # Two pairs pays the bonus even though the dealer's straight beats the box.
    game = russian_round(["7s 7d 5c 5h 9s"], "9d Tc Jh Qs Kd", wagers=[dark_bonus_box()])
    box = game.settle().box(1)
    assert box.line(Item.BET).outcome is Outcome.LOST
    assert box.line(Item.BONUS).amount == 10


def test_straight_flush_wins_ten_percent_of_the_jackpot_rounded_down():
    game = russian_round(["5s 6s 7s 8s 9s"], DEALER_ACE_KING, wagers=[dark_bonus_box()], jackpot=1009)
    settlement = game.settle()
    box = settlement.box(1)
    assert box.line(Item.BONUS).outcome is Outcome.RETURNED
    jackpot = box.line(Item.JACKPOT)
    assert (jackpot.amount, jackpot.direction) == (100, Direction.JACKPOT_TO_PLAYER)
    # The remainder stays in the jackpot.
    assert settlement.jackpot_after == 909
    assert settlement.delta(Account.JACKPOT) == -100


def test_royal_flush_wins_the_whole_jackpot():
    # A stake of 7 covers it: awards are capped at 20,000 stakes (decision 13).
    game = russian_round(
        ["Ts Js Qs Ks As"], "2c 2d 4d 3h 5s", wagers=[dark_bonus_box(bonus=7)], jackpot=123_457
    )
    settlement = game.settle()
    assert settlement.box(1).line(Item.JACKPOT).amount == 123_457
    assert settlement.jackpot_after == 0


def test_two_jackpot_hands_in_one_round_are_paid_in_dealing_order_from_what_is_left():
    wagers = [dark_bonus_box(1, "p1"), dark_bonus_box(2, "p2")]
    game = russian_round(["5s 6s 7s 8s 9s", "5h 6h 7h 8h 9h"], DEALER_ACE_KING, wagers=wagers, jackpot=1000)
    settlement = game.settle()
    assert settlement.box(1).line(Item.JACKPOT).amount == 100
    assert settlement.box(2).line(Item.JACKPOT).amount == 90  # 10% of the 900 left
    assert settlement.jackpot_after == 810


def test_jackpot_percentages_are_settings():
    table = BonusPayTable(jackpot_percent={"STRAIGHT_FLUSH": 25, "ROYAL_FLUSH": 50})
    settings = RussianPokerSettings(bonus_pay_table=table)
    game = russian_round(
        ["5s 6s 7s 8s 9s"], DEALER_ACE_KING, wagers=[dark_bonus_box()], settings=settings, jackpot=1000
    )
    assert game.settle().box(1).line(Item.JACKPOT).amount == 250


@pytest.mark.parametrize(("balance", "percent", "share"), [(0, 10, 0), (9, 10, 0), (19, 10, 1), (7, 100, 7)])
def test_jackpot_share_rounds_down(balance: int, percent: int, share: int):
    assert jackpot_share(balance, percent) == share


def test_negative_jackpot_balance_is_refused():
    with pytest.raises(InvalidSettingsError) as error:
        russian_round(["7s 7d 5c 5h 9s"], DEALER_ACE_KING, jackpot=-1)
    assert error.value.reason == "INVALID_JACKPOT"


def test_bonus_on_a_light_box_is_an_operator_setting_settled_on_the_dealt_cards():
    # Decision 12, the other reading: the bonus "is paid before the exchange", which only light boxes
    # make. With the setting on, a light box bets it and it is settled on the five dealt cards, whatever
    # the box exchanges afterwards.
    settings = RussianPokerSettings(bonus_on_light_boxes=True)
    game = russian_round(
        ["7s 7d 5c 5h 9s"], DEALER_ACE_KING, "2c",
        wagers=[BoxWager(1, "p1", 10, bonus=5)], settings=settings,
    )  # fmt: skip
    (result,) = game.bonus_results
    assert (result.box, result.lines[0].outcome, result.lines[0].amount) == (1, Outcome.WON, 10)
    game.exchange(1, [game.cards(1)[0]])  # breaks the two pairs: the bonus stays won
    game.fold(1)
    box = game.settle().box(1)
    assert box.line(Item.BONUS).amount == 10
    assert box.player_delta == 10 - 10 - 10  # bonus won, exchange fee and ante lost


def test_bonus_on_a_light_box_is_refused_by_default():
    with pytest.raises(InvalidWagerError) as error:
        russian_round(["7s 7d 5c 5h 9s"], DEALER_ACE_KING, wagers=[BoxWager(1, "p1", 10, bonus=5)])
    assert error.value.reason == "BONUS_ON_LIGHT_BOX"
