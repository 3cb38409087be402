"""Open Hand History (OHH, spec 1.4.6, hh-specs.handhistory.org): the tracker vendors' JSON standard.

Rendered from a reader's view of the record, like the PokerStars text. Each hand is one `{"ohh":
{...}}` object; several hands follow the spec's storage format (a `.ohh` file): one object per hand,
each separated from the next by one blank line (the file as a whole is not one JSON value). Action
`amount` is what the action put into the pot when it was made (the spec's rule: a raise from 50 to 150
by a player who had 50 in is 100), so blinds read as posted and bets as made; pot `amount` is the total
in the pot, rake included, and `player_wins` what each player took from it.

Spec 1.4.6 has no uncalled-bet action or field. An uncalled part of a bet (a walk's big blind above the
small blind, a raise nobody called) was put in by its action and goes back to its bettor, so it is
written with the spec's own objects as what it is: a pot of its own after the real pots, of that amount
and no rake, that only its bettor contested and that its bettor takes back (issue 25 item 9). Every
action reads as made, the pots add up to what the actions put in, and each player's winnings minus
what their actions put in is their real result.
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
    returned: list[tuple[int, int]] = []  # (seat, chips) of each uncalled part given back
    for action in record.actions:
        if action.kind == "DEAL_BOARD":
            current = new_round(_STREETS[action.street], [card.text for card in action.cards])
            continue
        if action.kind == "UNCALLED_RETURN":
            # Not an action in OHH: the bettor takes it back as a pot of its own (below).
            returned.append((action.seat, action.amount))
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

    def pot_object(amount: int, rake: int, wins: list[tuple[int, int]]) -> dict[str, Any]:
        return {
            "number": len(pots),
            "amount": amount,
            "rake": rake,
            "jackpot": 0,
            "player_wins": [
                {
                    "player_id": player_ids[seat],
                    "win_amount": won,
                    "cashout_amount": 0,
                    "cashout_fee": 0,
                    "bonus_amount": 0,
                }
                for seat, won in wins
            ],
        }

    pots: list[dict[str, Any]] = []
    for pot in record.pots:
        wins = list(zip(pot.winner_seats, pot.winner_amounts, strict=True))
        pots.append(pot_object(pot.amount + pot.rake, pot.rake, wins))
    for bettor, amount in returned:
        pots.append(pot_object(amount, 0, [(bettor, amount)]))
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
