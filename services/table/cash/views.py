"""Per-recipient protobuf views of a table: what one player (or a watcher without a seat) may see.

Hidden cards are removed here and nowhere else: every engine event goes through the engine's own
redaction (`poker_engine.views.player_view` / `spectator_view`) before it becomes a message, and a
seat's hole cards are put face up in a view only for the recipient's own seat or once shown.
Seat numbers on the wire start at 1; the engine's start at 0.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from google.protobuf.timestamp_pb2 import Timestamp

from poker.common.v1 import common_pb2
from poker.table.v1 import table_pb2
from poker_engine.actions import LegalActions
from poker_engine.cards import card_text
from poker_engine.evaluator import evaluate
from poker_engine.events import (
    ActionCause,
    ActionKind,
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
from poker_engine.pots import Pot
from poker_engine.views import player_view, spectator_view
from services.table.ports.rooms import Room

_STREETS = {
    Street.PREFLOP: table_pb2.STREET_PREFLOP,
    Street.FLOP: table_pb2.STREET_FLOP,
    Street.TURN: table_pb2.STREET_TURN,
    Street.RIVER: table_pb2.STREET_RIVER,
    Street.SHOWDOWN: table_pb2.STREET_SHOWDOWN,
    Street.COMPLETE: table_pb2.STREET_SHOWDOWN,
}
_ACTIONS = {
    ActionKind.FOLD: table_pb2.ACTION_KIND_FOLD,
    ActionKind.CHECK: table_pb2.ACTION_KIND_CHECK,
    ActionKind.CALL: table_pb2.ACTION_KIND_CALL,
    ActionKind.BET: table_pb2.ACTION_KIND_BET,
    ActionKind.RAISE: table_pb2.ACTION_KIND_RAISE,
}
HIDDEN_CARD = common_pb2.Card(hidden=True)


def seat_handle(session_id: str) -> str:
    """The opaque handle other players see in place of a seated player's id: the same for the whole
    sitting (the seat and the player's chat), another at the next sit-down. It is a digest of the seat
    session id, which is itself a digest of the player's id and their SitDown's request id: a
    client's random request id keeps it from being traced back to an account."""
    return "p-" + hashlib.sha256(f"seat handle\0{session_id}".encode()).hexdigest()[:12]


def public_seat(engine_seat: int) -> int:
    return engine_seat + 1


def card_pb(card: int) -> common_pb2.Card:
    return common_pb2.Card(index=card, text=card_text(card))


def cards_pb(cards: Sequence[int]) -> list[common_pb2.Card]:
    return [card_pb(card) for card in cards]


@dataclass(frozen=True, slots=True)
class SeatState:
    """One occupied seat as the table knows it (engine seat number)."""

    seat: int
    player_id: str
    status: int  # table_pb2.SeatStatus
    stack: int
    bet: int
    folded: bool
    all_in: bool
    in_hand: bool
    time_bank_seconds: float
    # What the seat shows others: the player's display name and photo (the lobby's; "" for none
    # shown), and an opaque handle of this sitting (`seat_handle`) in place of the player id, which
    # only the player's own view carries.
    display_name: str = ""
    handle: str = ""
    avatar_url: str = ""


@dataclass(frozen=True, slots=True)
class TableState:
    """Everything any recipient's view is cut from, captured once per table event."""

    table_id: str
    room: Room
    phase: int  # table_pb2.TablePhase
    hand_id: str
    commitment: str
    street: int
    button: int | None
    to_act: int | None
    seats: tuple[SeatState, ...]
    board: tuple[int, ...]
    pots: tuple[Pot, ...]  # the running hand's pots (engine seats), split where a player is all-in
    awards: tuple[PotAwarded, ...]
    events: tuple[Event, ...]  # the full record of the running or last hand: redacted per recipient
    legal: LegalActions | None
    all_in_allowed: bool
    deadline: float | None  # wall clock
    as_of: float  # wall clock
    # The next hand's client-seed step (table_pb2.SeedPhase), when it ends (wall clock), and once
    # the version 3 hash set is closed, its (public seat, hash) pairs: the same for every recipient.
    seed_phase: int = 0
    seed_deadline: float | None = None
    seed_hashes: tuple[tuple[int, str], ...] = ()
    closing: bool = False  # CloseTable asked (in the seats' log)


def _shown_seats(events: Sequence[Event]) -> set[int]:
    return {e.seat for e in events if isinstance(e, CardsShown)}


def _hole_cards(events: Sequence[Event], seat: int) -> tuple[int, ...]:
    for event in events:
        if isinstance(event, HoleCardsDealt) and event.seat == seat:
            return event.cards
    return ()


def legal_actions_pb(legal: LegalActions, deadline: float | None, all_in: bool) -> table_pb2.LegalActions:
    kinds = [_ACTIONS[k] for k in legal.kinds]
    # The engine's own check (`can_all_in`) decides; `all_in_amount` says how much it puts in.
    if all_in:
        kinds.append(table_pb2.ACTION_KIND_ALL_IN)
    message = table_pb2.LegalActions(
        actions=kinds,
        call_amount=legal.call_amount,
        min_amount=legal.min_to if (legal.can_bet or legal.can_raise) else 0,
        max_amount=legal.max_to if (legal.can_bet or legal.can_raise) else 0,
        step=legal.step,
        all_in_amount=legal.all_in_to,
    )
    if deadline is not None:
        message.deadline.CopyFrom(to_timestamp_seconds(deadline))
    return message


def to_timestamp_seconds(wall: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromNanoseconds(int(wall * 1e9))
    return stamp


def table_view(state: TableState, recipient: int | None) -> table_pb2.TableView:
    """The view of engine seat `recipient` (None: a watcher without a seat, who sees no hidden card)."""
    shown = _shown_seats(state.events)
    seats_by_number = {s.seat: s for s in state.seats}
    seat_views = []
    for number in range(state.room.seats):
        seat = seats_by_number.get(number)
        if seat is None:
            seat_views.append(table_pb2.SeatView(seat=public_seat(number)))
            continue
        hole: list[common_pb2.Card] = []
        if seat.in_hand:
            cards = _hole_cards(state.events, number)
            if number == recipient or number in shown:
                hole = cards_pb(cards)
            elif cards and not seat.folded:
                hole = [HIDDEN_CARD, HIDDEN_CARD]
        seat_views.append(
            table_pb2.SeatView(
                seat=public_seat(number),
                # A player never learns another's id (a Telegram account): the sitting's handle.
                player_id=seat.player_id if number == recipient else seat.handle,
                display_name=seat.display_name,
                avatar_url=seat.avatar_url,
                status=seat.status,  # type: ignore[arg-type]
                stack=seat.stack,
                bet_this_round=seat.bet,
                folded=seat.folded,
                all_in=seat.all_in,
                hole_cards=hole,
                time_bank_seconds=int(seat.time_bank_seconds),
            )
        )
    view = table_pb2.TableView(
        table_id=state.table_id,
        room_id=state.room.room_id,
        variant=state.room.variant_pb,  # type: ignore[arg-type]
        pool=state.room.pool,  # type: ignore[arg-type]
        phase=state.phase,  # type: ignore[arg-type]
        hand_id=state.hand_id,
        seed_commitment=state.commitment,
        street=state.street,  # type: ignore[arg-type]
        button_seat=public_seat(state.button) if state.button is not None else 0,
        to_act_seat=public_seat(state.to_act) if state.to_act is not None else 0,
        seats=seat_views,
        board=cards_pb(state.board),
        pots=[
            table_pb2.Pot(amount=pot.amount, eligible_seats=[public_seat(s) for s in pot.eligible])
            for pot in state.pots
        ],
        awards=[award_pb(a, state) for a in state.awards],
    )
    view.as_of.CopyFrom(to_timestamp_seconds(state.as_of))
    if state.to_act is not None and state.deadline is not None:
        view.to_act_deadline.CopyFrom(to_timestamp_seconds(state.deadline))
    view.seed_phase = state.seed_phase  # type: ignore[assignment]
    if state.seed_phase and state.seed_deadline is not None:
        view.seed_phase_deadline.CopyFrom(to_timestamp_seconds(state.seed_deadline))
    view.closing = state.closing
    view.seed_hashes.extend(
        table_pb2.SeedHash(seat=seat, client_seed_hash=h) for seat, h in state.seed_hashes
    )
    if state.legal is not None and recipient is not None and state.legal.seat == recipient:
        view.legal_actions.CopyFrom(legal_actions_pb(state.legal, state.deadline, state.all_in_allowed))
    return view


def personal_view(public: table_pb2.TableView, state: TableState, recipient: int) -> table_pb2.TableView:
    """`table_view(state, recipient)` made from the public view of the same state
    (`table_view(state, None)`): a copy with the recipient's own hole cards and, on their turn, their
    legal actions. The streams render the public view once per step and personalise a copy per seat
    (issue 28: rendering every seat's view in full was a third of a step's stream work); the result
    is the same message (tests/table/test_table_views.py)."""
    view = table_pb2.TableView()
    view.CopyFrom(public)
    seat = next((s for s in state.seats if s.seat == recipient), None)
    if seat is not None:
        view.seats[recipient].player_id = seat.player_id  # their own id, where others see the handle
    if seat is not None and seat.in_hand:
        # The public view hides the cards (or shows them, if shown); the recipient sees their own.
        hole = view.seats[recipient].hole_cards
        del hole[:]
        hole.extend(cards_pb(_hole_cards(state.events, recipient)))
    if state.legal is not None and state.legal.seat == recipient:
        view.legal_actions.CopyFrom(legal_actions_pb(state.legal, state.deadline, state.all_in_allowed))
    return view


def award_pb(award: PotAwarded, state: TableState | None = None) -> table_pb2.PotAward:
    """A pot's award; with the table's state, the five cards of its winning hand too (only when the
    first winner showed their cards: a card nobody was shown is never told)."""
    pb = table_pb2.PotAward(
        pot_index=award.index,
        seats=[public_seat(seat) for seat, _ in award.winners],
        amounts=[amount for _, amount in award.winners],
        hand_description=award.hand_description,
    )
    if state is not None and award.hand_description and award.winners:
        winner = award.winners[0][0]
        hole = _hole_cards(state.events, winner)
        if winner in _shown_seats(state.events) and hole and len(state.board) >= 3:
            pb.winning_cards.extend(cards_pb(evaluate((*hole, *state.board)).best_five))
    return pb


def street_pb(street: Street | None) -> int:
    return _STREETS[street] if street is not None else table_pb2.STREET_UNSPECIFIED


def redact_for(events: Sequence[Event], recipient: int | None) -> tuple[Event, ...]:
    """The engine's own redaction: own hole and mucked cards for a seat, none for anyone else."""
    return player_view(events, recipient) if recipient is not None else spectator_view(events)


def notice(code: str, text: str) -> table_pb2.TableNotice:
    return table_pb2.TableNotice(code=code, text=text)


def event_body(event: Event, recipient: int | None) -> tuple[int, dict[str, object]]:
    """(seat, oneof fields) of the TableEvent an engine event becomes for `recipient`.

    The event must already be redacted for the recipient (see `redact_for`).
    """
    if isinstance(event, PlayerActed):
        kind = table_pb2.ACTION_KIND_ALL_IN if event.all_in else _ACTIONS[event.action]
        taken = table_pb2.ActionTaken(
            action=kind, amount=event.added, timed_out=event.cause is ActionCause.TIMEOUT, to=event.to
        )
        return public_seat(event.seat), {"action": taken}
    if isinstance(event, BoardDealt):
        return 0, {"cards": table_pb2.CardsRevealed(cards=cards_pb(event.cards))}
    if isinstance(event, CardsShown):
        return public_seat(event.seat), {
            "cards": table_pb2.CardsRevealed(cards=cards_pb(event.cards), shown_by_player=True)
        }
    if isinstance(event, HoleCardsDealt):
        cards = cards_pb(event.cards) if event.cards and event.seat == recipient else [HIDDEN_CARD] * 2
        return public_seat(event.seat), {"cards": table_pb2.CardsRevealed(cards=cards)}
    if isinstance(event, BlindPosted):
        text = f"posts {event.post.value.lower().replace('_', ' ')} {event.amount}"
        return public_seat(event.seat), {"notice": notice("BLIND_POSTED", text)}
    if isinstance(event, HandStarted):
        return 0, {"notice": notice("HAND_STARTED", f"hand {event.hand_id} started")}
    if isinstance(event, UncalledBetReturned):
        return public_seat(event.seat), {
            "notice": notice("UNCALLED_BET_RETURNED", f"{event.amount} returned")
        }
    if isinstance(event, CardsMucked):
        return public_seat(event.seat), {"notice": notice("CARDS_MUCKED", "mucked")}
    if isinstance(event, PotAwarded):
        winners = ", ".join(f"seat {public_seat(s)} wins {a}" for s, a in event.winners)
        return 0, {"notice": notice("POT_AWARDED", f"pot {event.index}: {winners}")}
    if isinstance(event, HandEnded):
        return 0, {"notice": notice("HAND_ENDED", f"hand ended, rake {event.rake}")}
    raise TypeError(f"unknown engine event {event!r}")
