"""A hand with no pot at all exports. Found by tests/e2e: with a dead small blind (the seating model's
"no small blind this hand") and everybody folding to the big blind, the big blind's bet is returned
uncalled and the hand has no pot; the PokerStars export then failed with INTERNAL."""

from __future__ import annotations

import random

from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.hand import Hand
from services.history.exports import open_hand_history, pokerstars
from services.history.records import check_hand_record
from tests.history.engine_hands import _deck, record_of


def test_a_hand_folded_to_the_big_blind_with_a_dead_small_blind_has_no_pot_and_exports() -> None:
    seats = (SeatConfig(0, "ann", 500), SeatConfig(1, "bob", 500), SeatConfig(2, "cat", 500))
    config = HandConfig(
        variant=Variant.NO_LIMIT,
        seats=seats,
        button=0,
        small_blind=5,
        big_blind=10,
        deck=_deck(random.Random(3), board="", players=3),
        rake=RakeRule(0, 0),
        hand_id="dead-sb",
        small_blind_seat=None,
        big_blind_seat=2,
    )
    hand = Hand(config)
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        hand.fold(legal.seat)
    record = record_of(hand, table_id="room-classic.1")
    check_hand_record(record)
    assert len(record.pots) == 0
    text = pokerstars.render([(1, record)], "ann")
    assert "Uncalled bet (10) returned to Cat" in text
    assert "Total pot 0 | Rake 0" in text
    assert open_hand_history.render([(1, record)], "ann")
