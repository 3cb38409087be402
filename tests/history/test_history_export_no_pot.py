"""A walk with no small blind exports as PokerStars writes a walk. With a dead small blind (the seating
model's "no small blind this hand") and everybody folding to the big blind, the big blind's bet is
returned uncalled and the record has no pot. Found by tests/e2e: the PokerStars export then failed
with INTERNAL; after that it wrote `Total pot 0` and `Seat 3: Cat (big blind) lost`, a summary form
PokerStars never writes (docs/history.md lists the forms), which trackers cannot read, and the big
blind lost nothing. PokerStars writes a walk as the big blind collecting the pot, its own blind back
included: here the whole pot is its blind."""

from __future__ import annotations

import random
import re
import warnings
from datetime import datetime

from poker.history.v1 import history_pb2
from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.hand import Hand
from services.history.exports import open_hand_history, pokerstars
from services.history.records import Viewer, check_hand_record, view_for
from tests.history.engine_hands import START, _deck, record_of
from tests.history.export_readers import parse_with_poker_package
from tests.history.pokerkit_parsing import parse_pokerstars
from tests.history.test_history_exports import check_round_trip

# The summary line endings docs/history.md lists (PokerStars' words), after the position marks.
SUMMARY_FORMS = (
    r"folded (before Flop|on the Flop|on the Turn|on the River)( \(didn't bet\))?",
    r"showed \[[^\]]+\] and won \(\d+\)( with .+)?",
    r"showed \[[^\]]+\] and lost( with .+)?",
    r"mucked( \[[^\]]+\])?",
    r"collected \(\d+\)",
)


def dead_small_blind_walk(
    hand_id: str = "dead-sb", players: tuple[str, str, str] = ("ann", "bob", "cat"), start: datetime = START
) -> history_pb2.HandRecord:
    """Ann on the button, no small blind this hand, Cat posts the big blind 10; Ann and Bob fold."""
    seats = tuple(SeatConfig(seat, player, 500) for seat, player in enumerate(players))
    config = HandConfig(
        variant=Variant.NO_LIMIT,
        seats=seats,
        button=0,
        small_blind=5,
        big_blind=10,
        deck=_deck(random.Random(3), board="", players=3),
        rake=RakeRule(0, 0),
        hand_id=hand_id,
        small_blind_seat=None,
        big_blind_seat=2,
    )
    hand = Hand(config)
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        hand.fold(legal.seat)
    return record_of(hand, table_id="room-classic.1", hand_id=hand_id, start=start)


def summary_endings(text: str) -> list[str]:
    summary = text.split("*** SUMMARY ***\n", 1)[1]
    return [
        re.sub(r"^Seat \d+: \S+( \((button|small blind|big blind)\))* ", "", line)
        for line in summary.splitlines()
        if line.startswith("Seat ")
    ]


def test_a_walk_with_no_small_blind_exports_as_the_big_blind_collecting_its_blind() -> None:
    record = dead_small_blind_walk()
    check_hand_record(record)
    assert len(record.pots) == 0
    assert [s.net_result for s in record.seats] == [0, 0, 0]
    view = view_for(record, Viewer("ann"))
    assert view is not None
    text = pokerstars.render([(1, view)], "ann")
    assert "Cat: posts big blind 10\n" in text
    assert "Cat collected 10 from pot\n" in text
    assert "Total pot 10 | Rake 0\n" in text
    assert text.endswith("Seat 3: Cat (big blind) collected (10)\n")
    # Every summary line is one of the forms PokerStars writes (no bare `lost`), and the big blind's
    # chips are not counted twice (given back uncalled and collected).
    assert "Uncalled bet" not in text
    for ending in summary_endings(text):
        assert any(re.fullmatch(form, ending) for form in SUMMARY_FORMS), ending

    # PokerKit replays it (stacks unchanged, no decision but the folds) ...
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (parsed,) = parse_pokerstars(text)
    check_round_trip(parsed, view)
    # ... and the tracker-style reader reads the pot and its winner.
    (read,) = parse_with_poker_package(text)
    assert (read["total_pot"], read["winners"]) == (10, ["Cat (big blind)"])

    # OHH: the returned blind is a pot of its own that Cat takes back (docs/history.md, Exports).
    document = open_hand_history.hand_object(view, 1, "ann")["ohh"]
    assert [(p["amount"], [w["win_amount"] for w in p["player_wins"]]) for p in document["pots"]] == [
        (10, [10])
    ]
