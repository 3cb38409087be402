"""The replay tool: a JSON hand description in, the result as JSON out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from poker_engine.errors import EngineError, InvalidConfigError
from poker_engine.replay import replay_hand


def description(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "variant": "NO_LIMIT",
        "hand_id": "h-1",
        "seats": [
            {"seat": 0, "player_id": "ann", "stack": 1000},
            {"seat": 1, "player_id": "bob", "stack": 300},
            {"seat": 2, "player_id": "cat", "stack": 1000},
        ],
        "button": 0,
        "small_blind": 5,
        "big_blind": 10,
        "step": 5,
        "rake": {"basis_points": 500, "cap": 30},
        "deck": "AsAd KsKd QsQd",
        "actions": [
            {"seat": 0, "action": "RAISE", "to": 400},
            {"seat": 1, "action": "ALL_IN"},
            {"seat": 2, "action": "FOLD"},
        ],
    }
    data.update(overrides)
    return data


def test_replay_reports_events_stacks_pots_rake_and_uncalled() -> None:
    out = replay_hand(description())
    assert out["ok"]
    assert out["is_over"]
    assert out["error"] is None
    assert out["uncalled"] == [{"kind": "UNCALLED_BET_RETURNED", "seat": 0, "amount": 100}]
    assert out["rake"] == 30
    assert sum(p["amount"] for p in out["pots"]) + out["rake"] == 610
    assert sum(s["stack"] for s in out["final_stacks"]) + out["rake"] == 2300
    assert out["events"][0]["kind"] == "HAND_STARTED"
    assert out["events"][-1]["kind"] == "HAND_ENDED"


def test_replay_reports_an_illegal_action_with_its_index_and_reason() -> None:
    actions = [{"seat": 0, "action": "CALL"}, {"seat": 2, "action": "CHECK"}, {"seat": 1, "action": "CHECK"}]
    out = replay_hand(description(actions=actions))
    assert not out["ok"]
    assert out["error"]["index"] == 1
    assert out["error"]["reason"] == "NOT_YOUR_TURN"
    assert out["legal_actions"]["seat"] == 1


def test_replay_supports_timeout_and_leave() -> None:
    actions = [{"seat": 0, "action": "TIMEOUT"}, {"seat": 2, "action": "LEAVE"}]
    out = replay_hand(description(actions=actions))
    assert out["ok"]
    assert out["is_over"]
    assert [e["cause"] for e in out["events"] if e["kind"] == "PLAYER_ACTED"] == ["TIMEOUT", "LEFT_TABLE"]


def test_replay_refuses_a_bad_description_with_a_typed_error() -> None:
    with pytest.raises(EngineError) as caught:
        replay_hand(description(deck="AsAs"))
    assert caught.value.reason == "INVALID_CARD"
    with pytest.raises(InvalidConfigError) as config_error:
        replay_hand(description(seats=[]))
    assert config_error.value.reason == "INVALID_CONFIG"


def test_replay_command_prints_json_and_exits_nonzero_on_an_illegal_action(tmp_path: Path) -> None:
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(description(actions=[{"seat": 1, "action": "CALL"}])))
    done = subprocess.run(
        [sys.executable, "-m", "poker_engine.replay", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["reason"] == "NOT_YOUR_TURN"


GOLDEN_HANDS = sorted((Path(__file__).parent / "hands").glob("*.json"))


@pytest.mark.parametrize("path", GOLDEN_HANDS, ids=[path.stem for path in GOLDEN_HANDS])
def test_golden_hand_histories_replay_to_their_recorded_result(path: Path) -> None:
    data = json.loads(path.read_text())
    out = replay_hand(data)
    for key, expected in data["expected"].items():
        if key == "error":
            assert {k: out["error"][k] for k in expected} == expected
        else:
            assert out[key] == expected, key
    if out["is_over"]:
        assert sum(s["stack"] for s in out["final_stacks"]) + out["rake"] == sum(
            s["stack"] for s in data["seats"]
        )


def test_replay_command_exits_2_on_an_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{ not json")
    done = subprocess.run(
        [sys.executable, "-m", "poker_engine.replay", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["reason"] == "UNREADABLE_FILE"
