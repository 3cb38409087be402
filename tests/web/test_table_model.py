"""The table screen's state (web/src/table_model.ts, run in Node): a pure reducer from the table's
stream messages and the player's input to what the screen draws (issue 36). Pre-actions are ticked
before the turn and applied by the page when it comes: a bet turns check/fold into fold, call any
stays, a new hand clears them. What the player types (the raise amount, the buy-in) survives every
update that is not a new turn: a chat line, a notice. The bet presets come from the view's pots, bets
and legal range. The hand log reads oldest first, each hand headed by its number, names as the view
gives them, never the table's hand id."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.node import run_web_script

HAND_ID = "6aa36eb6-1d54-4a1b-9c1e-0123456789ab"
# What the player's view carries: their own player id in their seat, an opaque handle in every other.
ME = "tg:424242"
ANN = "p-0a1b2c3d4e5f"
BOB = "p-5f4e3d2c1b0a"
NEXT_HAND_ID = "0f3c9d2e-7b1a-4c55-8e21-fedcba987654"


def _run(tmp_path: Path, scenarios: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    lines = run_web_script("e2e/table_model_cases.ts", scenarios, tmp_path, "the table's reducer")
    steps: list[list[dict[str, Any]]] = [[] for _ in scenarios]
    for line in lines:
        steps[line["scenario"]].append(line)
    return steps


def _seats(*, bets: dict[int, int] | None = None, folded: bool = False) -> list[dict[str, Any]]:
    bets = bets or {}
    return [
        {"seat": 1, "player": ANN, "name": "Ann", "bet": bets.get(1, 0)},
        {
            "seat": 2,
            "player": ME,
            "name": "Me",
            "bet": bets.get(2, 0),
            "cards": ["As", "Kd"],
            "folded": folded,
        },
        {"seat": 3, "player": BOB, "name": "Bob", "bet": bets.get(3, 0)},
    ]


def _view(hand: str = HAND_ID, street: str = "FLOP", to_act: int = 3, **extra: Any) -> dict[str, Any]:
    bets = extra.pop("bets", None)
    folded = extra.pop("folded", False)
    return {
        "hand": hand,
        "street": street,
        "toAct": to_act,
        "seats": _seats(bets=bets, folded=folded),
        "pots": [60],
        **extra,
    }


FACING_A_BET = {"actions": ["FOLD", "CALL", "RAISE"], "call": 40, "min": 80, "max": 1000}
NOTHING_OWED = {"actions": ["CHECK", "BET"], "min": 20, "max": 1000}


def test_a_bet_turns_check_fold_into_fold_and_the_turn_folds(tmp_path: Path) -> None:
    [steps] = _run(
        tmp_path,
        [
            {
                "me": ME,
                "steps": [
                    {"update": _view()},
                    {"type": "pre", "choice": "check-fold"},
                    {
                        "update": _view(to_act=1, bets={3: 40}),
                        "events": [{"seat": 3, "action": {"kind": "BET", "amount": 40, "to": 40}}],
                    },
                    {"update": _view(to_act=2, bets={3: 40, 1: 40}, legal=FACING_A_BET)},
                ],
            }
        ],
    )
    assert steps[0]["offered"] == ["check-fold", "call-any", "fold"]
    assert steps[1]["pre"] == "check-fold"
    # Facing a bet, check/fold would fold: it says so, and the box is gone.
    assert steps[2]["pre"] == "fold"
    assert steps[2]["offered"] == ["call-any", "fold"]
    assert steps[3]["send"] == {"action": "FOLD", "amount": 0, "hand": HAND_ID}
    assert steps[3]["pre"] == ""


def test_call_any_stays_through_a_bet_and_calls_on_the_turn(tmp_path: Path) -> None:
    [steps] = _run(
        tmp_path,
        [
            {
                "me": ME,
                "steps": [
                    {"update": _view()},
                    {"type": "pre", "choice": "call-any"},
                    {"update": _view(to_act=1, bets={3: 40})},
                    {"update": _view(to_act=1, bets={3: 200})},
                    {"update": _view(to_act=2, bets={3: 200}, legal=FACING_A_BET)},
                    {"update": _view(to_act=3, bets={3: 200, 2: 200})},
                ],
            }
        ],
    )
    assert [s["pre"] for s in steps] == ["", "call-any", "call-any", "call-any", "", ""]
    assert [s["send"] for s in steps] == [
        None,
        None,
        None,
        None,
        {"action": "CALL", "amount": 0, "hand": HAND_ID},
        None,
    ]


def test_a_new_hand_or_leaving_the_hand_clears_the_pre_action(tmp_path: Path) -> None:
    new_hand, folded, refused = _run(
        tmp_path,
        [
            {
                "me": ME,
                "steps": [
                    {"update": _view()},
                    {"type": "pre", "choice": "call-any"},
                    {"update": _view(hand=NEXT_HAND_ID, street="PREFLOP", to_act=1)},
                    {"update": _view(hand=NEXT_HAND_ID, street="PREFLOP", to_act=2, legal=FACING_A_BET)},
                ],
            },
            {
                "me": ME,
                "steps": [
                    {"update": _view()},
                    {"type": "pre", "choice": "fold"},
                    # Folded by the table (a time-out, leaving): nothing is left to apply.
                    {"update": _view(to_act=1, folded=True)},
                ],
            },
            {
                # A spectator, or a box not offered now (the player's own turn), changes nothing.
                "me": ME,
                "spectate": True,
                "steps": [{"update": _view()}, {"type": "pre", "choice": "call-any"}],
            },
        ],
    )
    assert [s["pre"] for s in new_hand] == ["", "call-any", "", ""]
    assert new_hand[3]["send"] is None  # the turn of the new hand is the player's own
    assert [s["pre"] for s in folded] == ["", "fold", ""]
    assert [s["pre"] for s in refused] == ["", ""]
    assert refused[0]["offered"] == []


def test_fold_to_any_bet_checks_while_nothing_is_owed_and_folds_at_the_first_bet(tmp_path: Path) -> None:
    check_fold, fold_to_any = _run(
        tmp_path,
        [
            {
                "me": ME,
                "steps": [
                    {"update": _view(to_act=1)},
                    {"type": "pre", "choice": "check-fold"},
                    {"update": _view(to_act=2, legal=NOTHING_OWED)},
                ],
            },
            {
                "me": ME,
                "steps": [
                    {"update": _view(to_act=1)},
                    {"type": "pre", "choice": "fold"},
                    {"update": _view(to_act=2, legal=NOTHING_OWED)},
                    {"update": _view(street="TURN", to_act=3)},
                    {"update": _view(street="TURN", to_act=2, bets={3: 40}, legal=FACING_A_BET)},
                ],
            },
        ],
    )
    # Check/fold is once: it checks, and is gone.
    assert check_fold[2]["send"]["action"] == "CHECK"
    assert check_fold[2]["pre"] == ""
    # Fold to any bet checks and stays for the next street, then folds to the bet.
    assert [s["send"] and s["send"]["action"] for s in fold_to_any] == [None, None, "CHECK", None, "FOLD"]
    assert [s["pre"] for s in fold_to_any] == ["", "fold", "fold", "fold", ""]


def test_what_the_player_types_survives_a_chat_line_and_a_notice_and_a_new_turn_starts_at_its_minimum(
    tmp_path: Path,
) -> None:
    turn = {"actions": ["FOLD", "CALL", "RAISE"], "call": 40, "min": 80, "max": 1000, "step": 10}
    seated, standing = _run(
        tmp_path,
        [
            {
                "me": ME,
                "steps": [
                    {"update": _view(to_act=2, bets={3: 40}, legal=turn)},
                    {"type": "amount", "value": "255"},
                    {
                        "update": _view(to_act=2, bets={3: 40}, legal=turn),
                        "events": [{"chat": {"player": BOB, "name": "Bob", "seat": 3, "text": "hurry up"}}],
                    },
                    {
                        "update": _view(to_act=2, bets={3: 40}, legal=turn),
                        "events": [
                            {"seat": 1, "notice": {"code": "PLAYER_RECONNECTED", "text": "Ann is back"}}
                        ],
                    },
                    {"type": "note", "text": "Your seed's hash is in for hand 6aa36eb6"},
                    {
                        "update": _view(
                            street="TURN", to_act=2, bets={3: 100}, legal={**turn, "call": 100, "min": 200}
                        )
                    },
                ],
            },
            {
                "me": ME,
                "steps": [
                    {
                        "update": {
                            "hand": "",
                            "phase": "BETWEEN_HANDS",
                            "street": "STREET_UNSPECIFIED",
                            "seats": _seats()[:1],
                        }
                    },
                    {"type": "buy-in", "value": "700"},
                    {
                        "update": {"hand": "", "phase": "BETWEEN_HANDS", "seats": _seats()[:1]},
                        "events": [{"chat": {"player": ANN, "name": "Ann", "seat": 1, "sticker": "gg"}}],
                    },
                ],
            },
        ],
    )
    assert [s["amount"] for s in seated] == ["80", "255", "255", "255", "255", "200"]
    # What the bet button sends: the typed amount on the step.
    assert seated[1]["typed"] == 250
    assert seated[2]["chat"] == ["Bob: hurry up"]
    # The page's own lines name the hand by its number too.
    assert seated[4]["log"][-1] == "Your seed's hash is in for hand 1"
    assert [s["buyIn"] for s in standing] == ["", "700", "700"]
    assert standing[2]["chat"] == ["Ann: [gg]"]


def test_the_presets_come_from_the_pots_the_bets_and_the_legal_range(tmp_path: Path) -> None:
    # 100 in the pot from earlier streets, Bob bets 50 (the pots include this round's bets: 150); a
    # pot-sized raise is to 50 + (150 + 50 to call) = 250, half pot to 150, two thirds to 183 (180 on
    # the step of 10).
    facing = {"actions": ["FOLD", "CALL", "RAISE"], "call": 50, "min": 100, "max": 1000}
    opening = {"actions": ["CHECK", "BET"], "min": 20, "max": 1000}
    steps = _run(
        tmp_path,
        [
            {"me": ME, "steps": [{"update": _view(to_act=2, bets={3: 50}, pots=[150], legal=facing)}]},
            {
                "me": ME,
                "steps": [
                    {
                        "update": _view(to_act=2, bets={3: 50}, pots=[150], legal={**facing, "step": 10}),
                    },
                    {"type": "preset", "preset": "two-thirds"},
                ],
            },
            {
                "me": ME,
                "steps": [
                    {"update": _view(to_act=2, pots=[90], legal=opening)},
                    {"type": "preset", "preset": "pot"},
                ],
            },
            {
                "me": ME,
                "steps": [
                    {"update": _view(to_act=2, bets={3: 50}, pots=[150], legal={**facing, "max": 220})}
                ],
            },
            {
                "me": ME,
                "steps": [
                    {
                        "update": _view(
                            to_act=2, bets={3: 20}, pots=[80], legal={**facing, "min": 40, "max": 40}
                        )
                    }
                ],
            },
        ],
    )
    assert steps[0][0]["presets"] == {"min": 100, "half": 150, "two-thirds": 183, "pot": 250, "all-in": 1000}
    assert steps[1][0]["presets"] == {"min": 100, "half": 150, "two-thirds": 180, "pot": 250, "all-in": 1000}
    assert steps[1][1]["amount"] == "180"
    assert steps[2][0]["presets"] == {"min": 20, "half": 45, "two-thirds": 60, "pot": 90, "all-in": 1000}
    assert steps[2][1]["amount"] == "90"
    # Never past the legal maximum; none at all when the amount is fixed (fixed limit).
    assert steps[3][0]["presets"] == {"min": 100, "half": 150, "two-thirds": 183, "pot": 220, "all-in": 220}
    assert steps[4][0]["presets"] == {}


def _hand_steps(hand: str, first: bool) -> list[dict[str, Any]]:
    events = [
        {"notice": {"code": "HAND_STARTED", "text": f"hand {hand} started"}},
        {"seat": 1, "notice": {"code": "BLIND_POSTED", "text": "posts small blind 5"}},
        {"seat": 3, "notice": {"code": "BLIND_POSTED", "text": "posts big blind 10"}},
        {"seat": 2, "cards": {"cards": ["As", "Kd"]}},
    ]
    if first:
        events.insert(0, {"seat": 2, "notice": {"code": "PLAYER_SAT_DOWN", "text": "Me sat at seat 2"}})
    return [
        {"update": _view(hand=hand, street="PREFLOP", to_act=2), "events": events},
        {
            "update": _view(hand=hand, street="PREFLOP", to_act=1),
            "events": [{"seat": 2, "action": {"kind": "RAISE", "amount": 30, "to": 30}}],
        },
        {
            "update": _view(
                hand=hand,
                street="PREFLOP",
                phase="BETWEEN_HANDS",
                to_act=0,
                awards=[{"pot": 0, "seats": [2], "amounts": [45]}],
            ),
            "events": [
                {"seat": 1, "action": {"kind": "FOLD"}},
                {"seat": 3, "action": {"kind": "FOLD"}},
                {"notice": {"code": "POT_AWARDED", "text": "pot 0: seat 2 wins 45"}},
                {"notice": {"code": "HAND_ENDED", "text": "hand ended, rake 0"}},
                {"notice": {"code": "HAND_SETTLED", "text": f"hand {hand} settled"}},
                {"notice": {"code": "HAND_COMMITTED", "text": f"next hand {NEXT_HAND_ID} committed"}},
            ],
        },
    ]


def test_the_hand_log_reads_oldest_first_by_hand_number_with_names_and_no_hand_id(tmp_path: Path) -> None:
    english, russian = _run(
        tmp_path,
        [
            {"me": ME, "steps": _hand_steps(HAND_ID, True) + _hand_steps(NEXT_HAND_ID, False)},
            {"me": ME, "lang": "ru", "steps": _hand_steps(HAND_ID, True)},
        ],
    )
    log = english[-1]["log"]
    assert log == [
        "Me sat at seat 2",
        "# Hand 1",
        "Ann: small blind 5",
        "Bob: big blind 10",
        "You are dealt A♠ K♦",
        "You raise to 30",
        "Ann folds",
        "Bob folds",
        "Pot: You won 45",
        "hand ended, rake 0",
        "hand 1 settled",
        "# Hand 2",
        "Ann: small blind 5",
        "Bob: big blind 10",
        "You are dealt A♠ K♦",
        "You raise to 30",
        "Ann folds",
        "Bob folds",
        "Pot: You won 45",
        "hand ended, rake 0",
        "hand 2 settled",
    ]
    everything = " ".join(log + russian[-1]["log"])
    for part in re.split("-", HAND_ID) + re.split("-", NEXT_HAND_ID):
        assert part not in everything
    assert russian[-1]["log"][:2] == ["Me садится на место 2", "# Раздача 1"]
    assert "раздача 1 рассчитана" in russian[-1]["log"]


def _named_seats(ann: str = "Ann Marie Lee", bob: str = "") -> list[dict[str, Any]]:
    """Ann's name has spaces; Bob's seat has no name the table knows (an empty display name)."""
    return [
        {"seat": 1, "player": ANN, "name": ann},
        {"seat": 2, "player": ME, "name": "Me", "cards": ["As", "Kd"]},
        {"seat": 3, "player": BOB, "name": bob},
    ]


def _between(seats: list[dict[str, Any]]) -> dict[str, Any]:
    return {"hand": "", "phase": "BETWEEN_HANDS", "street": "STREET_UNSPECIFIED", "seats": seats}


def test_a_player_notice_names_the_seat_by_its_display_name_even_with_spaces(tmp_path: Path) -> None:
    """The table starts a player notice with the seat's display name (spaces and all) or `seat N`; the
    line names the seat as the view does and reads in the page's language. A player who left is named
    from the view before."""
    steps = [
        {
            "update": _between(_named_seats()),
            "events": [
                {"seat": 1, "notice": {"code": "PLAYER_SAT_DOWN", "text": "Ann Marie Lee sat at seat 1"}},
                {
                    "seat": 1,
                    "notice": {"code": "PLAYER_SAT_OUT", "text": "Ann Marie Lee timed out 2 hands in a row"},
                },
                {"seat": 3, "notice": {"code": "PLAYER_RECONNECTED", "text": "seat 3 is back"}},
            ],
        },
        {
            "update": _between([{"seat": 1}, *_named_seats()[1:]]),
            "events": [{"seat": 1, "notice": {"code": "PLAYER_LEFT", "text": "Ann Marie Lee left seat 1"}}],
        },
    ]
    english, russian = _run(tmp_path, [{"me": ME, "steps": steps}, {"me": ME, "lang": "ru", "steps": steps}])
    assert english[-1]["log"] == [
        "Ann Marie Lee sat at seat 1",
        "Ann Marie Lee timed out 2 hands in a row",
        "Seat 3 is back",
        "Ann Marie Lee left seat 1",
    ]
    assert russian[-1]["log"][:2] == [
        "Ann Marie Lee садится на место 1",
        "Ann Marie Lee отходит: время хода вышло в 2 раздачах подряд",
    ]
    assert russian[-1]["log"][2:] == ["Место 3 снова на связи", "Ann Marie Lee освобождает место 1"]
    for line in english[-1]["log"] + russian[-1]["log"]:
        assert "p-" not in line
        assert "tg:" not in line


def test_chat_names_the_sender_you_from_my_seat_and_never_by_a_handle(tmp_path: Path) -> None:
    """A chat line carries the sender's handle, name and seat: from the player's own seat it is "You"
    (the handle is not their id), from another seat the sender's name, or the seat's label."""
    [steps] = _run(
        tmp_path,
        [
            {
                "me": ME,
                "steps": [
                    {
                        "update": _between(_named_seats()),
                        "events": [
                            {"chat": {"player": "p-aaaaaaaaaaaa", "name": "Me", "seat": 2, "text": "hi all"}},
                            {"chat": {"player": ANN, "name": "Ann Marie Lee", "seat": 1, "text": "hello"}},
                            {"chat": {"player": BOB, "seat": 3, "sticker": "gg"}},
                        ],
                    },
                ],
            },
        ],
    )
    assert steps[0]["chat"] == ["You: hi all", "Ann Marie Lee: hello", "Seat 3: [gg]"]


def test_a_seat_without_a_display_name_shows_its_label_never_the_handle(tmp_path: Path) -> None:
    english, russian = _run(
        tmp_path,
        [
            {
                "me": ME,
                "steps": [
                    {
                        "update": _view(to_act=3) | {"seats": _named_seats(ann="Ann")},
                        "events": [{"seat": 3, "action": {"kind": "CHECK"}}],
                    }
                ],
            },
            {"me": ME, "lang": "ru", "steps": [{"update": _between(_named_seats(ann="Ann"))}]},
        ],
    )
    assert english[0]["seats"] == ["Ann", "You", "Seat 3"]
    assert "Seat 3 checks" in english[0]["log"]
    assert russian[0]["seats"] == ["Ann", "Вы", "Место 3"]


def test_telegrams_back_button_asks_first_only_while_leaving_would_fold_the_players_hand(
    tmp_path: Path,
) -> None:
    def seats(**mine: Any) -> list[dict[str, Any]]:
        return [
            {"seat": 1, "player": ANN, "name": "Ann"},
            {"seat": 2, "player": ME, "name": "Me", "cards": ["As", "Kd"], **mine},
            {"seat": 3, "player": BOB, "name": "Bob"},
        ]

    [steps, spectating] = _run(
        tmp_path,
        [
            {
                "me": ME,
                "steps": [
                    # Dealt in, the hand running: leaving would fold it.
                    {"update": _view()},
                    # All-in: still in the hand (leaving would give up the pot).
                    {"update": _view() | {"seats": seats(allIn=True)}},
                    # Folded: out of the hand already.
                    {"update": _view(folded=True)},
                    # Seated between hands.
                    {"update": _view(hand=NEXT_HAND_ID, phase="BETWEEN_HANDS", street="STREET_UNSPECIFIED")},
                    # Sat down while a hand runs, not dealt in (no cards).
                    {"update": _view() | {"seats": seats(cards=[])}},
                ],
            },
            {"me": ME, "spectate": True, "steps": [{"update": _view()}]},
        ],
    )
    assert [s["leavingFolds"] for s in steps] == [True, True, False, False, False]
    assert spectating[0]["leavingFolds"] is False
