"""The lobby's choices (web/src/lobby_model.ts, run in Node; issue 36): rooms grouped in tabs by game
and filtered by pool, listed by stake; the stakes "Play now" offers; the best table for a stake (the
fullest with a free seat, else the lobby picks one); the buy-in it takes; a fixed buy-in as one figure;
the tab and pool kept for next time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.node import run_web_script

# The operator's seeded rooms of one pool (lobby migration 0002), plus an MPX room and a disabled one.
ROOMS: list[dict[str, Any]] = [
    {"id": "nlhe-gram-prestige", "variant": "NO_LIMIT_HOLDEM", "pool": "GRAM", "seats": 4, "stakes": [50, 100], "buyIn": [10000, 10000]},
    {"id": "nlhe-gram-classic", "variant": "NO_LIMIT_HOLDEM", "pool": "GRAM", "seats": 4, "stakes": [5, 10], "buyIn": [1000, 1000]},
    {"id": "nlhe-gram-duel", "variant": "NO_LIMIT_HOLDEM", "pool": "GRAM", "seats": 2, "stakes": [5, 10], "buyIn": [1000, 1000]},
    {"id": "nlhe-gram-high-roller", "variant": "NO_LIMIT_HOLDEM", "pool": "GRAM", "seats": 4, "stakes": [25, 50], "buyIn": [5000, 5000]},
    {"id": "flhe-gram-10max-50-100", "variant": "FIXED_LIMIT_HOLDEM", "pool": "GRAM", "seats": 10, "stakes": [50, 100], "buyIn": [1000, 5000]},
    {"id": "flhe-gram-6max-10-20", "variant": "FIXED_LIMIT_HOLDEM", "pool": "GRAM", "seats": 6, "stakes": [10, 20], "buyIn": [200, 1000]},
    {"id": "flhe-gram-10max-10-20", "variant": "FIXED_LIMIT_HOLDEM", "pool": "GRAM", "seats": 10, "stakes": [10, 20], "buyIn": [200, 1000]},
    {"id": "russian-poker-gram", "variant": "RUSSIAN_POKER", "pool": "GRAM", "seats": 7, "stakes": [10, 1000]},
    {"id": "casino-holdem-gram", "variant": "CASINO_HOLDEM", "pool": "GRAM", "seats": 7, "stakes": [10, 1000]},
    {"id": "nlhe-mpx-duel", "variant": "NO_LIMIT_HOLDEM", "pool": "MPX", "seats": 2, "stakes": [5, 10], "buyIn": [1000, 1000]},
    {"id": "nlhe-gram-closed", "variant": "NO_LIMIT_HOLDEM", "pool": "GRAM", "seats": 4, "stakes": [1, 2], "buyIn": [100, 100], "disabled": True},
]  # fmt: skip


def _ask(tmp_path: Path, *asks: dict[str, Any]) -> list[Any]:
    out = run_web_script(
        "e2e/lobby_cases.ts", {"rooms": ROOMS, "asks": list(asks)}, tmp_path, "the lobby's choices"
    )
    return [next(iter(line.values())) for line in out]


def _table(room: str, n: int, seated: int, seats: int, waiting: int = 0) -> dict[str, Any]:
    return {"roomId": room, "tableId": f"{room}.{n}", "seated": seated, "seats": seats, "waiting": waiting}


def test_rooms_are_grouped_in_tabs_by_game_filtered_by_pool_and_listed_by_stake(tmp_path: Path) -> None:
    no_limit, fixed, house, mpx, counts = _ask(
        tmp_path,
        {"rooms": {"tab": "no_limit", "pool": "GRAM"}},
        {"rooms": {"tab": "fixed_limit", "pool": "GRAM"}},
        {"rooms": {"tab": "house", "pool": "GRAM"}},
        {"rooms": {"tab": "no_limit", "pool": "MPX"}},
        {"counts": "GRAM"},
    )
    # Smallest stake first; at one stake the smaller table first; a disabled room nowhere.
    assert no_limit == ["nlhe-gram-duel", "nlhe-gram-classic", "nlhe-gram-high-roller", "nlhe-gram-prestige"]
    assert fixed == ["flhe-gram-6max-10-20", "flhe-gram-10max-10-20", "flhe-gram-10max-50-100"]
    assert house == ["casino-holdem-gram", "russian-poker-gram"]
    assert mpx == ["nlhe-mpx-duel"]
    assert counts == {"no_limit": 4, "fixed_limit": 3, "house": 2}


def test_play_now_offers_each_stake_of_a_cash_tab_once_with_every_room_that_plays_it(tmp_path: Path) -> None:
    no_limit, fixed, house = _ask(
        tmp_path,
        {"stakes": {"tab": "no_limit", "pool": "GRAM"}},
        {"stakes": {"tab": "fixed_limit", "pool": "GRAM"}},
        {"stakes": {"tab": "house", "pool": "GRAM"}},
    )
    assert no_limit == [
        {"key": "5/10", "rooms": ["nlhe-gram-duel", "nlhe-gram-classic"]},
        {"key": "25/50", "rooms": ["nlhe-gram-high-roller"]},
        {"key": "50/100", "rooms": ["nlhe-gram-prestige"]},
    ]
    assert [group["key"] for group in fixed] == ["10/20", "50/100"]
    assert house == []  # house games are played from the wallet, each room with its own button


def test_the_best_table_is_the_fullest_with_a_free_seat(tmp_path: Path) -> None:
    classic, duel = "nlhe-gram-classic", "nlhe-gram-duel"
    answers = _ask(
        tmp_path,
        # The fullest table that still has a seat, not a full one and not an empty one.
        {
            "best": [
                _table(classic, 1, 1, 4),
                _table(classic, 2, 4, 4),
                _table(classic, 3, 3, 4),
                _table(classic, 4, 0, 4),
            ]
        },
        # At equal players, the one with fewer free seats (it deals sooner), then fewer waiting.
        {"best": [_table(classic, 1, 1, 4), _table(duel, 1, 1, 2)]},
        {"best": [_table(classic, 1, 2, 4, waiting=3), _table(classic, 2, 2, 4)]},
        # Empty tables only: the first.
        {"best": [_table(classic, 2, 0, 4), _table(classic, 1, 0, 4)]},
        # Every table full, or none: no table.
        {"best": [_table(classic, 1, 4, 4), _table(duel, 1, 2, 2)]},
        {"best": []},
    )
    assert answers == [f"{classic}.3", f"{duel}.1", f"{classic}.2", f"{classic}.1", None, None]


def test_play_now_seats_at_the_best_table_of_the_stake_else_lets_the_lobby_pick_one(tmp_path: Path) -> None:
    stake = {"tab": "no_limit", "pool": "GRAM", "key": "5/10"}
    classic, duel = "nlhe-gram-classic", "nlhe-gram-duel"
    answers = _ask(
        tmp_path,
        {"target": {"stake": stake, "tables": [_table(classic, 1, 2, 4), _table(duel, 1, 1, 2)]}},
        # A table of another stake never counts.
        {
            "target": {
                "stake": stake,
                "tables": [_table("nlhe-gram-prestige", 1, 3, 4), _table(duel, 1, 0, 2)],
            }
        },
        # Every table full (or none listed): the biggest room, with no table named (JoinTable picks or
        # opens the next one).
        {"target": {"stake": stake, "tables": [_table(classic, 1, 4, 4), _table(duel, 1, 2, 2)]}},
        {"target": {"stake": stake, "tables": []}},
    )
    assert answers == [
        {"roomId": classic, "tableId": f"{classic}.1"},
        {"roomId": duel, "tableId": f"{duel}.1"},
        {"roomId": classic, "tableId": ""},
        {"roomId": classic, "tableId": ""},
    ]


def test_play_now_buys_in_for_as_much_as_the_room_allows_and_the_wallet_holds(tmp_path: Path) -> None:
    fixed_limit = "flhe-gram-6max-10-20"
    answers = _ask(
        tmp_path,
        {"buyIn": {"room": fixed_limit, "balance": 5000}},
        {"buyIn": {"room": fixed_limit, "balance": 650}},
        # Short of the smallest: asks for the smallest, and the table says why not.
        {"buyIn": {"room": fixed_limit, "balance": 50}},
        {"buyIn": {"room": "nlhe-gram-classic", "balance": 100000}},
    )
    assert answers == [1000, 650, 200, 1000]


def test_a_fixed_buy_in_is_one_figure_and_a_range_two(tmp_path: Path) -> None:
    answers = _ask(
        tmp_path,
        {"range": "nlhe-gram-classic"},
        {"range": "flhe-gram-6max-10-20"},
        {"range": "casino-holdem-gram"},
    )
    assert answers == [{"amount": 1000}, {"min": 200, "max": 1000}, None]


def test_the_tab_and_pool_chosen_last_are_kept_and_anything_else_reads_as_the_defaults(
    tmp_path: Path,
) -> None:
    answers = _ask(
        tmp_path,
        {"choice": '{"tab": "house", "pool": "MPX"}'},
        {"choice": '{"tab": "fixed_limit"}'},
        {"choice": '{"tab": "poker-room", "pool": "TON"}'},
        {"choice": "not json"},
        {"choice": None},
    )
    assert answers == [
        {"tab": "house", "pool": "MPX"},
        {"tab": "fixed_limit", "pool": "GRAM"},
        {"tab": "no_limit", "pool": "GRAM"},
        {"tab": "no_limit", "pool": "GRAM"},
        {"tab": "no_limit", "pool": "GRAM"},
    ]
