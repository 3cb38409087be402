"""The table's chat and hand log survive a reload of the page in the same tab (web/src/table_memory.ts
with the screen's reducer, run in Node): the last 50 lines of each per table in sessionStorage, keyed
by the table's id, put back when the table is opened again; the hand numbers go on after the last
kept one, and the first full view after the reload adds no heading for the hand already numbered.
Nothing comes back at another table, for another player signed in on the tab, in another language
(the language switch redraws the table afresh) or from a value the page did not write; a storage that
refuses writes changes nothing on screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.node import run_web_script

ME = "tg:424242"
HAND_1 = "6aa36eb6-1d54-4a1b-9c1e-0123456789ab"
HAND_2 = "0f3c9d2e-7b1a-4c55-8e21-fedcba987654"


def _run(tmp_path: Path, scenarios: list[dict[str, Any]]) -> tuple[int, list[list[dict[str, Any]]]]:
    lines = run_web_script("e2e/table_memory_cases.ts", scenarios, tmp_path, "the table's kept lines")
    kept = lines[0]["kept"]
    steps: list[list[dict[str, Any]]] = [[] for _ in scenarios]
    for line in lines[1:]:
        steps[line["scenario"]].append(line)
    return kept, steps


def test_the_last_lines_of_the_chat_and_the_log_come_back_after_a_reload(tmp_path: Path) -> None:
    chats = [{"chat": f"line {i}"} for i in range(60)]
    kept, [steps] = _run(
        tmp_path,
        [
            {
                "me": ME,
                "table": "table-1",
                "steps": [
                    {"hand": HAND_1},
                    *chats,
                    {"chat": "mine", "from": "me"},
                    {"note": "Your seed went into hand 6aa36eb6"},
                    {"reload": {}},
                    {"view": HAND_1},
                    {"chat": "after the reload"},
                    {"hand": HAND_2},
                ],
            }
        ],
    )
    assert kept == 50
    before, reloaded, viewed, chatted, next_hand = steps[-5], steps[-4], steps[-3], steps[-2], steps[-1]
    # The page had 61 chat lines; the last 50 come back, in order, mine as "You".
    assert before["chat"][-1] == "You: mine"
    assert reloaded["chat"] == before["chat"][-50:]
    assert reloaded["chat"][0] == "Ann: line 11"
    assert reloaded["log"] == ["# Hand 1", "Your seed went into hand 1"]
    assert reloaded["log"] == before["log"]
    # Line ids go on after the kept ones (the screen appends lines by id).
    assert reloaded["nextId"] == before["nextId"]
    assert all(step["idsUnique"] and step["idsBelowNext"] for step in steps)
    # The table's first message after the reload is a full view of the same hand: no new heading.
    assert viewed["log"] == reloaded["log"]
    assert chatted["chat"][-1] == "Ann: after the reload"
    assert len(chatted["chat"]) == 50
    # The next hand is hand 2 of this log, as it would have been without the reload.
    assert next_hand["log"][-1] == "# Hand 2"
    assert next_hand["handCount"] == 2


def test_a_long_log_keeps_its_last_50_lines_and_the_hand_numbers_go_on(tmp_path: Path) -> None:
    hands = [{"hand": f"hand-{i:04d}-0000-0000-0000-000000000000"} for i in range(70)]
    _, [steps] = _run(
        tmp_path,
        [{"me": ME, "table": "table-1", "steps": [*hands, {"reload": {}}, {"hand": "next-hand-id"}]}],
    )
    before, reloaded, after = steps[-3], steps[-2], steps[-1]
    assert len(before["log"]) == 70
    assert reloaded["log"] == before["log"][-50:]
    assert reloaded["log"][0] == "# Hand 21"
    assert after["log"][-1] == "# Hand 71"
    # What is kept stays small: 50 lines of each kind at most, whatever the session's length.
    assert before["keptBytes"] < 8000


def test_nothing_comes_back_elsewhere_for_another_player_in_another_language_or_from_a_bad_value(
    tmp_path: Path,
) -> None:
    seen = [{"hand": HAND_1}, {"chat": "hello"}]
    _, runs = _run(
        tmp_path,
        [
            {"me": ME, "table": "table-1", "steps": [*seen, {"reload": {"table": "table-2"}}]},
            {"me": ME, "table": "table-1", "steps": [*seen, {"reload": {"me": "tg:7"}}]},
            {"me": ME, "table": "table-1", "steps": [*seen, {"reload": {"lang": "ru"}}]},
            {"me": ME, "table": "table-1", "steps": [*seen, {"reload": {"spectate": True}}]},
            {"me": ME, "table": "table-1", "steps": [*seen, {"corrupt": "{not json"}, {"reload": {}}]},
            {
                "me": ME,
                "table": "table-1",
                "steps": [*seen, {"corrupt": '{"v": 1, "log": 3}'}, {"reload": {}}],
            },
            {
                "me": ME,
                "table": "table-1",
                "steps": [{"full": True}, *seen, {"chat": "still shown"}, {"reload": {}}],
            },
        ],
    )
    for steps in runs:
        assert steps[-1]["log"] + steps[-1]["chat"] == [], steps[-1]
    # The page itself went on while the storage refused: every line on screen.
    full = runs[-1]
    assert full[-2]["chat"] == ["Ann: hello", "Ann: still shown"]
    # Back at the first table in the same language as the same player, the lines are there again.
    _, [back] = _run(
        tmp_path,
        [
            {
                "me": ME,
                "table": "table-1",
                "steps": [*seen, {"reload": {"table": "table-2"}}, {"reload": {"table": "table-1"}}],
            }
        ],
    )
    assert back[-1]["chat"] == ["Ann: hello"]
