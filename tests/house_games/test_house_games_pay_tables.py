"""Pay tables and table settings: the operator's defaults, JSON loading and refusal of bad values."""

from __future__ import annotations

from fractions import Fraction

import pytest

from house_games.errors import InvalidSettingsError
from house_games.pay_tables import BonusPayTable, CasinoHoldemPayTable, RussianPokerPayTable
from house_games.russian_combinations import RussianCombination
from house_games.russian_poker_bonus import (
    FIVE_CARD_COMBINATION_COUNTS,
    FIVE_CARD_HANDS,
    bonus_return_to_player,
)
from house_games.settings import CasinoHoldemSettings, RussianPokerSettings, StillNoGameAnte
from poker_engine.evaluator import HandCategory


def test_casino_holdem_default_ante_pay_table_and_table_maximum():
    table = CasinoHoldemPayTable()
    expected = {
        HandCategory.ROYAL_FLUSH: 100,
        HandCategory.STRAIGHT_FLUSH: 20,
        HandCategory.FOUR_OF_A_KIND: 10,
        HandCategory.FULL_HOUSE: 3,
        HandCategory.FLUSH: 2,
    }
    for category in HandCategory:
        assert table.ante(category) == expected.get(category, 1)  # straight or lower 1:1
    assert CasinoHoldemSettings().table_maximum == 50_000


def test_russian_poker_default_main_pay_table():
    table = RussianPokerPayTable()
    odds = [table.bet(kind) for kind in RussianCombination]
    assert odds == [0, 1, 1, 2, 3, 4, 5, 7, 20, 50, 100]
    assert RussianPokerSettings().table_maximum == 50_000


def test_russian_poker_default_bonus_table_and_jackpot_percentages():
    table = BonusPayTable()
    fixed = {
        kind: table.fixed_odds(kind) for kind in RussianCombination if table.fixed_odds(kind) is not None
    }
    assert fixed == {
        RussianCombination.TWO_PAIR: 2,
        RussianCombination.THREE_OF_A_KIND: 7,
        RussianCombination.STRAIGHT: 40,
        RussianCombination.FLUSH: 50,
        RussianCombination.FULL_HOUSE: 70,
        RussianCombination.FOUR_OF_A_KIND: 200,
    }
    assert table.jackpot_share(RussianCombination.STRAIGHT_FLUSH) == 10
    assert table.jackpot_share(RussianCombination.ROYAL_FLUSH) == 100


def test_settings_load_from_json_like_mappings_and_partial_tables_override_named_entries():
    settings = RussianPokerSettings.from_mapping(
        {"odds": {"ACE_KING": 2}, "jackpot_percent": {"STRAIGHT_FLUSH": 20}, "dealer_upcard": False}
    )
    assert settings.pay_table.bet(RussianCombination.ACE_KING) == 2
    assert settings.pay_table.bet(RussianCombination.ROYAL_FLUSH) == 100
    assert settings.bonus_pay_table.jackpot_share(RussianCombination.STRAIGHT_FLUSH) == 20
    assert settings.dealer_upcard is False
    assert (settings.bonus_on_light_boxes, settings.still_no_game_ante) == (False, StillNoGameAnte.PAY)
    chosen = RussianPokerSettings.from_mapping({"bonus_on_light_boxes": True, "still_no_game_ante": "RETURN"})
    assert (chosen.bonus_on_light_boxes, chosen.still_no_game_ante) == (True, StillNoGameAnte.RETURN)
    assert (settings.jackpot_contribution_percent, chosen.jackpot_contribution_percent) == (25, 25)
    for percent in (0, 40, 100):
        picked = RussianPokerSettings.from_mapping({"jackpot_contribution_percent": percent})
        assert picked.jackpot_contribution_percent == percent
    holdem = CasinoHoldemSettings.from_mapping({"ante_odds": {"FLUSH": 3}, "table_maximum": 1000})
    assert holdem.pay_table.ante(HandCategory.FLUSH) == 3
    assert holdem.table_maximum == 1000


@pytest.mark.parametrize(
    "raw",
    [
        {"odds": {"ACE_KING": -1}},
        {"odds": {"PAIR_OF_JACKS": 1}},
        {"odds": {"FLUSH": 2.5}},
        {"jackpot_percent": {"ROYAL_FLUSH": 101}},
        {"table_maximum": 0},
        {"dealer_upcard": "yes"},
        {"bonus_stake": 0},
        {"max_boxes": 10},
        {"colour": "green"},
        {"bonus_on_light_boxes": "yes"},
        {"still_no_game_ante": "KEEP"},
        {"jackpot_contribution_percent": -1},
        {"jackpot_contribution_percent": 101},
        {"jackpot_contribution_percent": 12.5},
        {"jackpot_contribution_percent": True},
        {"jackpot_contribution_percent": "25"},
    ],
)
def test_bad_russian_poker_settings_are_refused(raw: dict[str, object]):
    with pytest.raises(InvalidSettingsError) as error:
        RussianPokerSettings.from_mapping(raw)
    assert error.value.reason == "INVALID_SETTINGS"


@pytest.mark.parametrize("raw", [{"ante_odds": {"FLUSH": -2}}, {"table_maximum": -5}, {"max_boxes": 30}])
def test_bad_casino_holdem_settings_are_refused(raw: dict[str, object]):
    with pytest.raises(InvalidSettingsError):
        CasinoHoldemSettings.from_mapping(raw)


def test_pay_tables_are_frozen():
    table = RussianPokerPayTable()
    with pytest.raises(TypeError):
        table.odds["ACE_KING"] = 5  # type: ignore[index]


def test_five_card_combination_counts_are_the_known_totals():
    assert sum(FIVE_CARD_COMBINATION_COUNTS.values()) == FIVE_CARD_HANDS == 2_598_960


def test_exact_bonus_return_of_the_default_table():
    fixed = Fraction(
        123_552 * 3 + 54_912 * 8 + 10_200 * 41 + 5_108 * 51 + 3_744 * 71 + 624 * 201 + 40, 2_598_960
    )
    assert bonus_return_to_player(BonusPayTable(), Fraction(0)) == fixed
    # Each chip of jackpot per chip of stake adds 10% of the 36 straight flushes and all 4 royals.
    assert bonus_return_to_player(BonusPayTable(), Fraction(1)) - fixed == Fraction(
        36 * 10 + 4 * 100, 100 * 2_598_960
    )
