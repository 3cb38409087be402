"""A golden corpus of exported hands read back by two independent readers per format (issue 25 items
5-9): PokerStars text by PokerKit and by the `poker` package, Open Hand History by the spec's storage
format and ohh-pydantic (tests/history/export_readers.py). The corpus (tests/history/golden/) holds
all-ins with several side pots, a single side pot, split pots, walks, mucks, rake and fixed limit, each
hand in the view of one of its players; `POKER_REGENERATE_GOLDEN=1` rewrites it after a deliberate
change (review the diff).
"""

from __future__ import annotations

import os
import re
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker_engine.cards import parse_cards
from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.evaluator import evaluate
from poker_engine.hand import Hand
from services.history.exports import open_hand_history, pokerstars
from services.history.exports.names import export_names
from services.history.exports.pokerstars_words import hand_name
from services.history.records import Viewer, view_for
from tests.history.engine_hands import START, record_of, varied_records
from tests.history.export_readers import (
    as_utc,
    parse_with_poker_package,
    read_ohh_stream,
    validate_with_ohh_pydantic,
)
from tests.history.pokerkit_parsing import parse_pokerstars
from tests.history.test_history_export_no_pot import dead_small_blind_walk
from tests.history.test_history_exports import check_ohh, check_round_trip

GOLDEN = Path(__file__).parent / "golden"
PLAYED = 42
HANDS = PLAYED + 1


def corpus() -> list[tuple[history_pb2.HandRecord, str]]:
    """Each hand with the player whose view it is exported in (seat by seat, so every position reads),
    then a walk with no small blind (the hand with no pot, in the view of a player who folded)."""
    records = varied_records(PLAYED, seed=25, table_id="room-classic.1", prefix="p")
    played = [
        (record, record.seats[number % len(record.seats)].player_id) for number, record in enumerate(records)
    ]
    walk = dead_small_blind_walk("p-dead-sb", ("p2", "p5", "p7"), START + timedelta(minutes=PLAYED))
    return [*played, (walk, "p5")]


def exported_total_pot(record: history_pb2.HandRecord) -> int:
    """The total pot the PokerStars text states: the pots with their rake; a walk with no small blind
    has none, and its text has the big blind collect its blind back as the pot."""
    if record.pots:
        return sum(pot.amount + pot.rake for pot in record.pots)
    return sum(a.amount for a in record.actions if a.kind == "UNCALLED_RETURN")


def views() -> list[tuple[int, history_pb2.HandRecord, str]]:
    out = []
    for number, (record, hero) in enumerate(corpus()):
        view = view_for(record, Viewer(hero))
        assert view is not None
        out.append((number, view, hero))
    return out


def pokerstars_text() -> str:
    return "".join(pokerstars.render([(number, view)], hero) + "\n\n" for number, view, hero in views())


def ohh_text() -> str:
    return "".join(open_hand_history.render([(number, view)], hero) for number, view, hero in views())


def test_the_corpus_has_every_shape_the_issue_names() -> None:
    shapes = {
        "several side pots": lambda r: len(r.pots) >= 3,
        "one side pot": lambda r: len(r.pots) == 2,
        "split pot": lambda r: any(len(p.winner_seats) > 1 for p in r.pots),
        "walk": lambda r: not r.board and not any(a.kind in ("CALL", "RAISE", "BET") for a in r.actions),
        "walk with no small blind (no pot)": lambda r: not r.pots,
        "muck": lambda r: any(a.kind == "MUCK" for a in r.actions),
        "rake": lambda r: r.rake > 0,
        "fixed limit": lambda r: r.variant == common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM,
    }
    records = [record for record, _ in corpus()]
    missing = [name for name, has in shapes.items() if not any(has(r) for r in records)]
    assert not missing


@pytest.mark.parametrize(("name", "render"), [("corpus.txt", pokerstars_text), ("corpus.ohh", ohh_text)])
def test_the_golden_corpus_is_what_the_exports_write(name: str, render: object) -> None:
    text = render()  # type: ignore[operator]
    path = GOLDEN / name
    if os.environ.get("POKER_REGENERATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text()


def test_pokerstars_corpus_reads_back_in_pokerkit_and_in_the_poker_package() -> None:
    text = (GOLDEN / "corpus.txt").read_text()
    records = [view for _, view, _ in views()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = list(parse_pokerstars(text))
    assert len(parsed) == len(records)
    for hand_history, record in zip(parsed, records, strict=True):
        check_round_trip(hand_history, record)
    read = parse_with_poker_package(text)
    assert len(read) == len(records)
    for hand, (number, record, hero) in zip(read, views(), strict=True):
        names = export_names(record)
        assert hand["ident"] == str(number)
        # The Eastern Time of the header is the hand's start (item 5).
        assert as_utc(datetime.fromisoformat(hand["date"])) == record.start_time.ToDatetime(tzinfo=UTC)
        assert hand["players"] == {names[s.seat]: s.starting_stack for s in record.seats}
        assert hand["button"] == names[record.button_seat]
        assert hand["hero"] == names[next(s.seat for s in record.seats if s.player_id == hero)]
        assert hand["total_pot"] == exported_total_pot(record)
        assert hand["board"] == [c.text for c in record.board]
        # Winners from the summary lines (`collected (n)`, `showed [..] and won (n) with ...`); the
        # package keeps PokerStars' position marks in the name. It reads the seat lines from the fifth
        # summary line on, assuming a Board line (absent when no flop was dealt), so only hands with
        # a board are checked here (PokerKit checks every hand's winnings above).
        if not record.board:
            continue
        winners = {re.sub(r" \((button|small blind|big blind)\)", "", w) for w in hand["winners"]}
        assert winners == {names[s] for p in record.pots for s in p.winner_seats}


def test_ohh_corpus_reads_back_as_the_spec_storage_format_and_in_ohh_pydantic() -> None:
    documents = read_ohh_stream((GOLDEN / "corpus.ohh").read_text())
    assert len(documents) == HANDS
    for document, (_, record, hero) in zip(documents, views(), strict=True):
        model = validate_with_ohh_pydantic(document)
        check_ohh(document, record, hero)
        # Winnings minus what the actions put in is each player's result (item 9).
        put_in = {p.id: 0 for p in model.players}
        for round_ in model.rounds:
            for action in round_.actions:
                if action.player_id is not None and action.amount:
                    put_in[action.player_id] += int(action.amount)
        won = {p.id: 0 for p in model.players}
        for pot in model.pots:
            for win in pot.player_wins or []:
                won[win.player_id] += int(win.win_amount)
        finals = {index: seat.final_stack - seat.starting_stack for index, seat in enumerate(record.seats)}
        assert {pid: won[pid] - put_in[pid] for pid in put_in} == finals


# ------------------------------------------------------------------ the issue's items, one by one


def test_the_header_gives_the_eastern_time_pokerstars_writes() -> None:
    for number, view, hero in views()[:3]:
        line = pokerstars.render([(number, view)], hero).splitlines()[0]
        start = view.start_time.ToDatetime(tzinfo=UTC)
        eastern = start.astimezone(ZoneInfo("America/New_York"))
        assert line.endswith(f"UTC [{eastern:%Y/%m/%d} {eastern.hour}:{eastern:%M:%S} ET]"), line


def test_one_side_pot_is_the_side_pot_and_more_are_numbered_from_one() -> None:
    assert pokerstars.pot_labels(1) == ["pot"]
    assert pokerstars.pot_labels(2) == ["main pot", "side pot"]
    assert pokerstars.pot_labels(4) == ["main pot", "side pot-1", "side pot-2", "side pot-3"]
    text = (GOLDEN / "corpus.txt").read_text()
    for hand in filter(str.strip, text.split("\n\n\n")):
        pots = re.search(r"Total pot \d+ (.*)\| Rake", hand)
        assert pots is not None
        sides = re.findall(r"Side pot(-\d+)? \d+\.", pots.group(1))
        if len(sides) == 1:
            assert sides == [""]
            assert "from side pot\n" in hand + "\n"
        elif sides:
            assert sides == [f"-{i}" for i in range(1, len(sides) + 1)]


def test_shown_hands_in_the_summary_say_with_what_and_the_blinds_are_marked() -> None:
    text = (GOLDEN / "corpus.txt").read_text()
    won_lines = re.findall(r"^Seat \d+: .* showed \[.. ..\] and won \(\d+\) with (.+)$", text, re.M)
    assert won_lines
    assert all(not name[0].isupper() or name == "a Royal Flush" for name in won_lines)
    assert re.search(r"^Seat \d+: \S+ \(small blind\) ", text, re.M)
    assert re.search(r"^Seat \d+: \S+ \(big blind\) ", text, re.M)
    assert re.search(r"^Seat \d+: \S+ \(button\) \(small blind\) ", text, re.M)  # heads-up


@pytest.mark.parametrize(
    ("cards", "words"),
    [
        ("As Ks Qs Js Ts 2c 3d", "a Royal Flush"),
        ("9s 8s 7s 6s 5s 2c 3d", "a straight flush, Five to Nine"),
        ("8h 8d 8c 8s Ks 2d 3c", "four of a kind, Eights"),
        ("8h 8d 8c Kh Ks 2d 3c", "a full house, Eights full of Kings"),
        ("Ah Jh 9h 7h 2h 3c 4d", "a flush, Ace high"),
        ("Ah 2d 3c 4s 5h 9c Kd", "a straight, Ace to Five"),
        ("9h 9d 9c 7s 2d 3c 4h", "three of a kind, Nines"),
        ("Ah Ad Kc Ks 2d 3c 4h", "two pair, Aces and Kings"),
        ("8h 8d Kc 7s 2d 3c 4h", "a pair of Eights"),
        ("Ah Jd 9c 7s 2d 3c 4h", "high card Ace"),
    ],
)
def test_hand_names_are_in_pokerstars_words(cards: str, words: str) -> None:
    assert hand_name(evaluate(parse_cards(cards)).strength) == words


def test_an_export_in_a_players_view_deals_cards_to_that_player_only() -> None:
    for number, view, hero in views():
        text = pokerstars.render([(number, view)], hero)
        names = export_names(view)
        hero_name = names[next(s.seat for s in view.seats if s.player_id == hero)]
        assert re.findall(r"^Dealt to (\S+) ", text, re.M) == [hero_name]
        mucked = re.findall(r"^Seat \d+: (\S+).* mucked \[", text, re.M)
        assert set(mucked) <= {hero_name}


def test_times_are_real_instants() -> None:
    assert datetime(2026, 7, 1, 3, 5, 9, tzinfo=UTC).astimezone(ZoneInfo("America/New_York")).hour == 23


def _three_handed(play: str) -> tuple[history_pb2.HandRecord, dict[str, Any]]:
    """Ann on the button, Bob small blind 5, Cat big blind 10, 1,000 each: a walk (Ann and Bob fold)
    or an uncalled raise (Ann raises to 300, both fold); the hand as Ann's OHH export writes it."""
    seats = tuple(SeatConfig(seat, name, 1000) for seat, name in enumerate(("ann", "bob", "cat")))
    hand = Hand(
        HandConfig(
            variant=Variant.NO_LIMIT,
            seats=seats,
            button=0,
            small_blind=5,
            big_blind=10,
            deck=tuple(range(52)),
            rake=RakeRule(0, 0),
            hand_id=play,
        )
    )
    if play == "raise":
        hand.raise_to(0, 300)
    else:
        hand.fold(0)
    hand.fold(1)
    if play == "raise":
        hand.fold(2)
    assert hand.is_over
    record = record_of(hand, table_id="room-classic.1", hand_id=play)
    view = view_for(record, Viewer("ann"))
    assert view is not None
    document = open_hand_history.hand_object(view, 1, "ann")
    # Both outside readers' checks and the money check hold.
    validate_with_ohh_pydantic(document)
    check_ohh(document, view, "ann")
    return view, document["ohh"]


def _written(
    ohh: dict[str, Any],
) -> tuple[list[tuple[str, str, int]], list[tuple[int, int, int, list[tuple[str, int]]]]]:
    names = {p["id"]: p["name"] for p in ohh["players"]}
    actions = [
        (a["action"], names[a["player_id"]], a["amount"])
        for r in ohh["rounds"]
        for a in r["actions"]
        if a["action"] != "Dealt Cards"
    ]
    pots = [
        (
            p["number"],
            p["amount"],
            p["rake"],
            [(names[w["player_id"]], w["win_amount"]) for w in p["player_wins"]],
        )
        for p in ohh["pots"]
    ]
    return actions, pots


def test_a_walk_in_ohh_keeps_the_big_blind_as_posted_and_gives_the_uncalled_part_back_as_its_own_pot() -> (
    None
):
    # Issue 25 item 9: the big blind reads 10 (not the 5 the small blind matched); the 5 nobody
    # called goes back to Cat from a pot only she contested; her result is +5.
    _, ohh = _three_handed("walk")
    actions, pots = _written(ohh)
    assert ohh["big_blind_amount"] == 10
    assert actions == [("Post SB", "Bob", 5), ("Post BB", "Cat", 10), ("Fold", "Ann", 0), ("Fold", "Bob", 0)]
    assert pots == [(0, 10, 0, [("Cat", 10)]), (1, 5, 0, [("Cat", 5)])]


def test_an_uncalled_raise_in_ohh_reads_as_made_and_its_uncalled_part_goes_back_to_the_raiser() -> None:
    # Issue 25 item 9: Ann's raise to 300 reads 300 (what it put in), the 290 nobody called is a pot
    # of its own that she takes back: 25 + 290 - 300 = +15, the blinds she won.
    view, ohh = _three_handed("raise")
    actions, pots = _written(ohh)
    assert actions == [
        ("Post SB", "Bob", 5),
        ("Post BB", "Cat", 10),
        ("Raise", "Ann", 300),
        ("Fold", "Bob", 0),
        ("Fold", "Cat", 0),
    ]
    assert pots == [(0, 25, 0, [("Ann", 25)]), (1, 290, 0, [("Ann", 290)])]
    assert [s.final_stack - s.starting_stack for s in view.seats] == [15, -5, -10]
