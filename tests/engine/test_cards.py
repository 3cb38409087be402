from __future__ import annotations

import pytest

from poker_engine.cards import FULL_DECK, card_text, cards_text, parse_card, parse_cards, rank_of, suit_of
from poker_engine.errors import EngineError, InvalidCardError


def test_encoding_is_four_times_rank_plus_suit() -> None:
    assert parse_card("2c") == 0
    assert parse_card("2d") == 1
    assert parse_card("3c") == 4
    assert parse_card("As") == 51
    assert rank_of(parse_card("Td")) == 8
    assert suit_of(parse_card("Td")) == 1


def test_every_card_round_trips_through_text() -> None:
    assert tuple(range(52)) == FULL_DECK
    assert [parse_card(card_text(card)) for card in FULL_DECK] == list(FULL_DECK)
    assert len({card_text(card) for card in FULL_DECK}) == 52


def test_card_lists_parse_spaced_or_concatenated() -> None:
    assert parse_cards("AsKd") == parse_cards("As Kd") == (51, 45)
    assert cards_text((51, 45)) == "As Kd"


@pytest.mark.parametrize("text", ["1s", "Ax", "AsK", "10h", "As As", "Asx"])
def test_bad_card_text_is_a_typed_invalid_card_error(text: str) -> None:
    with pytest.raises(InvalidCardError) as caught:
        parse_cards(text) if len(text) != 2 else parse_card(text)
    assert caught.value.reason == "INVALID_CARD"
    assert isinstance(caught.value, EngineError)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("card", [-1, 52, 3.0, "As", True])
def test_card_ints_outside_the_deck_are_refused(card: object) -> None:
    with pytest.raises(InvalidCardError):
        card_text(card)  # type: ignore[arg-type]
