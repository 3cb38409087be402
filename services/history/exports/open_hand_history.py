"""Open Hand History (OHH, spec 1.4.6, hh-specs.handhistory.org): the tracker vendors' JSON standard.

Rendered from a reader's view of the record, like the PokerStars text. Each hand is one `{"ohh":
{...}}` object; several hands follow the spec's storage format (a `.ohh` file): one object per hand,
each separated from the next by one blank line (the file as a whole is not one JSON value). Action
`amount` is what the action put into the pot (the spec's rule: a raise from 50 to 150 by a player who
had 50 in is 100); pot `amount` includes the rake. OHH has no uncalled-bet action; by the same rule the
part of a bet nobody called was never put into the pot, so it comes off the amount of the action that
made it (a bet of 300 of which 200 came back uncalled is a bet of 100), and every player's winnings
minus what their actions put in is their real result.
"""

from __future__ import annotations

import json
from typing import Any

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from services.history.exports.names import export_names

SPEC_VERSION = "1.4.6"
# Not one JSON value but the spec's stream of objects separated by blank lines.
CONTENT_TYPE = "application/x-ohh; charset=utf-8"
SITE_NAME = "Ampex Poker"
_STREETS = {"PREFLOP": "Preflop", "FLOP": "Flop", "TURN": "Turn", "RIVER": "River", "SHOWDOWN": "Showdown"}
_ACTIONS = {
    "POST_SMALL_BLIND": "Post SB",
    "POST_BIG_BLIND": "Post BB",
    "POST_EXTRA_BIG_BLIND": "Post Extra Blind",
    "POST_DEAD_SMALL_BLIND": "Post Dead",
    "FOLD": "Fold",
    "CHECK": "Check",
    "CALL": "Call",
    "BET": "Bet",
    "RAISE": "Raise",
    "SHOW": "Shows Cards",
    "MUCK": "Mucks Cards",
}
_POOLS = {common_pb2.CHIP_POOL_GRAM: "GRAM", common_pb2.CHIP_POOL_MPX: "MPX"}


def _visible_cards(cards: Any) -> list[str] | None:
    texts = [card.text for card in cards]
    return texts if texts and all(not card.hidden for card in cards) else None


def hand_object(record: history_pb2.HandRecord, number: int, hero_id: str | None) -> dict[str, Any]:
    names = export_names(record)
    player_ids = {seat.seat: index for index, seat in enumerate(record.seats)}
    hero = next((player_ids[s.seat] for s in record.seats if s.player_id == hero_id), None)
    fixed = record.variant == common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM
    rounds: list[dict[str, Any]] = []
    number_of_action = 0

    def new_round(street: str, cards: list[str]) -> dict[str, Any]:
        round_ = {"id": len(rounds), "street": street, "cards": cards, "actions": []}
        rounds.append(round_)
        return round_

    def add(round_: dict[str, Any], player: int, action: str, amount: int = 0, **extra: Any) -> None:
        nonlocal number_of_action
        number_of_action += 1
        entry = {
            "action_number": number_of_action,
            "player_id": player,
            "action": action,
            "amount": amount,
            "is_allin": bool(extra.pop("is_allin", False)),
        }
        entry.update(extra)
        round_["actions"].append(entry)

    current = new_round("Preflop", [])
    dealt = False
    last_wager: dict[int, dict[str, Any]] = {}  # seat -> its last action that put chips in
    for action in record.actions:
        if action.kind == "DEAL_BOARD":
            current = new_round(_STREETS[action.street], [card.text for card in action.cards])
            continue
        if action.kind == "UNCALLED_RETURN":
            # The uncalled part of the last bet was never in the pot: off that action's amount.
            last_wager[action.seat]["amount"] -= action.amount
            continue
        if not action.kind.startswith("POST_") and not dealt:
            for seat in record.seats:
                cards = (
                    _visible_cards(seat.hole_cards)
                    if (hero_id is None or seat.player_id == hero_id)
                    else None
                )
                if cards is not None:
                    add(current, player_ids[seat.seat], "Dealt Cards", cards=cards)
            dealt = True
        if action.kind in ("SHOW", "MUCK") and current["street"] != "Showdown":
            current = new_round("Showdown", [])
        extra: dict[str, Any] = {}
        if action.kind in ("SHOW", "MUCK"):
            cards = _visible_cards(action.cards)
            if cards is not None:
                extra["cards"] = cards
        add(
            current,
            player_ids[action.seat],
            _ACTIONS[action.kind],
            action.amount,
            is_allin=action.all_in,
            **extra,
        )
        if action.amount:
            last_wager[action.seat] = current["actions"][-1]
    pots = []
    for index, pot in enumerate(record.pots):
        pots.append(
            {
                "number": index,
                "amount": pot.amount + pot.rake,
                "rake": pot.rake,
                "jackpot": 0,
                "player_wins": [
                    {
                        "player_id": player_ids[seat],
                        "win_amount": amount,
                        "cashout_amount": 0,
                        "cashout_fee": 0,
                        "bonus_amount": 0,
                    }
                    for seat, amount in zip(pot.winner_seats, pot.winner_amounts, strict=True)
                ],
            }
        )
    body: dict[str, Any] = {
        "spec_version": SPEC_VERSION,
        "site_name": SITE_NAME,
        "network_name": SITE_NAME,
        "internal_version": "1",
        "tournament": False,
        "game_number": str(number),
        "start_date_utc": record.start_time.ToDatetime().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "table_name": record.table_id,
        "game_type": "Holdem",
        "bet_limit": {"bet_type": "FL" if fixed else "NL", "bet_cap": 0},
        "table_size": record.table_size or len(record.seats),
        "currency": _POOLS.get(record.pool, "CHIPS"),
        "dealer_seat": record.button_seat + 1,
        "small_blind_amount": record.small_blind,
        "big_blind_amount": record.big_blind,
        "ante_amount": 0,
        "flags": [],
        "players": [
            {
                "id": player_ids[s.seat],
                "seat": s.seat + 1,
                "name": names[s.seat],
                "display": names[s.seat],
                "starting_stack": s.starting_stack,
                "player_bounty": 0,
                "is_sitting_out": False,
            }
            for s in record.seats
        ],
        "rounds": rounds,
        "pots": pots,
    }
    if hero is not None:
        body["hero_player_id"] = hero
    return {"ohh": body}


def render(records: list[tuple[int, history_pb2.HandRecord]], hero_id: str | None) -> str:
    """Several hands in the spec's storage format, oldest first: one `{"ohh": ...}` object per hand
    (on one line), each followed by one blank line."""
    return "".join(json.dumps(hand_object(record, number, hero_id)) + "\n\n" for number, record in records)
