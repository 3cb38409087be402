"""What a cash table looks like at one moment: its stage, each seat's status, its phase, the
`TableState` every view is cut from (services/table/cash/views.py), the waiting view of a caller
without a seat, and the table's public figures for the lobby. Pure: the table actor (services/table/cash/actor.py) hands in its parts (`Parts`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from poker.table.v1 import table_pb2
from poker_engine.events import HandEnded, PotAwarded
from poker_engine.seating import TableState as Seating
from service_runtime.table_directory import SeatFigures, TableFigures
from services.table.cash import core, table_core
from services.table.cash.countdown import Countdown
from services.table.cash.views import SeatState, TableState, public_seat, seat_handle, street_pb, table_view
from services.table.ports.rooms import Room


class Stage(enum.Enum):
    RECOVERING = "RECOVERING"  # reading the open seat sessions from the cashier
    IDLE = "IDLE"  # between hands, fewer than two players or about to commit
    COUNTDOWN = "COUNTDOWN"  # commitment published, client seeds accepted until the seal
    # (version 3: seed hashes first, then, once their set is closed, the seeds of those seats)
    PLAYING = "PLAYING"
    SETTLING = "SETTLING"  # hand over, waiting for the cashier to acknowledge the settlement


@dataclass(frozen=True, slots=True)
class Parts:
    """The actor's parts a view is built from."""

    table_id: str
    room: Room
    seats: table_core.Seats
    live: core.HandState | None  # the running hand
    last: core.HandState | None  # the last hand settled
    pending: Countdown | None  # the next hand's countdown, once committed
    stage: Stage
    paused: bool
    handing_over: bool
    no_new_hands: Callable[[], bool]  # maintenance (asked only when it matters)


def seat_status(seats: table_core.Seats, live: core.HandState | None, seat: int) -> int:
    player = seats.players.get(seat)
    if player is not None and player.presence.disconnected and not player.leaving:
        return int(table_pb2.SEAT_STATUS_DISCONNECTED)
    seated = seats.seating.player_at(seat)
    if seated is None or seated.sitting_out:
        return int(table_pb2.SEAT_STATUS_SITTING_OUT)
    if live is not None and seat not in live.sessions:
        return int(table_pb2.SEAT_STATUS_WAITING)
    return int(table_pb2.SEAT_STATUS_ACTIVE)


def players_by_state(seats: table_core.Seats, live: core.HandState | None) -> tuple[int, int]:
    """(seated, waiting) for the shard's figures: a player is seated while in play (dealt into the
    running hand; between hands, in the seating and not sitting out, so dealt into the next) and
    waiting otherwise, as the seat's status says (`seat_status`: sitting out, away, or seated during
    a hand and waiting for the next). A player leaving (cashed out once no hand holds them) is neither.
    Reads only references and a copy of the seats: the scrape's thread calls it."""
    seated = waiting = 0
    seating = seats.seating
    for seat, player in list(seats.players.items()):
        if player.leaving:
            continue
        at = seating.player_at(seat)
        dealt_out = live is not None and live.sessions.get(seat) != player.session_id
        if at is None or at.sitting_out or dealt_out:
            waiting += 1
        else:
            seated += 1
    return seated, waiting


def phase(parts: Parts) -> int:
    stage = parts.stage
    if parts.paused or stage is Stage.RECOVERING:
        return int(table_pb2.TABLE_PHASE_PAUSED)
    if stage in (Stage.PLAYING, Stage.SETTLING):
        return int(table_pb2.TABLE_PHASE_HAND_IN_PROGRESS)
    if parts.no_new_hands() or (parts.handing_over and stage is not Stage.COUNTDOWN):
        return int(table_pb2.TABLE_PHASE_PAUSED)
    if stage is Stage.COUNTDOWN or parts.seats.seating.plan_next_hand() is not None:
        return int(table_pb2.TABLE_PHASE_BETWEEN_HANDS)
    return int(table_pb2.TABLE_PHASE_WAITING_FOR_PLAYERS)


def table_state(parts: Parts, *, now: float) -> TableState:
    """The table as of wall time `now` (the view's `as_of`; the spectators' feed passes its delay's
    time)."""
    live = parts.live
    # During the countdown the view is the next hand's (its commitment, no card yet); the last
    # hand's cards and board are no longer shown, its awards are until the next hand starts.
    shown = live or (parts.last if parts.pending is None else None)
    hand = shown.hand if shown is not None else None
    running = live is not None and not live.hand.is_over
    seats = []
    seating = parts.seats.seating
    # Who played the shown hand at each seat: a player who sat down after it is not "in" it
    # (their seat number must never pick up the previous occupant's cards).
    dealt = {s.seat: s.player_id for s in shown.config.seats} if shown is not None else {}
    for seat, player in sorted(parts.seats.players.items()):
        seated = seating.player_at(seat)
        in_hand = hand is not None and dealt.get(seat) == player.player_id
        stack = (
            hand.stacks.get(seat, 0)
            if (in_hand and live is not None and hand is not None)
            else (seated.stack if seated is not None else 0)
        )
        seats.append(
            SeatState(
                seat=seat,
                player_id=player.player_id,
                status=seat_status(parts.seats, live, seat),
                stack=stack,
                bet=hand.bets.get(seat, 0) if running and hand is not None else 0,
                folded=bool(in_hand and hand is not None and not hand.in_hand(seat)),
                all_in=bool(running and in_hand and hand is not None and hand.in_hand(seat) and stack == 0),
                in_hand=bool(in_hand),
                time_bank_seconds=player.time_bank,
                display_name=player.display_name,
                avatar_url=player.avatar_url,
                handle=seat_handle(player.session_id),
            )
        )
    last_hand = hand if hand is not None else (parts.last.hand if parts.last is not None else None)
    result: HandEnded | None = last_hand.result if last_hand is not None else None
    awards: tuple[PotAwarded, ...] = result.pots if result is not None else ()
    pending = parts.pending
    if pending is not None and not running:
        hand_id, commitment = pending.commitment.hand_id, pending.commitment.commitment
    elif shown is not None:
        hand_id, commitment = shown.config.hand_id, shown.commitment
    else:
        hand_id, commitment = "", ""
    legal = hand.legal_actions() if running and hand is not None else None
    seed_phase, seed_deadline = 0, None
    seed_hashes: tuple[tuple[int, str], ...] = ()
    if pending is not None and not running:
        seed_phase = pending.seed_phase()
        seed_deadline = pending.phase_ends if parts.stage is Stage.COUNTDOWN else None
        if pending.hashes_closed:
            seed_hashes = tuple((public_seat(seat), h) for seat, (_, h) in sorted(pending.hashes.items()))
    return TableState(
        table_id=parts.table_id,
        room=parts.room,
        phase=phase(parts),
        closing=parts.seats.closing,
        hand_id=hand_id,
        commitment=commitment,
        street=street_pb(hand.street) if running and hand is not None else 0,
        button=shown.config.button if shown is not None else None,
        to_act=hand.actor_seat if running and hand is not None else None,
        seats=tuple(seats),
        board=hand.board if hand is not None else (),
        pots=hand.pots() if running and hand is not None else (),
        awards=awards,
        events=hand.events if hand is not None else (),
        legal=legal,
        all_in_allowed=legal is not None and hand is not None and hand.can_all_in(legal.seat),
        deadline=live.deadline() if live is not None and parts.stage is Stage.PLAYING else None,
        as_of=now,
        seed_phase=seed_phase,
        seed_deadline=seed_deadline,
        seed_hashes=seed_hashes,
    )


def waiting_view(state: TableState, seating: Seating) -> table_pb2.TableView:
    """What a caller without a seat sees on WatchTable and GetTableSnapshot: the table, who sits
    where with the stacks of the last settled hand (`seating`), the phase and the hand's commitment;
    nothing of a hand's play. Whoever has no seat is a spectator, and spectators see the play only
    through SpectateTable, the delay late (rules 14)."""
    view = table_view(state, None)
    # The turn's deadline too: it moves with every action and tells the time bank spent, so a
    # waiting view that kept it would change (and be sent) at each action, live.
    for name in ("street", "to_act_seat", "to_act_deadline", "board", "pots", "legal_actions", "awards"):
        view.ClearField(name)
    for seat_view in view.seats:
        settled = seating.player_at(seat_view.seat - 1) if seat_view.seat > 0 else None
        if settled is not None:
            seat_view.stack = settled.stack
        for name in ("bet_this_round", "folded", "all_in", "hole_cards", "time_bank_seconds"):
            seat_view.ClearField(name)  # type: ignore[arg-type]
    return view


def lobby_figures(
    parts: Parts, recent: Iterable[tuple[float, int]], shard_id: str, *, now: float
) -> TableFigures:
    """The table's public figures for the lobby (no card, public seat numbers from 1) at wall time
    `now`; `recent`: the (wall time it ended, pot) of the last hands settled, oldest first."""
    ended = list(recent)
    pots = [pot for _, pot in ended[-50:]]
    seating = parts.seats.seating
    seated_figures = {
        seat: SeatFigures(
            seat=public_seat(seat),
            display_name=player.display_name,
            stack=seated.stack if (seated := seating.player_at(seat)) is not None else 0,
            sitting_out=seated is None or seated.sitting_out,
        )
        for seat, player in parts.seats.players.items()
    }
    # A seat held for a sit-down whose seat session the cashier is opening is taken: the lobby counts
    # the players it routed only until figures newer than the routing, so a held seat shown free sent
    # the next player to a full table. No name (the lobby's profile names it once opened), no chips.
    held = {
        seat: SeatFigures(seat=public_seat(seat), display_name="", stack=0, sitting_out=True)
        for seat in parts.seats.reserved
        if seat not in seated_figures
    }
    taken = tuple(figure for _, figure in sorted({**seated_figures, **held}.items()))
    return TableFigures(
        table_id=parts.table_id,
        room_id=parts.room.room_id,
        shard_id=shard_id,
        seats=parts.room.seats,
        taken_seats=taken,
        hand_in_progress=parts.stage in (Stage.PLAYING, Stage.SETTLING),
        average_pot=sum(pots) // len(pots) if pots else 0,
        hands_per_hour=sum(1 for at, _ in ended if now - at <= 3600),
        player_ids=tuple(
            sorted({p.player_id for p in parts.seats.players.values()} | set(parts.seats.reserved.values()))
        ),
    )
