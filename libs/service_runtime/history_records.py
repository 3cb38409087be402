"""Build the history service's HandRecord from a finished hand (engine events) or a settled house-game
round (for the table service).

The table service calls `hand_record_from_events` after the cashier settled the hand and sends the
result with `HistoryService.RecordHand`. Everything in the record comes from the engine's events
(`poker_engine.events`) plus what only the table knows: ids, room, pool, times, display names,
each seat's device and network signals (fair play, operators only), how long each decision took,
and the fairness commitment. The record is the full one (every hole card);
the history service redacts it per reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from house_games.settlement import Account, RoundSettlement
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker_engine.cards import card_text
from poker_engine.config import PostKind, Variant
from poker_engine.events import (
    ActionCause,
    BlindPosted,
    BoardDealt,
    CardsMucked,
    CardsShown,
    Event,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    PlayerActed,
    PotAwarded,
    Street,
    UncalledBetReturned,
)
from service_runtime.proto_time import to_timestamp

_VARIANTS = {
    Variant.NO_LIMIT: common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
    Variant.FIXED_LIMIT: common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM,
}
_POSTS = {
    PostKind.SMALL_BLIND: "POST_SMALL_BLIND",
    PostKind.BIG_BLIND: "POST_BIG_BLIND",
    PostKind.EXTRA_BIG_BLIND: "POST_EXTRA_BIG_BLIND",
    PostKind.DEAD_SMALL_BLIND: "POST_DEAD_SMALL_BLIND",
}
_CAUSES = {
    ActionCause.PLAYER: history_pb2.ACTION_CAUSE_PLAYER,
    ActionCause.TIMEOUT: history_pb2.ACTION_CAUSE_TIMEOUT,
    ActionCause.LEFT_TABLE: history_pb2.ACTION_CAUSE_LEFT_TABLE,
}


def card_pb(card: int) -> common_pb2.Card:
    return common_pb2.Card(index=card, text=card_text(card))


def cards_pb(cards: Iterable[int]) -> list[common_pb2.Card]:
    return [card_pb(card) for card in cards]


def hand_record_from_events(
    events: Iterable[Event],
    *,
    hand_id: str,
    table_id: str,
    room_id: str,
    pool: common_pb2.ChipPool.ValueType,
    start_time: datetime,
    end_time: datetime,
    table_size: int,
    display_names: Mapping[str, str] | None = None,
    client_fingerprints: Mapping[str, str] | None = None,
    network_fingerprints: Mapping[str, str] | None = None,
    decision_ms: Mapping[int, int] | None = None,
    seed_commitment: str = "",
    seed_reveal_reference: str = "",
) -> history_pb2.HandRecord:
    """The full record of a finished hand; raises ValueError if the events do not end the hand.

    `client_fingerprints` / `network_fingerprints` map a player to the device / network signal of
    their seat; `decision_ms` maps the position of a `PlayerActed` event in `events` to the
    milliseconds the player took for it."""
    names = display_names or {}
    fingerprints = client_fingerprints or {}
    networks = network_fingerprints or {}
    think_times = decision_ms or {}
    record = history_pb2.HandRecord(
        hand_id=hand_id,
        table_id=table_id,
        room_id=room_id,
        pool=pool,
        start_time=to_timestamp(start_time),
        end_time=to_timestamp(end_time),
        table_size=table_size,
        seed_commitment=seed_commitment,
        seed_reveal_reference=seed_reveal_reference,
    )
    seats: dict[int, history_pb2.HandSeat] = {}
    street = Street.PREFLOP
    ended = False

    def step(kind: str, seat: int = 0, amount: int = 0, **fields: object) -> history_pb2.HandAction:
        action = history_pb2.HandAction(
            sequence=len(record.actions), street=street.value, seat=seat, kind=kind, amount=amount
        )
        for name, value in fields.items():
            if name == "cards":
                action.cards.extend(value)  # type: ignore[arg-type]
            else:
                setattr(action, name, value)
        record.actions.append(action)
        return action

    for position, event in enumerate(events):
        if isinstance(event, HandStarted):
            record.variant = _VARIANTS[event.variant]
            record.button_seat = event.button
            record.small_blind = event.small_blind
            record.big_blind = event.big_blind
            record.small_bet = event.small_bet
            record.big_bet = event.big_bet
            for info in event.seats:
                seat = record.seats.add(
                    seat=info.seat,
                    player_id=info.player_id,
                    display_name=names.get(info.player_id, info.player_id)[:32],
                    starting_stack=info.stack,
                    client_fingerprint=fingerprints.get(info.player_id, ""),
                    network_fingerprint=networks.get(info.player_id, ""),
                )
                seats[info.seat] = seat
        elif isinstance(event, BlindPosted):
            step(_POSTS[event.post], event.seat, event.amount, all_in=event.all_in)
        elif isinstance(event, HoleCardsDealt):
            seats[event.seat].hole_cards.extend(cards_pb(event.cards))
        elif isinstance(event, PlayerActed):
            to = event.to if event.action.value in ("BET", "RAISE") else 0
            step(
                event.action.value,
                event.seat,
                event.added,
                to=to,
                all_in=event.all_in,
                cause=_CAUSES[event.cause],
                decision_ms=think_times.get(position, 0) if event.cause is ActionCause.PLAYER else 0,
            )
            if event.action.value == "FOLD":
                seats[event.seat].folded = True
        elif isinstance(event, BoardDealt):
            street = event.street
            step("DEAL_BOARD", cards=cards_pb(event.cards))
            record.board.extend(cards_pb(event.cards))
        elif isinstance(event, UncalledBetReturned):
            step("UNCALLED_RETURN", event.seat, event.amount)
        elif isinstance(event, CardsShown):
            street = Street.SHOWDOWN
            step("SHOW", event.seat, cards=cards_pb(event.cards))
            seats[event.seat].shown = True
            seats[event.seat].mucked = False
        elif isinstance(event, CardsMucked):
            street = Street.SHOWDOWN
            step("MUCK", event.seat, cards=cards_pb(event.cards))
            seats[event.seat].mucked = True
        elif isinstance(event, PotAwarded):
            record.pots.add(
                amount=event.amount,
                rake=event.rake,
                winner_seats=[seat for seat, _ in event.winners],
                winner_amounts=[amount for _, amount in event.winners],
                eligible_seats=list(event.eligible),
            )
        elif isinstance(event, HandEnded):
            ended = True
            record.rake = event.rake
            for result in event.results:
                seats[result.seat].final_stack = result.final_stack
                seats[result.seat].net_result = result.net
    if not ended:
        raise ValueError("the events do not contain the end of the hand")
    return record


def house_game_record(
    settlement: RoundSettlement,
    *,
    variant: common_pb2.GameVariant.ValueType,
    hand_id: str,
    table_id: str,
    room_id: str,
    pool: common_pb2.ChipPool.ValueType,
    start_time: datetime,
    end_time: datetime,
    table_size: int,
    seats: Mapping[str, int],
    starting_stacks: Mapping[str, int],
    box_cards: Mapping[int, Iterable[int]],
    dealer_cards: Iterable[int],
    board: Iterable[int] = (),
    shown_boxes: Iterable[int] = (),
    display_names: Mapping[str, str] | None = None,
    client_fingerprints: Mapping[str, str] | None = None,
    seed_commitment: str = "",
) -> history_pb2.HandRecord:
    """The full record of a settled house-game round (Casino Hold'em, Russian Poker).

    `seats` maps each player to their seat; every line of the settlement becomes a `HouseGameLine`
    with the signed change of the player's stack, so each seat's net is the sum of its boxes' lines.
    """
    names = display_names or {}
    fingerprints = client_fingerprints or {}
    shown = set(shown_boxes)
    record = history_pb2.HandRecord(
        hand_id=hand_id,
        table_id=table_id,
        room_id=room_id,
        variant=variant,
        pool=pool,
        start_time=to_timestamp(start_time),
        end_time=to_timestamp(end_time),
        table_size=table_size,
        seed_commitment=seed_commitment,
        board=cards_pb(board),
    )
    nets = {player: 0 for player in seats}
    game = record.house_game
    game.dealer_cards.extend(cards_pb(dealer_cards))
    for box in settlement.boxes:
        entry = game.boxes.add(
            box=box.box, seat=seats[box.player], cards=cards_pb(box_cards[box.box]), shown=box.box in shown
        )
        for line in box.lines:
            change = line.delta(Account.PLAYER)
            nets[box.player] += change
            entry.lines.add(
                item=line.item.value,
                stake=line.stake,
                outcome=line.outcome.value,
                player_change=change,
                reason=line.reason,
                withheld=line.withheld,
            )
    game.house_bank_change = settlement.delta(Account.HOUSE_BANK)
    game.jackpot_change = settlement.delta(Account.JACKPOT)
    for player, seat in sorted(seats.items(), key=lambda item: item[1]):
        start = starting_stacks[player]
        record.seats.add(
            seat=seat,
            player_id=player,
            display_name=names.get(player, player)[:32],
            starting_stack=start,
            final_stack=start + nets[player],
            net_result=nets[player],
            client_fingerprint=fingerprints.get(player, ""),
        )
    return record
