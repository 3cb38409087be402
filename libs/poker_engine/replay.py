"""Replay a hand described in JSON and print the result as JSON: ``python -m poker_engine.replay FILE``.

The format is documented in docs/engine.md ("Replay format"). ``replay_hand`` is the pure part the tests
use; ``main`` only reads the file and prints. Exit status: 0 played through, 1 an action was illegal
(reported with its index and reason; the result shows the hand as it stood), 2 unreadable file or config.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from poker_engine.actions import Action
from poker_engine.cards import parse_cards
from poker_engine.config import ForcedPost, HandConfig, PostKind, RakeRule, SeatConfig, Variant
from poker_engine.errors import EngineError, InvalidConfigError
from poker_engine.events import ActionKind
from poker_engine.hand import Hand
from poker_engine.views import events_to_json


def parse_deck(value: object) -> tuple[int, ...]:
    """Card text ("As Kd ...") or a list of ints/texts; a partial deck is completed in ascending order."""
    if isinstance(value, str):
        given = parse_cards(value)
    elif isinstance(value, list):
        given = tuple(parse_cards(item)[0] if isinstance(item, str) else int(item) for item in value)
    else:
        raise InvalidConfigError("deck must be card text or a list")
    if len(set(given)) != len(given):
        raise InvalidConfigError("deck repeats a card")
    seen = set(given)
    return given + tuple(card for card in range(52) if card not in seen)


def config_from_json(data: Mapping[str, Any]) -> HandConfig:
    try:
        rake = data.get("rake") or {}
        return HandConfig(
            variant=Variant(data.get("variant", "NO_LIMIT")),
            seats=tuple(
                SeatConfig(int(s["seat"]), str(s["player_id"]), int(s["stack"])) for s in data["seats"]
            ),
            button=int(data["button"]),
            small_blind=int(data["small_blind"]),
            big_blind=int(data["big_blind"]),
            deck=parse_deck(data.get("deck", [])),
            step=int(data.get("step", 1)),
            rake=RakeRule(int(rake.get("basis_points", 0)), int(rake.get("cap", 30))),
            small_blind_seat=data.get("small_blind_seat"),
            big_blind_seat=data.get("big_blind_seat"),
            extra_posts=tuple(
                ForcedPost(int(p["seat"]), PostKind(p["kind"])) for p in data.get("extra_posts", [])
            ),
            small_bet=data.get("small_bet"),
            big_bet=data.get("big_bet"),
            hand_id=str(data.get("hand_id", "")),
        )
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, EngineError):
            raise
        raise InvalidConfigError(f"bad hand description: {error!r}") from error


def apply_json_action(hand: Hand, entry: Mapping[str, Any]) -> None:
    seat = int(entry["seat"])
    name = str(entry["action"]).upper()
    if name == "TIMEOUT":
        hand.timeout(seat)
    elif name == "LEAVE":
        hand.leave(seat)
    elif name == "ALL_IN":
        hand.all_in(seat)
    else:
        to = entry.get("to")
        hand.act(Action(seat, ActionKind(name), None if to is None else int(to)))


def replay_hand(data: Mapping[str, Any]) -> dict[str, Any]:
    """Play the described hand; never raises for an illegal action (it is reported instead)."""
    hand = Hand(config_from_json(data))
    error: dict[str, Any] | None = None
    actions: Sequence[Mapping[str, Any]] = data.get("actions", [])
    for index, entry in enumerate(actions):
        try:
            apply_json_action(hand, entry)
        except EngineError as refusal:
            error = {"index": index, "reason": refusal.reason, "message": str(refusal), "action": dict(entry)}
            break
        except (KeyError, TypeError, ValueError) as bad:
            error = {"index": index, "reason": "INVALID_ACTION", "message": repr(bad), "action": dict(entry)}
            break
    result = hand.result
    legal = hand.legal_actions()
    return {
        "ok": error is None,
        "error": error,
        "is_over": hand.is_over,
        "board": " ".join(
            event["cards"] for event in events_to_json(hand.events) if event["kind"] == "BOARD_DEALT"
        ),
        "events": events_to_json(hand.events),
        "final_stacks": [{"seat": seat, "stack": stack} for seat, stack in hand.stacks.items()],
        "pots": [pot.to_dict() for pot in result.pots] if result else [],
        "rake": result.rake if result else 0,
        "uncalled": [returned.to_dict() for returned in result.uncalled] if result else [],
        "results": result.to_dict()["results"] if result else [],
        "legal_actions": legal.to_dict() if legal else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m poker_engine.replay FILE.json", file=sys.stderr)
        return 2
    try:
        with open(args[0], encoding="utf-8") as handle:
            data = json.load(handle)
        output = replay_hand(data)
    except (OSError, json.JSONDecodeError, EngineError) as error:
        reason = error.reason if isinstance(error, EngineError) else "UNREADABLE_FILE"
        print(
            json.dumps(
                {"ok": False, "error": {"index": None, "reason": reason, "message": str(error)}}, indent=2
            )
        )
        return 2
    print(json.dumps(output, indent=2))
    return 0 if output["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
