"""The simulator command: reproducible from its seed, honours a pay table file, prints the figures."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from house_games.basic_strategy import holdem_should_call, russian_cards_to_exchange
from house_games.russian_combinations import assess_hand
from house_games.simulate import main
from poker_engine.cards import rank_of
from poker_engine.evaluator import HandCategory, category_of, strength_of

from .house_games_decks import cards


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_same_seed_same_figures(capsys: pytest.CaptureFixture[str]):
    first = run(capsys, "casino-holdem", "--rounds", "300", "--seed", "7")
    second = run(capsys, "casino-holdem", "--rounds", "300", "--seed", "7")
    assert first == second
    assert "return to player" in first
    assert "95% CI" in first


def test_pay_table_file_changes_the_figures(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    default = run(capsys, "russian-poker", "--rounds", "300", "--seed", "3")
    generous = tmp_path / "table.json"
    generous.write_text(json.dumps({"odds": {"ONE_PAIR": 5, "ACE_KING": 5}}))
    changed = run(capsys, "russian-poker", "--rounds", "300", "--seed", "3", "--settings", str(generous))
    assert default != changed


def test_dark_box_with_bonus_reports_the_exact_bonus_return(capsys: pytest.CaptureFixture[str]):
    out = run(capsys, "russian-poker", "--rounds", "200", "--dark", "--bonus", "10", "--jackpot", "0")
    assert "bonus bet alone, exact: return to player 72.335%" in out


def test_basic_strategy_casino_holdem_calls_a_pair_and_folds_low_nothing():
    assert holdem_should_call(cards("7c 2d"), cards("7h Ks 9d"))
    assert not holdem_should_call(cards("5c 2d"), cards("7h Ks 9d"))


@pytest.mark.parametrize(
    ("hole", "flop"),
    [
        ("2h 4h", "Kh 9h 7h"),  # a flush made on the flop (issue 11: the coded strategy folded it)
        ("2h 3h", "4h 5h 6h"),  # a straight flush made on the flop
        ("2c 3d", "4h 5s 6c"),  # a straight made on the flop
        ("2c 3d", "Ah 4s 5c"),  # the wheel
    ],
)
def test_basic_strategy_casino_holdem_calls_a_flush_or_straight_made_on_the_flop(hole: str, flop: str):
    assert holdem_should_call(cards(hole), cards(flop))


def test_basic_strategy_casino_holdem_calls_every_pair_or_better_that_uses_a_hole_card():
    # The documented rule, checked against the evaluator on seeded random hands: whenever the hole
    # cards lift the five cards above what the flop alone holds (and to a pair or better), the
    # strategy calls.
    rng = random.Random(11)
    deck = list(range(52))
    for _ in range(20_000):
        rng.shuffle(deck)
        hole, flop = deck[:2], deck[2:5]
        made = category_of(strength_of(hole + flop))
        flop_alone = (HandCategory.HIGH_CARD, HandCategory.ONE_PAIR, HandCategory.THREE_OF_A_KIND)[
            max(Counter(rank_of(card) for card in flop).values()) - 1
        ]
        if made >= HandCategory.ONE_PAIR and made > flop_alone:
            assert holdem_should_call(hole, flop), (hole, flop)


def test_basic_strategy_russian_poker_exchanges():
    assert russian_cards_to_exchange(assess_hand(cards("9s 9d 5c 2h 3s"))) is None  # nines: play
    assert russian_cards_to_exchange(assess_hand(cards("4s 4d Jc 2h 7s"))) == cards("Jc 2h 7s")
    assert russian_cards_to_exchange(assess_hand(cards("2s 5s 9s Js 3d"))) == cards("3d")  # four-flush
    assert russian_cards_to_exchange(assess_hand(cards("As Qd 9c 5h 3s"))) == cards("Qd 9c 5h 3s")
    assert russian_cards_to_exchange(assess_hand(cards("Qs Td 8c 5h 3s"))) is None  # fold


def test_pay_table_entries_can_be_given_as_arguments(capsys: pytest.CaptureFixture[str]):
    default = run(capsys, "casino-holdem", "--rounds", "300", "--seed", "5")
    changed = run(capsys, "casino-holdem", "--rounds", "300", "--seed", "5", "--odds", "HIGH_CARD=3")
    assert default != changed


def test_bad_pay_table_argument_is_refused(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit):
        main(["casino-holdem", "--rounds", "10", "--odds", "FLUSH=lots"])


def test_bad_settings_file_is_reported_without_a_traceback(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"jackpot_percent": {"ROYAL_FLUSH": 150}}))
    with pytest.raises(SystemExit):
        main(["russian-poker", "--rounds", "10", "--settings", str(bad)])


def test_bonus_on_a_light_box_is_refused_by_the_simulator_too():
    with pytest.raises(SystemExit):
        main(["russian-poker", "--rounds", "10", "--bonus", "5"])


def test_jackpot_contribution_does_not_change_the_players_return(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
):
    # Decision 9: the contribution splits a lost bonus stake between the jackpot and the house bank;
    # the player loses the same, so every figure but the split of the bonus line is unchanged.
    figures = {}
    for percent in (0, 25, 100):
        table = tmp_path / f"table{percent}.json"
        table.write_text(json.dumps({"jackpot_contribution_percent": percent}))
        argv = ("russian-poker", "--rounds", "300", "--seed", "5", "--dark", "--bonus", "10")
        figures[percent] = run(capsys, *argv, "--jackpot", "1000", "--settings", str(table)).splitlines()
    unsplit = [line for line in figures[0] if "BONUS" not in line and "JACKPOT_CONTRIBUTION" not in line]
    for percent in (25, 100):
        assert [
            line for line in figures[percent] if "BONUS" not in line and "JACKPOT_CONTRIBUTION" not in line
        ] == unsplit
        assert any("player net on JACKPOT_CONTRIBUTION" in line for line in figures[percent])
    assert any("return to player" in line for line in unsplit)
    assert not any("JACKPOT_CONTRIBUTION" in line for line in figures[0])
