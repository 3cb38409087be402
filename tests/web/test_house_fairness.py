"""The page's fairness check of a house round (web/src/fairness/house.ts, run in Node): under fairness
version 3 every card the round's record shows the player (the dealer's, the boxes', the board, the
steps) must be one of the cards opened to them, each opening already held against the commitment made
before the deal, as poker-play checks it (clients/play/view_model.py::house_cards_opened). The record
is a real HandRecord, written here with the generated Python classes and read in Node from its bytes."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from tests.node import run_web_script

RANKS, SUITS = "23456789TJQKA", "cdhs"


def card(text: str) -> common_pb2.Card:
    return common_pb2.Card(index=4 * RANKS.index(text[0]) + SUITS.index(text[1]), text=text)


def index(text: str) -> int:
    return int(card(text).index)


HIDDEN = common_pb2.Card(hidden=True)


def _round() -> history_pb2.HandRecord:
    return history_pb2.HandRecord(
        hand_id="house-1",
        board=[card("As"), card("2c"), card("7d")],
        actions=[history_pb2.HandAction(kind="SHOW", cards=[card("9h")])],
        house_game=history_pb2.HouseGameRound(
            dealer_cards=[card("Kd"), HIDDEN],
            boxes=[history_pb2.HouseGameBox(box=1, seat=1, cards=[card("Qh"), card("Jh")])],
        ),
    )


def _run(tmp_path: Path, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return run_web_script("e2e/house_fairness_cases.ts", cases, tmp_path, "the page's house check")


def _case(record: history_pb2.HandRecord, opened: list[str]) -> dict[str, Any]:
    return {
        "record": base64.b64encode(record.SerializeToString()).decode(),
        "opened": [index(text) for text in opened],
    }


def test_every_card_a_house_round_shows_must_be_among_the_cards_opened_to_the_player(tmp_path: Path) -> None:
    every = ["As", "2c", "7d", "9h", "Kd", "Qh", "Jh"]
    without_queen = [c for c in every if c != "Qh"]
    nothing = history_pb2.HandRecord(
        hand_id="house-2", house_game=history_pb2.HouseGameRound(dealer_cards=[HIDDEN, HIDDEN])
    )
    results = _run(
        tmp_path,
        [
            _case(_round(), every),
            _case(_round(), [*every, "3c", "4c"]),  # more opened than shown: fine
            _case(_round(), without_queen),
            _case(_round(), []),
            _case(nothing, []),
        ],
    )
    # The face-up cards, each once (the hidden dealer card is not one).
    assert sorted(results[0]["shown"]) == sorted(index(c) for c in every)
    assert (results[0]["problem"], results[0]["checked"]) == ("", 7)
    assert (results[1]["problem"], results[1]["checked"]) == ("", 7)
    assert results[2] == {
        "shown": results[0]["shown"],
        "problem": "Qh of the round is not among the cards opened to you",
        "checked": 0,
    }
    assert results[3]["checked"] == 0
    assert results[3]["problem"].endswith("is not among the cards opened to you")
    # Nothing face up: nothing checked (the page then says NOT verified, never "fair" over nothing).
    assert results[4] == {"shown": [], "problem": "", "checked": 0}
