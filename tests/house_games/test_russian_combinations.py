"""Russian Poker combinations on top of the shared evaluator: ace-king, combination cards, two combinations."""

from __future__ import annotations

import pytest

from house_games.russian_combinations import RussianCombination, assess_hand

from .house_games_decks import cards


@pytest.mark.parametrize(
    ("hand", "kind", "combination_cards"),
    [
        ("Ad Kc 9h 5s 2d", RussianCombination.ACE_KING, "Ad Kc"),
        ("Ad Qc 9h 5s 2d", RussianCombination.NO_COMBINATION, ""),
        ("7s 7d 5c Jh 9s", RussianCombination.ONE_PAIR, "7s 7d"),
        ("7s 7d 5c 5h 9s", RussianCombination.TWO_PAIR, "7s 7d 5h 5c"),
        ("7s 7d 7c 5h 9s", RussianCombination.THREE_OF_A_KIND, "7s 7d 7c"),
        ("7s 7d 7c 7h 9s", RussianCombination.FOUR_OF_A_KIND, "7s 7h 7d 7c"),
        ("Ad 2c 3h 4s 5d", RussianCombination.STRAIGHT, "5d 4s 3h 2c Ad"),
    ],
)
def test_combination_and_the_cards_it_uses(hand: str, kind: RussianCombination, combination_cards: str):
    main = assess_hand(cards(hand)).main
    assert main.kind is kind
    assert set(main.cards) == set(cards(combination_cards))


def test_ace_king_ranks_above_any_high_card_and_below_any_pair():
    ace_king = assess_hand(cards("Ad Kc 4h 3s 2d")).strength
    ace_queen = assess_hand(cards("Ad Qc Jh 9s 8d")).strength
    deuces = assess_hand(cards("2c 2d 3h 4s 6d")).strength
    assert ace_queen < ace_king < deuces


def test_kickers_are_not_part_of_a_combination_so_a_kicker_ace_king_is_a_second_combination():
    hand = assess_hand(cards("3s 3d Ac Kh 9s"))
    assert hand.main.kind is RussianCombination.ONE_PAIR
    assert hand.second is not None
    assert hand.second.kind is RussianCombination.ACE_KING


def test_six_card_straight_gives_two_straights():
    hand = assess_hand(cards("5c 6d 7s 8h 9s Th"))
    assert hand.main.kind is RussianCombination.STRAIGHT
    assert hand.second is not None
    assert hand.second.kind is RussianCombination.STRAIGHT


def test_six_card_full_house_with_a_spare_card_has_no_second_combination():
    hand = assess_hand(cards("7s 7d 7c 5h 5s 2d"))
    assert hand.main.kind is RussianCombination.FULL_HOUSE
    assert hand.second is None


def test_second_combination_is_the_best_one_available():
    # With the second nine, both a pair of nines and a second straight include a new card; the
    # straight is the higher combination, so it is the one paid.
    hand = assess_hand(cards("5c 6d 7s 8h 9s 9h"))
    assert hand.main.kind is RussianCombination.STRAIGHT
    assert hand.second is not None
    assert hand.second.kind is RussianCombination.STRAIGHT


@pytest.mark.slow
def test_golden_counts_of_all_five_card_hands():
    # Perft-style: every one of the 2,598,960 hands, classified as the bonus bet sees it.
    from collections import Counter
    from itertools import combinations

    from house_games.russian_combinations import combination_of
    from house_games.russian_poker_bonus import FIVE_CARD_COMBINATION_COUNTS
    from poker_engine.evaluator import evaluate

    counts = Counter(combination_of(evaluate(five)).kind for five in combinations(range(52), 5))
    assert counts == FIVE_CARD_COMBINATION_COUNTS
