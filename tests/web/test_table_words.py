"""The table screen's words (web/src/table_words.ts, run in Node): a bet or raise reads as its
raise-to total with the chips it added beside it, as poker-play writes it (issue 25 item 4: `amount`
is the chips added, `to` the total), and each pot says who can win it once there are side pots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.node import run_web_script


def _run(tmp_path: Path, cases: dict[str, Any]) -> list[dict[str, Any]]:
    return run_web_script("e2e/table_words_cases.ts", cases, tmp_path, "the page's words")


def test_a_bet_or_raise_reads_as_its_total_with_the_chips_it_added_beside_it(tmp_path: Path) -> None:
    actions = [
        # A raise from a bet of 20 to 60 adds 40: the log says "to 60", never "to 40".
        ({"subject": "Ann", "action": "RAISE", "amount": 40, "to": 60}, "Ann raises to 60 (+40)"),
        ({"subject": "You", "action": "RAISE", "amount": 475, "to": 480}, "You raise to 480 (+475)"),
        # A bet from nothing adds what it is.
        ({"subject": "Bob", "action": "BET", "amount": 50, "to": 50}, "Bob bets 50"),
        ({"subject": "You", "action": "BET", "amount": 1200, "to": 1200}, "You bet 1,200"),
        # An all-in is said with its total too.
        ({"subject": "Cy", "action": "ALL_IN", "amount": 290, "to": 300}, "Cy goes all-in to 300 (+290)"),
        ({"subject": "You", "action": "ALL_IN", "amount": 90, "to": 90}, "You go all-in to 90"),
        # A call is the chips it costs; check and fold have no figure.
        ({"subject": "Ann", "action": "CALL", "amount": 40, "to": 60}, "Ann calls 40"),
        ({"subject": "You", "action": "CHECK", "amount": 0, "to": 0}, "You check"),
        (
            {"subject": "Bob", "action": "FOLD", "amount": 0, "to": 0, "timedOut": True},
            "Bob folds (time out)",
        ),
    ]
    lines = _run(tmp_path, {"actions": [case for case, _ in actions], "pots": []})
    assert [line["line"] for line in lines] == [expected for _, expected in actions]


def test_each_pot_says_who_can_win_it_once_there_are_side_pots(tmp_path: Path) -> None:
    names = {"1": "Ann", "2": "Bob", "3": "You"}
    pots = [
        {"pots": [], "names": names},
        {"pots": [{"amount": 120, "seats": [1, 2, 3]}], "names": names},
        {"pots": [{"amount": 300, "seats": [1, 2, 3]}, {"amount": 200, "seats": [2, 3]}], "names": names},
        {
            "pots": [
                {"amount": 300, "seats": [1, 2, 3]},
                {"amount": 200, "seats": [2, 3]},
                {"amount": 1000, "seats": [3, 4]},
            ],
            "names": names,
        },
    ]
    out = _run(tmp_path, {"actions": [], "pots": pots})
    assert [o["pots"] for o in out] == [
        [],
        ["Pot: 120"],
        ["Main pot: 300 (Ann, Bob, You)", "Side pot: 200 (Bob, You)"],
        ["Main pot: 300 (Ann, Bob, You)", "Side pot 1: 200 (Bob, You)", "Side pot 2: 1,000 (You, seat 4)"],
    ]


def test_a_notice_names_its_player_and_pot_awards_are_left_to_the_felt(tmp_path: Path) -> None:
    # Seen in the browser: the hand log read `posts small blind 5`, `mucked` and `pot 0: seat 3 wins 400`
    # (whose blind? the table's raw award, counted from 0 with a seat number, issue 25 item 15). A
    # player's notice says whose it is; the awards are shown on the felt with names and the hand.
    notices = [
        {"subject": "Ann", "code": "BLIND_POSTED", "text": "posts small blind 5"},
        {"subject": "You", "code": "CARDS_MUCKED", "text": "mucked"},
        {"subject": "Bob", "code": "UNCALLED_BET_RETURNED", "text": "660 returned"},
        {"subject": "", "code": "HAND_ENDED", "text": "hand ended, rake 0"},
        {"subject": "", "code": "POT_AWARDED", "text": "pot 0: seat 3 wins 400"},
        {"subject": "", "code": "HAND_COMMITTED", "text": "next hand h2 committed"},
    ]
    out = _run(tmp_path, {"actions": [], "pots": [], "notices": notices})
    assert [o["notice"] for o in out] == [
        "Ann: small blind 5",
        "You: mucked",
        "Bob: 660 returned (not called)",
        "hand ended, rake 0",
        None,
        None,
    ]


def test_the_log_keeps_who_won_each_pot_by_name_with_the_hand(tmp_path: Path) -> None:
    # The log no longer copies the table's raw award (`pot 0: seat 3 wins 400`), so it says who won
    # what from the view's awards: the felt's award goes as soon as the next view comes (a player who
    # lost their last chip sees only the waiting table), the log keeps it.
    names = {"1": "Ann", "2": "Bob", "3": "You"}
    cases = [
        {"awards": [{"pot": 0, "seats": [3], "amounts": [400], "hand": "One pair, Fours"}], "names": names},
        {
            "awards": [
                {"pot": 0, "seats": [1], "amounts": [1275], "hand": "Two pair, Aces and Kings"},
                {"pot": 1, "seats": [1, 2], "amounts": [380, 380], "hand": ""},
            ],
            "names": names,
        },
    ]
    out = _run(tmp_path, {"actions": [], "pots": [], "awards": cases})
    assert [o["awards"] for o in out] == [
        ["Pot: You won 400 with One pair, Fours"],
        ["Main pot: Ann won 1,275 with Two pair, Aces and Kings", "Side pot: Ann won 380, Bob won 380"],
    ]


def test_the_table_words_read_in_russian_with_the_numbers_as_russian_writes_them(tmp_path: Path) -> None:
    # The same words in Russian (issue 36): the player named before a colon, so the verb needs no
    # agreement ("Анна: рейз до 60 (+40)"), but a winner's verb agrees ("Вы выигрываете");
    # thousands with a thin space.
    names = {"1": "Анна", "2": "Борис", "3": "Вы"}
    actions = [
        ({"subject": "Анна", "action": "RAISE", "amount": 40, "to": 60}, "Анна: рейз до 60 (+40)"),
        ({"subject": "Вы", "action": "BET", "amount": 1200, "to": 1200}, "Вы: бет 1\u202f200"),
        ({"subject": "Вы", "action": "ALL_IN", "amount": 90, "to": 90}, "Вы: олл-ин 90"),
        ({"subject": "Борис", "action": "CALL", "amount": 40, "to": 60}, "Борис: колл 40"),
        (
            {"subject": "Борис", "action": "FOLD", "amount": 0, "to": 0, "timedOut": True},
            "Борис: фолд (время вышло)",
        ),
    ]
    out = _run(
        tmp_path,
        {
            "lang": "ru",
            "actions": [case for case, _ in actions],
            "pots": [
                {"pots": [{"amount": 120, "seats": [1, 2, 3]}], "names": names},
                {
                    "pots": [{"amount": 300, "seats": [1, 2, 3]}, {"amount": 2000, "seats": [2, 3]}],
                    "names": names,
                },
            ],
            "notices": [{"subject": "Анна", "code": "BLIND_POSTED", "text": "posts small blind 5"}],
            "awards": [
                {
                    "awards": [{"pot": 0, "seats": [3], "amounts": [400], "hand": "One pair, Fours"}],
                    "names": names,
                },
                {
                    "awards": [
                        {"pot": 0, "seats": [1], "amounts": [1275], "hand": "Two pair, Aces and Kings"},
                        {"pot": 1, "seats": [1, 2], "amounts": [380, 380], "hand": ""},
                    ],
                    "names": names,
                },
            ],
        },
    )
    assert [o["line"] for o in out if "line" in o] == [expected for _, expected in actions]
    assert [o["pots"] for o in out if "pots" in o] == [
        ["Банк: 120"],
        ["Основной банк: 300 (Анна, Борис, Вы)", "Побочный банк: 2\u202f000 (Борис, Вы)"],
    ]
    assert [o["notice"] for o in out if "notice" in o] == ["Анна: малый блайнд 5"]
    assert [o["awards"] for o in out if "awards" in o] == [
        ["Банк: Вы выигрываете 400 (Пара четвёрок)"],
        [
            "Основной банк: Анна выигрывает 1\u202f275 (Две пары, тузы и короли)",
            "Побочный банк: Анна выигрывает 380, Борис выигрывает 380",
        ],
    ]


def test_a_seat_without_a_photo_shows_the_initials_of_the_players_name(tmp_path: Path) -> None:
    names = ["Анна К.", "Alex", "bot-7", "Player 1234", "  zoë   lee  ", "李明", "Ann Bea Cid", "", "😀 Joy"]
    out = _run(tmp_path, {"actions": [], "pots": [], "initials": names})
    assert [o["initials"] for o in out] == ["АК", "A", "B7", "P1", "ZL", "李", "AB", "", "😀J"]
