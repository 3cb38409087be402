"""The Russian Poker bonus returns less than it costs, whatever the stake and the jackpot (issue 23,
item 7; decision 13 in docs/house-games.md).

On the old code jackpot shares did not scale with the stake: with a 300,039-chip jackpot a 1-chip
bonus returned about 160% of its stake (a royal flush won the whole jackpot for one chip). Now a
jackpot hand wins its percentage of the jackpot, but at most that percentage of
`jackpot_award_stakes` times the bonus stake, and settings under which the bonus could return 100%
or more at some jackpot are refused.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from house_games.errors import InvalidSettingsError
from house_games.pay_tables import BonusPayTable
from house_games.russian_poker_bonus import bonus_return_to_player, jackpot_award, max_bonus_return
from house_games.settings import RussianPokerSettings
from house_games.settlement import Item
from house_games.simulate import main as house_sim

from .russian_poker_rounds import russian_round
from .test_russian_poker_bonus import dark_bonus_box

ROYAL = "Ts Js Qs Ks As"
DEALER_NO_GAME = "2c 2d 4d 3h 5s"


@pytest.mark.parametrize("stake", [1, 5, 100, 10_000])
@pytest.mark.parametrize("jackpot", [0, 1_000, 300_039, 10**9, 10**15])
def test_the_bonus_returns_less_than_its_stake_at_any_jackpot(stake: int, jackpot: int) -> None:
    table = RussianPokerSettings()
    exact = bonus_return_to_player(
        table.bonus_pay_table, Fraction(jackpot, stake), table.jackpot_award_stakes
    )
    assert exact < 1
    assert exact <= max_bonus_return(table.bonus_pay_table, table.jackpot_award_stakes) < 1


def test_the_case_of_the_issue_a_one_chip_bonus_and_a_300_039_jackpot() -> None:
    table = RussianPokerSettings()
    old_rule = bonus_return_to_player(table.bonus_pay_table, Fraction(300_039, 1))
    assert old_rule > Fraction(3, 2)  # what the old code paid: about 160%
    game = russian_round([ROYAL], DEALER_NO_GAME, wagers=[dark_bonus_box(bonus=1)], jackpot=300_039)
    settlement = game.settle()
    won = settlement.box(1).line(Item.JACKPOT).amount
    assert won == table.jackpot_award_stakes  # 100% of the cap for one chip, not the whole jackpot
    assert settlement.jackpot_after == 300_039 - won


def test_a_stake_large_enough_still_wins_the_whole_jackpot() -> None:
    table = RussianPokerSettings()
    stake = -(-300_039 // table.jackpot_award_stakes)  # the smallest stake whose cap covers it
    game = russian_round([ROYAL], DEALER_NO_GAME, wagers=[dark_bonus_box(bonus=stake)], jackpot=300_039)
    assert game.settle().box(1).line(Item.JACKPOT).amount == 300_039


def test_settings_under_which_the_bonus_could_pay_more_than_it_costs_are_refused() -> None:
    with pytest.raises(InvalidSettingsError):
        RussianPokerSettings(jackpot_award_stakes=10**6)
    generous = BonusPayTable(odds={**BonusPayTable().odds, "FOUR_OF_A_KIND": 5000})
    with pytest.raises(InvalidSettingsError):
        RussianPokerSettings(bonus_pay_table=generous)
    with pytest.raises(InvalidSettingsError):
        RussianPokerSettings(jackpot_award_stakes=0)
    assert RussianPokerSettings(jackpot_award_stakes=90_000).jackpot_award_stakes == 90_000


@settings(max_examples=300, deadline=None)
@given(
    balance=st.integers(0, 10**15),
    stake=st.integers(1, 10**6),
    percent=st.integers(1, 100),
    cap=st.integers(1, 94_000),
)
def test_a_jackpot_award_is_whole_chips_within_the_jackpot_and_the_stakes_cap(
    balance: int, stake: int, percent: int, cap: int
) -> None:
    award = jackpot_award(balance, percent, stake, cap)
    assert type(award) is int
    assert 0 <= award <= balance * percent // 100
    assert award <= stake * cap * percent // 100
    assert award in (balance * percent // 100, stake * cap * percent // 100)


def test_the_simulator_reports_the_bonus_return_at_that_jackpot_and_at_the_worst(
    capsys: pytest.CaptureFixture[str],
) -> None:
    house_sim(["russian-poker", "--rounds", "200", "--dark", "--bonus", "1", "--jackpot", "300039"])
    out = capsys.readouterr().out
    at_jackpot = next(line for line in out.splitlines() if "bonus bet alone, exact" in line)
    worst = next(line for line in out.splitlines() if "at any jackpot" in line)
    for line in (at_jackpot, worst):
        assert float(line.rsplit(" ", 1)[1].rstrip("%")) < 100.0, line
