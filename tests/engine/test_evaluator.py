from __future__ import annotations

import itertools
import random

import pytest

from poker_engine.cards import card_text, parse_cards
from poker_engine.errors import InvalidCardError, InvalidHandSizeError
from poker_engine.evaluator import HandCategory, evaluate, strength7, strength_of

# Known counts of all C(52, 5) = 2,598,960 five-card hands and all C(52, 7) = 133,784,560 seven-card
# hands by category (royal flush counted apart from other straight flushes).
FIVE_CARD_COUNTS = [1302540, 1098240, 123552, 54912, 10200, 5108, 3744, 624, 36, 4]
SEVEN_CARD_COUNTS = [23294460, 58627800, 31433400, 6461620, 6180020, 4047644, 3473184, 224848, 37260, 4324]


def value(text: str) -> int:
    return evaluate(parse_cards(text)).strength


@pytest.mark.parametrize(
    ("cards", "category", "words"),
    [
        ("As Ks Qs Js Ts 2d 3c", HandCategory.ROYAL_FLUSH, "Royal flush"),
        ("9h 8h 7h 6h 5h Ad Ac", HandCategory.STRAIGHT_FLUSH, "Straight flush, Nine high"),
        ("5d 4d 3d 2d Ad", HandCategory.STRAIGHT_FLUSH, "Straight flush, Five high"),
        ("9s 9d 9c 9h 2s 3d", HandCategory.FOUR_OF_A_KIND, "Four of a kind, Nines"),
        ("Ks Kd Kc Qh Qd 2c 2d", HandCategory.FULL_HOUSE, "Full house, Kings full of Queens"),
        ("Ks Kd Kc Qh Qd Qc 2d", HandCategory.FULL_HOUSE, "Full house, Kings full of Queens"),
        ("2c 3c 4c 5c 7c 8d 8h", HandCategory.FLUSH, "Flush, Seven high"),
        ("As 2d 3c 4h 5s 9d 9c", HandCategory.STRAIGHT, "Straight, Five high"),
        ("Ts Jd Qc Kh As", HandCategory.STRAIGHT, "Straight, Ace high"),
        ("7s 7d 7c Ah 2d", HandCategory.THREE_OF_A_KIND, "Three of a kind, Sevens"),
        ("As Ad Kc Kh 2s", HandCategory.TWO_PAIR, "Two pair, Aces and Kings"),
        ("As Ad Kc Kh 2s 2d 3c", HandCategory.TWO_PAIR, "Two pair, Aces and Kings"),
        ("Js Jd 2c 5h 8s", HandCategory.ONE_PAIR, "One pair, Jacks"),
        ("As Jd 2c 5h 8s 9d", HandCategory.HIGH_CARD, "High card, Ace"),
    ],
)
def test_category_and_words_for_people(cards: str, category: HandCategory, words: str) -> None:
    hand = evaluate(parse_cards(cards))
    assert hand.category is category
    assert hand.describe() == words
    assert len(hand.best_five) == 5
    assert set(hand.best_five) <= set(parse_cards(cards))
    assert evaluate(hand.best_five).strength == hand.strength


def test_best_five_is_ordered_by_importance() -> None:
    hand = evaluate(parse_cards("2s Kd 2d Kc 9h 4c 4d"))
    assert [card_text(card)[0] for card in hand.best_five] == ["K", "K", "4", "4", "9"]


def test_wheel_is_the_lowest_straight_and_ace_also_plays_high() -> None:
    wheel, six_high, broadway = value("As 2d 3c 4h 5s"), value("2d 3c 4h 5s 6d"), value("Ts Jd Qc Kh As")
    assert wheel < six_high < broadway
    assert value("Ks As 2d 3c 4h") < wheel  # no wrap-around straight


def test_suits_never_rank() -> None:
    assert value("As Kd Qc Jh 9s") == value("Ad Ks Qh Jc 9d")
    assert value("Ah Kh 9h 5h 2h") == value("As Ks 9s 5s 2s")


def test_kickers_decide_and_extra_cards_beyond_five_do_not() -> None:
    assert value("As Ad Kc 7h 2s") > value("Ac Ah Qc 7h 2s")
    assert value("As Ad Kc 7h 5s 3c 2d") == value("Ac Ah Kd 7s 5h 3d 2s")  # 3 and 2 play no part
    assert value("As Ad Kc 7h 5s") == value("As Ad Kc 7h 5s 3c 2d")


def test_strengths_compare_across_five_six_and_seven_cards() -> None:
    assert value("Ks Kd 2c 3h 4s 7d 9c") == value("Ks Kd 4s 7d 9c")
    assert value("Ks Kd 2c 3h 4s 7d") < value("Ks Kd 9c 7d 4s 3h 2c")


@pytest.mark.parametrize("size", [0, 4, 8])
def test_evaluator_takes_only_five_six_or_seven_cards(size: int) -> None:
    with pytest.raises(InvalidHandSizeError) as caught:
        evaluate(list(range(size)))
    assert caught.value.reason == "INVALID_HAND_SIZE"


def test_evaluator_refuses_duplicates_and_bad_cards() -> None:
    with pytest.raises(InvalidCardError):
        evaluate([1, 1, 2, 3, 4])
    with pytest.raises(InvalidCardError):
        evaluate([1, 2, 3, 4, 52])


def test_fast_path_matches_evaluate() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        cards = rng.sample(range(52), 7)
        assert strength7(*cards) == strength_of(cards) == evaluate(cards).strength


def test_all_five_card_hands_have_the_known_category_counts() -> None:
    counts = [0] * 10
    for cards in itertools.combinations(range(52), 5):
        counts[strength_of(cards) >> 20] += 1
    assert counts == FIVE_CARD_COUNTS


@pytest.mark.parametrize("size", [5, 6, 7])
def test_random_hands_rank_in_the_same_order_as_treys(size: int) -> None:
    treys = pytest.importorskip("treys")
    evaluator = treys.Evaluator()
    as_treys = [treys.Card.new(card_text(card)) for card in range(52)]
    rng = random.Random(size)
    rows = []
    for _ in range(20_000 if size == 7 else 5_000):
        cards = rng.sample(range(52), size)
        theirs = evaluator.evaluate([as_treys[c] for c in cards[:2]], [as_treys[c] for c in cards[2:]])
        rows.append((strength_of(cards), -theirs))  # treys: lower is better
    ours_order = sorted(range(len(rows)), key=lambda i: rows[i][0])
    for a, b in itertools.pairwise(ours_order):
        assert (rows[a][0] < rows[b][0]) == (rows[a][1] < rows[b][1])
        assert (rows[a][0] == rows[b][0]) == (rows[a][1] == rows[b][1])


@pytest.mark.slow
def test_all_seven_card_hands_have_the_known_category_counts() -> None:
    """133,784,560 hands through the trusted fast path; a few minutes, opt-in with --run-slow."""
    counts = [0] * 10
    for a, b, c, d, e in itertools.combinations(range(52), 5):
        for f in range(e + 1, 51):
            for g in range(f + 1, 52):
                counts[strength7(a, b, c, d, e, f, g) >> 20] += 1
    assert counts == SEVEN_CARD_COUNTS
