"""The hand replayer of "My hands" (web/src/replayer.ts, run in Node): a pure function from a hand's
record, as history gives it to the reader, and a step's index to what is drawn. The hands here are
real: played through libs/poker_engine, recorded as the table records them
(`service_runtime.history_records`) and redacted for each reader by history's own `view_for`, then
handed to the page's model in protobuf JSON, as GetHand answers it.

Checked on every step of every hand for every reader: the steps (the deal, each action, the award),
chips conserved (stacks + bets + pot + rake = the starting stacks; after the award each stack is the
record's final stack), the reader's own cards face up from the deal and another's only from the step
they showed them, a mucked hand never face up but to its owner, no card turned up that the record
hides; players by name ("You", the record's name, the seat's label in the page's language), never an
id; the words of each step ("Bob raises to 40")."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from poker.history.v1 import history_pb2
from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.hand import Hand
from services.history.records import Viewer, view_for
from tests.history.engine_hands import _deck, record_of, varied_records
from tests.node import run_web_script

NAMES = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal"]


def _frames(tmp_path: Path, cases: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    given = [{**case, "record": json_format.MessageToDict(case["record"])} for case in cases]
    lines = run_web_script("e2e/replayer_cases.ts", given, tmp_path, "the hand replayer")
    frames: list[list[dict[str, Any]]] = [[] for _ in cases]
    for line in lines:
        frames[line["case"]].append(line)
    return frames


def _named(record: history_pb2.HandRecord) -> history_pb2.HandRecord:
    """The record with people's names at the seats (the table sends display names), never the ids."""
    named = history_pb2.HandRecord()
    named.CopyFrom(record)
    for seat in named.seats:
        seat.display_name = NAMES[int(seat.player_id.removeprefix("tg:")) % len(NAMES)]
    return named


def _records(count: int, seed: int) -> list[history_pb2.HandRecord]:
    return [_named(r) for r in varied_records(count, seed=seed, prefix="tg:")]


def _readers(records: list[history_pb2.HandRecord]) -> list[dict[str, Any]]:
    cases = []
    for full in records:
        for seat in full.seats:
            view = view_for(full, Viewer(seat.player_id))
            assert view is not None
            cases.append({"record": view, "me": seat.player_id, "full": full, "seat": seat.seat})
    return cases


def _visible(cards: Any) -> list[str]:
    return [c.text for c in cards if not c.hidden and c.text]


def test_every_step_conserves_chips_shows_only_what_the_reader_may_see_and_names_players(
    tmp_path: Path,
) -> None:
    records = _records(21, seed=11)
    cases = _readers(records)
    assert any(a.kind == "MUCK" for r in records for a in r.actions), "no muck among the hands"
    assert any(a.kind == "UNCALLED_RETURN" for r in records for a in r.actions)
    assert any(p.rake for r in records for p in r.pots)
    all_frames = _frames(tmp_path, [{"record": c["record"], "me": c["me"]} for c in cases])
    for case, frames in zip(cases, all_frames, strict=True):
        full: history_pb2.HandRecord = case["full"]
        view: history_pb2.HandRecord = case["record"]
        where = f"{full.hand_id} read by {case['me']}"
        # The deal, every action, the award.
        assert len(frames) == len(full.actions) + 2, where
        assert [f["step"] for f in frames] == list(range(len(frames))), where
        assert all(f["steps"] == len(frames) for f in frames), where
        start = sum(s.starting_stack for s in full.seats)
        shows = {a.seat: i + 1 for i, a in enumerate(full.actions) if a.kind == "SHOW"}
        mucked = {a.seat for a in full.actions if a.kind == "MUCK"}
        # What the reader's record lets them see of each seat: their own cards, shown ones.
        may_see = {s.seat: set(_visible(s.hole_cards)) for s in view.seats}
        for a in view.actions:
            if a.kind == "SHOW":
                may_see[a.seat] |= set(_visible(a.cards))
        ids = {s.player_id for s in full.seats}
        for frame in frames:
            at = f"{where}, step {frame['step']}"
            seats = {s["seat"]: s for s in frame["seats"]}
            # Chips: nothing made, nothing lost.
            held = sum(s["stack"] + s["bet"] for s in frame["seats"]) + frame["pot"] + frame["rake"]
            assert held == start, at
            assert all(s["stack"] >= 0 and s["bet"] >= 0 for s in frame["seats"]), at
            assert frame["pot"] >= 0, at
            # Names, never ids: the reader is "You", the others by the record's names.
            for s in frame["seats"]:
                assert s["name"] not in ids, at
                assert s["name"] == (
                    "You" if s["seat"] == case["seat"] else NAMES[int(_player(full, s["seat"])[3:]) % 8]
                ), at
            for line in frame["lines"]:
                assert not any(pid in line for pid in ids), (at, line)
            # Cards: own face up from the deal; another's only from their show, never a mucked hand.
            for seat, s in seats.items():
                up = [c for c in s["cards"] if c is not None]
                assert set(up) <= may_see[seat], (at, seat, up)
                if seat == case["seat"]:
                    assert up == _visible(_seat(full, seat).hole_cards), at
                elif up:
                    assert frame["step"] >= shows.get(seat, len(frames)), (at, seat, up)
                    assert seat not in mucked, (at, seat)
                elif seat in shows and frame["step"] >= shows[seat]:
                    raise AssertionError(f"{at}: seat {seat} showed its cards and they are face down")
            assert frame["board"] == _visible(full.board)[: len(frame["board"])], at
        last = frames[-1]
        assert (last["pot"], last["rake"]) == (0, full.rake), where
        for s in last["seats"]:
            record_seat = _seat(full, s["seat"])
            assert (s["stack"], s["bet"], s["net"]) == (record_seat.final_stack, 0, record_seat.net_result), (
                where
            )
        assert all(s["net"] is None for f in frames[:-1] for s in f["seats"]), where
        assert last["board"] == _visible(full.board), where
        # The award names each pot's winners.
        assert len([line for line in last["lines"] if not line.startswith("Rake")]) == len(full.pots), where


def _seat(record: history_pb2.HandRecord, seat: int) -> history_pb2.HandSeat:
    return next(s for s in record.seats if s.seat == seat)


def _player(record: history_pb2.HandRecord, seat: int) -> str:
    return _seat(record, seat).player_id


def _scripted() -> history_pb2.HandRecord:
    """Bob (seat 0, the button) raises to 40, Ann (small blind) folds, Cat (big blind, the reader)
    calls; the flop is checked through, Bob bets 60 on the turn and Cat calls; the river is checked and
    at the showdown Cat shows and wins and Bob's beaten hand is mucked."""
    players = ["tg:1", "tg:0", "tg:2"]  # Bob, Ann, Cat (NAMES by the id's number)
    holes = ("Qs Qd", "7c 2d", "As Ad")  # dealing starts left of the button: Ann, Cat, Bob... by seat order
    deck = _deck(random.Random(1), board="Ah Kd 5c 9s 3h", holes=_dealing_order(holes), players=3)
    config = HandConfig(
        variant=Variant.NO_LIMIT,
        seats=tuple(SeatConfig(i, p, 1000) for i, p in enumerate(players)),
        button=0,
        small_blind=5,
        big_blind=10,
        deck=deck,
        rake=RakeRule(0, 0),
        hand_id="scripted",
    )
    hand = Hand(config)
    hand.raise_to(0, 40)
    hand.fold(1)
    hand.call(2)
    hand.check(2)
    hand.check(0)
    hand.check(2)
    hand.bet(0, 60)
    hand.call(2)
    hand.check(2)
    hand.check(0)
    assert hand.is_over
    return _named(record_of(hand, table_id="t-1", hand_id="scripted"))


def _dealing_order(holes: tuple[str, ...]) -> tuple[str, ...]:
    """Seat 0 Bob, 1 Ann, 2 Cat with the button at 0: the deal starts at seat 1 (Ann), then 2, then 0."""
    bob, ann, cat = holes
    return (ann, cat, bob)


def test_a_hand_step_by_step_in_words_with_the_readers_cards_and_the_showdown(tmp_path: Path) -> None:
    full = _scripted()
    cat = view_for(full, Viewer("tg:2"))
    ann = view_for(full, Viewer("tg:0"))
    assert cat is not None
    assert ann is not None
    [as_cat, as_ann, in_russian] = _frames(
        tmp_path,
        [
            {"record": cat, "me": "tg:2", "probe": [-3, 99]},
            {"record": ann, "me": "tg:0"},
            {"record": cat, "me": "tg:2", "lang": "ru"},
        ],
    )
    lines = [" / ".join(f["lines"]) for f in as_cat if "probe" not in f]
    assert lines == [
        "You are dealt A♠ A♦",
        "Ann posts the small blind 5",
        "You post the big blind 10",
        "Bob raises to 40",
        "Ann folds",
        "You call 30",
        "Flop: A♥ K♦ 5♣",
        "You check",
        "Bob checks",
        "Turn: 9♠",
        "You check",
        "Bob bets 60",
        "You call 60",
        "River: 3♥",
        "You check",
        "Bob checks",
        "You show A♠ A♦",
        "Bob mucks",
        "Pot: You won 205",
    ]
    by_step = {f["step"]: {s["name"]: s for s in f["seats"]} for f in as_cat if "probe" not in f}
    # After Bob's raise: his stack and bet; the pot in the middle is still empty (the blinds are bets).
    assert (by_step[3]["Bob"]["stack"], by_step[3]["Bob"]["bet"], by_step[3]["You"]["bet"]) == (960, 40, 10)
    # The flop takes the bets to the middle.
    assert [f["pot"] for f in as_cat[6:8]] == [85, 85]
    assert all(s["bet"] == 0 for s in by_step[6].values())
    # My cards from the deal; Bob's never (mucked); the button at Bob's seat.
    assert by_step[0]["You"]["cards"] == ["As", "Ad"]
    assert all(step["Bob"]["cards"] == [None, None] for step in by_step.values())
    assert by_step[0]["Bob"]["button"] is True
    assert (by_step[18]["You"]["net"], by_step[18]["Bob"]["net"]) == (105, -100)
    # Steps out of the hand are its first and last.
    probes = [f for f in as_cat if "probe" in f]
    assert [(p["probe"], p["step"]) for p in probes] == [(-3, 0), (99, 18)]

    # Ann folded: she sees her own cards, Cat's only from the showdown, Bob's never.
    ann_steps = [{s["name"]: s["cards"] for s in f["seats"]} for f in as_ann]
    assert ann_steps[0] == {"Bob": [None, None], "You": ["7c", "2d"], "Cat": [None, None]}
    assert ann_steps[15]["Cat"] == [None, None]
    assert ann_steps[16]["Cat"] == ["As", "Ad"]
    assert all(step["Bob"] == [None, None] for step in ann_steps)
    assert as_ann[3]["lines"] == ["Bob raises to 40"]
    assert as_ann[4]["lines"] == ["You fold"]

    # In Russian, the same steps in Russian words.
    assert in_russian[0]["lines"] == ["Вам сданы A♠ A♦"]
    assert in_russian[3]["lines"] == ["Bob: рейз до 40"]
    assert in_russian[18]["lines"] == ["Банк: Вы выигрываете 205"]


def test_a_seat_the_record_does_not_name_reads_as_its_label_in_the_pages_language(tmp_path: Path) -> None:
    full = _scripted()
    # A record written before the tables sent names: the name is the id, and history names the seat.
    for seat in full.seats:
        seat.display_name = seat.player_id
    view = view_for(full, Viewer("tg:2"))
    assert view is not None
    [english, russian] = _frames(
        tmp_path, [{"record": view, "me": "tg:2"}, {"record": view, "me": "tg:2", "lang": "ru"}]
    )
    assert [s["name"] for s in english[0]["seats"]] == ["Seat 1", "Seat 2", "You"]
    assert [s["name"] for s in russian[0]["seats"]] == ["Место 1", "Место 2", "Вы"]
    assert english[3]["lines"] == ["Seat 1 raises to 40"]
    assert not any("tg:" in line for f in english + russian for line in f["lines"])


def test_a_voided_hand_gives_every_chip_back_at_its_last_step(tmp_path: Path) -> None:
    full = _scripted()
    full.voided = True
    del full.pots[:]
    full.rake = 0
    for seat in full.seats:
        seat.final_stack = seat.starting_stack
        seat.net_result = 0
    view = view_for(full, Viewer("tg:2"))
    assert view is not None
    [frames] = _frames(tmp_path, [{"record": view, "me": "tg:2"}])
    last = frames[-1]
    assert last["lines"] == ["The hand was voided: every chip went back"]
    assert [(s["stack"], s["bet"], s["net"]) for s in last["seats"]] == [(1000, 0, 0)] * 3
    assert (last["pot"], last["rake"]) == (0, 0)
    # Before the last step the hand replays as it was played.
    assert frames[3]["lines"] == ["Bob raises to 40"]
