"""The house games' pay tables in the page's rules sheet (web/src/house_pay_tables.ts, run in Node) are
the ones the table service pays by (issue 36: the pay table at hand). No view carries them: the
service plays every house room with the library's defaults (`services.table.house.house_round.settings_for`),
so the page writes them out and this test holds the two together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from house_games.settings import CasinoHoldemSettings, RussianPokerSettings
from services.table.house.house_round import HouseGame, HouseRoom, settings_for
from tests.node import run_web_script


def _page_tables(tmp_path: Path) -> dict[str, Any]:
    (tables,) = run_web_script("e2e/house_pay_tables_cases.ts", {}, tmp_path, "the house pay tables")
    return dict(tables)


def _served(game: HouseGame) -> CasinoHoldemSettings | RussianPokerSettings:
    room = HouseRoom("room", game, pool=1, boxes=7, min_ante=10, max_ante=1_000, max_payout=50_000)
    return settings_for(room)


def test_the_rules_sheet_shows_the_pay_tables_the_table_service_pays_by(tmp_path: Path) -> None:
    page = _page_tables(tmp_path)
    casino = _served(HouseGame.CASINO_HOLDEM)
    russian = _served(HouseGame.RUSSIAN_POKER)
    assert isinstance(casino, CasinoHoldemSettings)
    assert isinstance(russian, RussianPokerSettings)
    assert page["casinoHoldemAnte"] == dict(casino.pay_table.ante_odds)
    assert page["casinoHoldemBet"] == 1  # the rules: the bet pays 1:1 against a qualified dealer
    assert page["russianPokerBet"] == dict(russian.pay_table.odds)
    assert page["russianPokerBonus"] == dict(russian.bonus_pay_table.odds)
    assert page["russianPokerJackpotPercent"] == dict(russian.bonus_pay_table.jackpot_percent)


def test_the_pay_tables_read_best_hand_first_with_every_combination_named_in_both_languages(
    tmp_path: Path,
) -> None:
    page = _page_tables(tmp_path)
    for table, odds in page["order"].items():
        assert odds == sorted(odds, reverse=True), table
    for language in ("ru", "en"):
        names = page["names"][language]
        assert names, language
        assert all(names.values()), (language, names)
        assert all(name != code and "_" not in name for code, name in names.items()), names
