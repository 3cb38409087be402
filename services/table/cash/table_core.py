"""The pure core of a table's seats between (and beside) hands (issue 30; docs/table.md "The seats' core").

No asyncio, no gRPC, no clock, no I/O: every time is an input, and the state it is given is never
changed (a step works on a copy, so a shell whose effect fails keeps the state it had). It holds who
sits where (player, seat session, time bank, the engine's seating with the stacks), each seated
player's presence (away since, sitting out since, the streak of hands lost to timeouts; presence.py)
and the time banks kept for players who stood up (time_banks.py). The running hand is core.py's.

Inputs: `SitDown` (a request: the seat is held for the player, and the `OpenSeatSession` effect
runs outside the table) and `SessionOpened` (the cashier's answer: the player sits) or
`SeatNotOpened` (refused or unanswered: the seat is free again); `Leave` (between hands: leaving, and
the `CashOut` effect; dealt into the running hand: leaving, cashed out after settlement); `CashedOut` (the cashier's answer: the seat is
free, the bank kept); `SitOut`, `SitIn`; `Disconnect`, `Reconnect` (the player's last stream ended,
a stream opened); `Tick` (seats past the seat reserve or the sit-out limit are leaving); `HandPlayed`
(a settled hand's timeouts and decisions: the sit-out streak); `HandResult` (its final stacks);
`BankLeft` (what a decision left of a seat's time bank); `CloseAfterHand` (the operator's CloseTable:
no new hand, every seat cashed out once no hand holds it) and `TableClosed` (it closed: a table opened
again later is an ordinary one). Times are wall times (the log's clock).
Every input but `SitDown` goes into the table's seats' log (`to_entry`, `from_entry`); a table that
opens replays it (`replay`) and reconciles it with the cashier's open seat sessions (`reopen`, over
`restore`, which seats a table from those sessions alone). Outputs: the new state, notices (code, text, seat) to publish, effects to run,
presence changes for the running hand's core, and a reply.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol

from poker_engine.errors import SeatingError
from poker_engine.seating import Entry, SeatedPlayer
from poker_engine.seating import TableState as Seating
from service_runtime.errors import DomainError, FailedPrecondition
from services.table.cash.presence import EXPIRY_CODES, PresenceRules, SeatPresence
from services.table.cash.time_banks import KeptTimeBanks


@dataclass(frozen=True, slots=True)
class Rules:
    table_id: str
    seats: int
    time_bank_seconds: float
    presence: PresenceRules
    keep_seconds: float


@dataclass(slots=True)
class PlayerSeat:
    player_id: str
    session_id: str
    time_bank: float
    leaving: bool = False
    entry: Entry = Entry.POST_NOW  # how the player (re-)enters after sitting out or a disconnection
    presence: SeatPresence = field(default_factory=SeatPresence)
    # Fair play (rules 17): the device and network signals of the token the player sat down with.
    # Server-side only: they go into the hand record and nowhere else (no view, event or log line).
    device: str = ""
    network: str = ""
    # The name the seat shows everyone (the lobby's profile as the player sat down); empty when the
    # table does not know it (a seat restored from the cashier alone): then `name` is the seat's.
    display_name: str = ""
    # The player's photo the seat shows everyone (the lobby's answer as they sat down); empty when
    # they have none, do not show it, or the table does not know it: the seat shows their initials.
    avatar_url: str = ""

    def name(self, seat: int) -> str:
        """The player as the table's notices name them: never the player id."""
        return self.display_name or f"seat {public_seat(seat)}"


@dataclass(slots=True)
class Seats:
    """The table's seats: by engine seat (0-based), with the engine's seating (stacks, button, debts),
    and the seats held for sit-downs whose seat session the cashier is opening (`reserved`: engine
    seat -> player; not durable: a table that opens takes what the cashier opened)."""

    players: dict[int, PlayerSeat]
    seating: Seating
    banks: KeptTimeBanks
    reserved: dict[int, str] = field(default_factory=dict)
    # CloseTable asked (issue 38): in the log, so a next owner of the closing table closes it too.
    closing: bool = False
    # The closes asked lately (the last `CLOSES_KEPT`): request id and first answer (hand running,
    # players), kept after the table closed, so a retry reaching the table opened again (the shard's
    # memory of the id gone with a restart) gets that answer, not a close.
    closes: tuple[tuple[str, bool, int], ...] = ()

    @staticmethod
    def empty(rules: Rules, small_blind: int, big_blind: int) -> Seats:
        return Seats(
            {}, Seating.empty(rules.seats, small_blind, big_blind), KeptTimeBanks(rules.keep_seconds)
        )

    def seat_of(self, player_id: str) -> int | None:
        return next((seat for seat, p in self.players.items() if p.player_id == player_id), None)

    def copy(self) -> Seats:
        return Seats(
            {seat: replace(p, presence=replace(p.presence)) for seat, p in self.players.items()},
            self.seating,
            KeptTimeBanks(self.banks.keep_seconds, dict(self.banks._kept)),
            dict(self.reserved),
            self.closing,
            self.closes,
        )

    def durable(self) -> tuple[Any, ...]:
        """Everything the state holds, as plain values (a replay must give exactly this)."""
        return (
            sorted(
                (
                    seat,
                    p.player_id,
                    p.session_id,
                    p.time_bank,
                    p.leaving,
                    p.entry,
                    (p.presence.disconnected_at, p.presence.out_since, p.presence.timeout_streak),
                    p.device,
                    p.network,
                    p.display_name,
                    p.avatar_url,
                )
                for seat, p in self.players.items()
            ),
            self.seating,
            sorted(self.banks._kept.items()),
            self.closing,
            self.closes,
        )


# ------------------------------------------------------------------ inputs


@dataclass(frozen=True, slots=True)
class SitDown:
    player_id: str
    request_id: str
    seat: int  # public (1-based); 0: the first free seat


@dataclass(frozen=True, slots=True)
class SessionOpened:
    player_id: str
    seat: int  # engine seat
    session_id: str
    stack: int
    wait_for_big_blind: bool
    at: float
    device: str = ""
    network: str = ""
    display_name: str = ""
    avatar_url: str = ""


@dataclass(frozen=True, slots=True)
class SeatNotOpened:
    """The cashier (or the lobby) refused or did not answer a `SitDown`'s seat session: the seat it
    held is free again."""

    player_id: str
    seat: int  # engine seat


@dataclass(frozen=True, slots=True)
class Leave:
    player_id: str
    in_hand: bool  # the seat is dealt into the running hand


@dataclass(frozen=True, slots=True)
class CashedOut:
    seat: int
    at: float


@dataclass(frozen=True, slots=True)
class SitOut:
    player_id: str
    at: float


@dataclass(frozen=True, slots=True)
class SitIn:
    player_id: str
    wait_for_big_blind: bool


@dataclass(frozen=True, slots=True)
class Disconnect:
    player_id: str
    at: float


@dataclass(frozen=True, slots=True)
class Reconnect:
    player_id: str


@dataclass(frozen=True, slots=True)
class Tick:
    at: float


@dataclass(frozen=True, slots=True)
class HandPlayed:
    sessions: tuple[tuple[int, str], ...]  # (engine seat, seat session) of the hand's players
    timed_out: frozenset[int]
    acted: frozenset[int]
    at: float


@dataclass(frozen=True, slots=True)
class HandResult:
    """A settled hand's final stacks, by engine seat, and the seating's button, blind positions and
    blind debts as the table has them then (`hand_result`): the deal moved them outside the log, so
    a table opened again between hands deals on from them (issue 42). An entry logged before they
    were (no `positions`) changes the stacks only."""

    stacks: tuple[tuple[int, int], ...]
    # (button, small-blind position, big-blind seat), each an engine seat or None.
    positions: tuple[int | None, int | None, int | None] | None = None
    debts: tuple[tuple[int, str, bool, bool], ...] = ()  # (seat, player, owes big, owes small blind)


@dataclass(frozen=True, slots=True)
class BankLeft:
    seat: int
    seconds: float


# How many CloseTable request ids a table remembers in its seats' log (a retry of an older one closes
# the table again: the operator's client retries within seconds, not after 16 other closes).
CLOSES_KEPT = 16


@dataclass(frozen=True, slots=True)
class CloseAfterHand:
    """The operator closes the table (CloseTable `request_id`, answered `hand_running`, `players`):
    no new hand; the seats are cashed out by the shell once no hand holds them."""

    request_id: str = ""
    hand_running: bool = False
    players: int = 0


@dataclass(frozen=True, slots=True)
class TableClosed:
    """The closing table closed (every seat cashed out): opened again, it is an ordinary table."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The whole seats' state as plain values (`snapshot_of`): a seats' log that was trimmed starts
    with one, and feeding it gives exactly that state, whatever came before."""

    state: Mapping[str, Any]


Input = (
    SitDown
    | SeatNotOpened
    | SessionOpened
    | Leave
    | CashedOut
    | SitOut
    | SitIn
    | Disconnect
    | Reconnect
    | Tick
    | HandPlayed
    | HandResult
    | BankLeft
    | CloseAfterHand
    | TableClosed
    | Snapshot
)


# ------------------------------------------------------------------ outputs


@dataclass(frozen=True, slots=True)
class OpenSeatSession:
    seat: int  # engine seat
    session_id: str


@dataclass(frozen=True, slots=True)
class CashOut:
    seat: int
    session_id: str


Effect = OpenSeatSession | CashOut


@dataclass(frozen=True, slots=True)
class Notice:
    code: str
    text: str
    seat: int


@dataclass(frozen=True, slots=True)
class Step:
    state: Seats
    notices: tuple[Notice, ...] = ()
    effects: tuple[Effect, ...] = ()
    presence: tuple[tuple[int, bool], ...] = ()  # (seat, away) for the running hand's core
    reply: Any = None


def session_id(table_id: str, player_id: str, request_id: str) -> str:
    """A SitDown's seat session id: the same request, the same session (the cashier's idempotency)."""
    digest = hashlib.sha256(f"{player_id}\0{request_id}".encode()).hexdigest()[:24]
    return f"{table_id}:{digest}"


def public_seat(seat: int) -> int:
    return seat + 1


def _seated(state: Seats, player_id: str) -> int:
    seat = state.seat_of(player_id)
    if seat is None:
        raise FailedPrecondition("NOT_SEATED", "you have no seat at this table")
    return seat


def _sync(state: Seats, seat: int) -> None:
    """Sit the seat out in the seating model while the player leaves, sits out or is away; back in
    otherwise (missed blinds are then owed by the engine's dead-button rule)."""
    player = state.players.get(seat)
    seated = state.seating.player_at(seat)
    if player is None or seated is None:
        return
    out = player.leaving or player.presence.sitting_out or player.presence.disconnected
    if out and not seated.sitting_out:
        state.seating = state.seating.sit_out(seat)
    elif not out and seated.sitting_out:
        state.seating = state.seating.sit_in(seat, player.entry)


def feed(state: Seats, given: Input, rules: Rules) -> Step:
    """One input; the state given is never changed (refusals raise before anything is)."""
    new = state.copy()
    if isinstance(given, SitDown):
        return _sit_down(new, given, rules)
    if isinstance(given, SeatNotOpened):
        if new.reserved.get(given.seat) == given.player_id:
            del new.reserved[given.seat]
        return Step(new)
    if isinstance(given, SessionOpened):
        held = new.reserved.get(given.seat)
        if (
            given.seat in new.players
            or new.seating.player_at(given.seat) is not None
            or new.seat_of(given.player_id) is not None
            or held not in (None, given.player_id)
        ):
            raise FailedPrecondition("SEAT_TAKEN", "the seat is taken")
        new.reserved.pop(given.seat, None)
        entry = Entry.WAIT_FOR_BIG_BLIND if given.wait_for_big_blind else Entry.POST_NOW
        new.seating = new.seating.sit_down(given.seat, given.player_id, given.stack, entry)
        bank = new.banks.bank_for(given.player_id, rules.time_bank_seconds, given.at)
        new.players[given.seat] = PlayerSeat(
            given.player_id,
            given.session_id,
            bank,
            entry=entry,
            device=given.device,
            network=given.network,
            display_name=given.display_name,
            avatar_url=given.avatar_url,
        )
        text = f"{new.players[given.seat].name(given.seat)} sat at seat {public_seat(given.seat)}"
        return Step(new, (Notice("PLAYER_SAT_DOWN", text, given.seat),))
    if isinstance(given, Leave):
        seat = _seated(new, given.player_id)
        player = new.players[seat]
        if player.leaving or given.in_hand:
            # Rules 12: folded at once; the chips already in stay; cash-out after settlement.
            player.leaving = True
            _sync(new, seat)
            return Step(new, reply=True)
        # Between hands: leaving (dealt into no hand) until the cashier's answer frees the seat.
        player.leaving = True
        _sync(new, seat)
        return Step(new, effects=(CashOut(seat, player.session_id),), reply=False)
    if isinstance(given, CashedOut):
        player = new.players.pop(given.seat)
        new.banks.keep(player.player_id, player.time_bank, given.at)
        if new.seating.player_at(given.seat) is not None:
            new.seating = new.seating.stand_up(given.seat)
        text = f"{player.name(given.seat)} left seat {public_seat(given.seat)}"
        return Step(new, (Notice("PLAYER_LEFT", text, given.seat),))
    if isinstance(given, SitOut | SitIn):
        return _sit_out(new, given)
    if isinstance(given, Disconnect | Reconnect):
        return _presence(new, given, rules)
    if isinstance(given, Tick):
        return _expire(new, given.at, rules)
    if isinstance(given, HandPlayed):
        return _hand_played(new, given, rules)
    if isinstance(given, Snapshot):
        return Step(from_snapshot(given, rules))
    if isinstance(given, CloseAfterHand):
        if given.request_id and any(close[0] == given.request_id for close in new.closes):
            return Step(new)  # a retry: its first answer stands, nothing changes
        new.closing = True
        if given.request_id:
            close = (given.request_id, given.hand_running, given.players)
            new.closes = (*new.closes, close)[-CLOSES_KEPT:]
        return Step(new)
    if isinstance(given, TableClosed):
        new.closing = False
        return Step(new)
    if isinstance(given, HandResult):
        for seat, stack in given.stacks:
            if new.seating.player_at(seat) is not None:
                new.seating = new.seating.set_stack(seat, stack)
        if given.positions is not None:
            new.seating = _with_positions(new.seating, given.positions, given.debts)
        return Step(new)
    banked = new.players.get(given.seat)
    if banked is not None:
        banked.time_bank = given.seconds
    return Step(new)


def hand_result(seating: Seating, stacks: tuple[tuple[int, int], ...]) -> HandResult:
    """The `HandResult` of a settled hand at a table whose seating is `seating` (the deal's plan and
    whatever changed since): the final stacks, the button, the blind positions and every seated
    player's blind debts."""
    return HandResult(
        stacks,
        positions_of(seating),
        tuple((p.seat, p.player_id, p.owes_big_blind, p.owes_small_blind) for p in seating.players),
    )


def positions_of(seating: Seating) -> tuple[int | None, int | None, int | None]:
    """The button, the small-blind position and the big-blind seat, as `HandResult` holds them."""
    return (seating.button, seating.small_blind_position, seating.big_blind_seat)


def _with_positions(
    seating: Seating,
    positions: tuple[int | None, int | None, int | None],
    debts: tuple[tuple[int, str, bool, bool], ...],
) -> Seating:
    owed = {(seat, player): (big, small) for seat, player, big, small in debts}
    players = []
    for p in seating.players:
        flags = owed.get((p.seat, p.player_id))
        if flags is not None:
            p = replace(p, owes_big_blind=flags[0], owes_small_blind=flags[1])
        players.append(p)
    button, small, big = positions
    return replace(
        seating, players=tuple(players), button=button, small_blind_position=small, big_blind_seat=big
    )


def seating_to_reopen(logged_state: Seats, rules: Rules, small_blind: int, big_blind: int) -> Seating:
    """The seating a table opened between hands starts from: the replayed log's (its button, blind
    positions and debts; `restore` then seats the cashier's open sessions in it), at the room's
    blinds now. An empty one if the log's table had another number of seats."""
    if logged_state.seating.max_seats != rules.seats:
        return Seating.empty(rules.seats, small_blind, big_blind)
    return replace(logged_state.seating, small_blind=small_blind, big_blind=big_blind)


def _sit_down(state: Seats, sit: SitDown, rules: Rules) -> Step:
    """The seat is held for the player (`reserved`) while the cashier opens its seat session."""
    if state.seat_of(sit.player_id) is not None or sit.player_id in state.reserved.values():
        raise FailedPrecondition("ALREADY_SEATED", "you already have a seat at this table")
    if sit.seat:
        chosen = sit.seat - 1
        if chosen in state.players or chosen in state.reserved:
            raise FailedPrecondition("SEAT_TAKEN", "the seat is taken")
    else:
        free = [s for s in range(rules.seats) if s not in state.players and s not in state.reserved]
        if not free:
            raise FailedPrecondition("TABLE_FULL", "every seat is taken")
        chosen = free[0]
    state.reserved[chosen] = sit.player_id
    return Step(
        state, effects=(OpenSeatSession(chosen, session_id(rules.table_id, sit.player_id, sit.request_id)),)
    )


def _sit_out(state: Seats, given: SitOut | SitIn) -> Step:
    seat = _seated(state, given.player_id)
    player = state.players[seat]
    if player.leaving:
        return Step(state, reply=None)  # leaving: sitting out until the cash-out
    if isinstance(given, SitIn):
        player.entry = Entry.WAIT_FOR_BIG_BLIND if given.wait_for_big_blind else Entry.POST_NOW
        player.presence.sit_in()
    else:
        # The sit-out limit runs from the first SitOut.
        player.presence.sit_out(given.at)
    _sync(state, seat)  # a SeatingError (the engine's refusal) raises before the state is kept
    code = "PLAYER_SAT_IN" if isinstance(given, SitIn) else "PLAYER_SAT_OUT"
    return Step(state, (Notice(code, player.name(seat), seat),), reply=seat)


def _presence(state: Seats, given: Disconnect | Reconnect, rules: Rules) -> Step:
    seat = state.seat_of(given.player_id)
    if seat is None:
        return Step(state)
    player = state.players[seat]
    if isinstance(given, Reconnect):
        if not player.presence.came_back() or player.leaving:
            return Step(state)
        _sync(state, seat)
        return Step(
            state,
            (Notice("PLAYER_RECONNECTED", f"{player.name(seat)} is back", seat),),
            presence=((seat, False),),
        )
    if not player.presence.went_away(given.at) or player.leaving:
        return Step(state)
    _sync(state, seat)
    text = f"{player.name(seat)} is away; the seat is kept {rules.presence.reserve_seconds:g} s"
    return Step(state, (Notice("PLAYER_DISCONNECTED", text, seat),), presence=((seat, True),))


def _expire(state: Seats, at: float, rules: Rules) -> Step:
    """Seats past the reserve or the sit-out limit are leaving (cashed out once no hand holds them)."""
    notices = []
    for seat, player in sorted(state.players.items()):
        if player.leaving:
            continue
        expiry = player.presence.expiry(at, rules.presence)
        if expiry is None:
            continue
        player.leaving = True
        _sync(state, seat)
        notices.append(Notice(EXPIRY_CODES[expiry], f"{player.name(seat)} is removed from the table", seat))
    return Step(state, tuple(notices))


def _hand_played(state: Seats, played: HandPlayed, rules: Rules) -> Step:
    """After a settled hand: `timeout_hands` hands in a row lost to timeouts put a player in sit-out."""
    notices = []
    for seat, session in played.sessions:
        player = state.players.get(seat)
        if player is None or player.session_id != session or player.leaving:
            continue
        out = player.presence.hand_played(
            timed_out=seat in played.timed_out, acted=seat in played.acted, rules=rules.presence
        )
        if out and player.presence.sit_out(played.at):
            _sync(state, seat)
            text = f"{player.name(seat)} timed out {player.presence.timeout_streak} hands in a row"
            notices.append(Notice("PLAYER_SAT_OUT", text, seat))
    return Step(state, tuple(notices))


def due(state: Seats, rules: Rules) -> float | None:
    """When the next seat expires (a `Tick` then removes it), if any can."""
    times = [
        when
        for player in state.players.values()
        if not player.leaving and (when := player.presence.due(rules.presence)) is not None
    ]
    return min(times) if times else None


def leavers(state: Seats) -> tuple[CashOut, ...]:
    """Between hands: the cash-outs owed to players who left during a hand and to players with no chips."""
    owed = []
    for seat, player in sorted(state.players.items()):
        seated = state.seating.player_at(seat)
        if player.leaving or seated is None or seated.stack <= 0:
            owed.append(CashOut(seat, player.session_id))
    return tuple(owed)


class OpenSession(Protocol):
    """A seat session of the table the cashier holds open (dependencies.SeatSession)."""

    @property
    def session_id(self) -> str: ...
    @property
    def player_id(self) -> str: ...
    @property
    def seat(self) -> int: ...  # public, from 1
    @property
    def stack(self) -> int: ...


def restore(
    state: Seats,
    rules: Rules,
    seating: Seating,
    sessions: Sequence[OpenSession],
    banks: Mapping[int, float],
) -> tuple[Seats, tuple[CashOut, ...]]:
    """The seats of a table that opens (a restart or a takeover), from the seat sessions the cashier
    holds open: `seating` is the seating to start from (an empty one, or the one a hand taken over
    began with, whose players without their session stand up), `banks` the time banks that hand
    logged. Each session with chips at a valid, free seat (or the seat its player holds in `seating`)
    is seated with its stack; every other session is owed a `CashOut`. The kept time banks stay."""
    for before in seating.players:
        if not any(s.seat - 1 == before.seat and s.player_id == before.player_id for s in sessions):
            seating = seating.stand_up(before.seat)
    players: dict[int, PlayerSeat] = {}
    owed = []
    for session in sessions:
        seat = session.seat - 1
        seated = seating.player_at(seat) if 0 <= seat < rules.seats else None
        if (
            session.stack > 0
            and 0 <= seat < rules.seats
            and seat not in players
            and (seated is None or seated.player_id == session.player_id)
        ):
            if seated is None:
                seating = seating.sit_down(seat, session.player_id, session.stack)
            else:
                seating = seating.set_stack(seat, session.stack)
            bank = banks.get(seat)
            players[seat] = PlayerSeat(
                session.player_id, session.session_id, rules.time_bank_seconds if bank is None else bank
            )
            continue
        owed.append(CashOut(seat, session.session_id))
    # A player the seating held whose session is not seated (no chips: owed a cash-out) stands up:
    # the seating and the seats agree, so no hand is planned with a seat nobody holds.
    for before in seating.players:
        seated_now = players.get(before.seat)
        if seated_now is None or seated_now.player_id != before.player_id:
            seating = seating.stand_up(before.seat)
    kept = state.copy().banks
    return Seats(players, seating, kept), tuple(owed)


# ------------------------------------------------------------------ the seats' log

_KINDS: dict[str, type[Any]] = {
    kind.__name__: kind
    for kind in (
        SessionOpened,
        Leave,
        CashedOut,
        SitOut,
        SitIn,
        Disconnect,
        Reconnect,
        Tick,
        HandPlayed,
        HandResult,
        BankLeft,
        CloseAfterHand,
        TableClosed,
        Snapshot,
    )
}


# Fields an entry written by an earlier version lacks (HandResult's, issue 42).
_ADDED_LATER = frozenset(
    {"positions", "debts", "display_name", "avatar_url", "request_id", "hand_running", "players"}
)


def snapshot_of(state: Seats) -> Snapshot:
    """The state as a `Snapshot` (JSON values; floats survive JSON exactly)."""
    seating = {f.name: getattr(state.seating, f.name) for f in fields(Seating) if f.name != "players"}
    seating["players"] = [
        [p.seat, p.player_id, p.stack, p.sitting_out, p.owes_big_blind, p.owes_small_blind, p.entry.value]
        for p in state.seating.players
    ]
    players = [
        [
            seat,
            p.player_id,
            p.session_id,
            p.time_bank,
            p.leaving,
            p.entry.value,
            p.presence.disconnected_at,
            p.presence.out_since,
            p.presence.timeout_streak,
            p.device,
            p.network,
            p.display_name,
            p.avatar_url,
        ]
        for seat, p in sorted(state.players.items())
    ]
    kept = [[player, bank, at] for player, (bank, at) in sorted(state.banks._kept.items())]
    closes = [list(close) for close in state.closes]
    return Snapshot(
        {
            "players": players,
            "seating": seating,
            "kept": kept,
            "closing": state.closing,
            "closes": closes,
        }
    )


def from_snapshot(snapshot: Snapshot, rules: Rules) -> Seats:
    """The state a `Snapshot` holds (raises KeyError, TypeError or ValueError for a bad one)."""
    values = snapshot.state
    seating_values = dict(values["seating"])
    seated = tuple(
        SeatedPlayer(
            int(seat), str(player), int(stack), bool(out), bool(owes_bb), bool(owes_sb), Entry(entry)
        )
        for seat, player, stack, out, owes_bb, owes_sb, entry in seating_values.pop("players")
    )
    seating = Seating(**seating_values, players=seated)
    players = {
        int(seat): PlayerSeat(
            str(player),
            str(session),
            float(bank),
            bool(leaving),
            Entry(entry),
            SeatPresence(away_at, out_since, int(streak)),
            str(device),
            str(network),
            # A snapshot written before seats had names has 11 values: the name is unknown; one
            # written before seats had photos has 12: no photo.
            str(later[0]) if later else "",
            str(later[1]) if len(later) > 1 else "",
        )
        for seat, player, session, bank, leaving, entry, away_at, out_since, streak, device, network, *later in values[
            "players"
        ]
    }
    kept = {str(player): (float(bank), float(at)) for player, bank, at in values["kept"]}
    # A snapshot written before tables closed on request has no "closing": not closing.
    return Seats(
        players,
        seating,
        KeptTimeBanks(rules.keep_seconds, kept),
        closing=bool(values.get("closing")),
        closes=tuple((str(r), bool(running), int(n)) for r, running, n in values.get("closes", ())),
    )


def logged(given: Input) -> bool:
    """Whether the input goes into the seats' log: every input but `SitDown` and `SeatNotOpened`
    (they only hold a seat and free it again, which a table that opens does not need)."""
    return not isinstance(given, SitDown | SeatNotOpened)


def to_entry(given: Input) -> dict[str, Any]:
    """The seats' log entry of an input (docs/table.md "The hand's log": `{"type": "seats", ...}`)."""
    entry: dict[str, Any] = {"type": "seats", "input": type(given).__name__}
    for name in given.__slots__:
        value = getattr(given, name)
        if isinstance(value, frozenset):
            value = sorted(value)
        elif name == "positions":
            value = None if value is None else list(value)
        elif isinstance(value, tuple):
            value = [list(pair) for pair in value]
        entry[name] = value
    return entry


def from_entry(entry: Mapping[str, Any]) -> Input:
    """The input of a seats' log entry (raises KeyError, TypeError or ValueError for a bad one)."""
    if entry.get("type") != "seats":
        raise ValueError(f"not a seats entry: {entry.get('type')!r}")
    kind = _KINDS[str(entry["input"])]
    values: dict[str, Any] = {}
    for name in kind.__slots__:
        if name in _ADDED_LATER and name not in entry:
            continue  # logged before the field was: its default
        value = entry[name]
        if name in ("timed_out", "acted"):
            value = frozenset(int(v) for v in value)
        elif name in ("sessions", "stacks"):
            value = tuple((int(a), b if name == "sessions" else int(b)) for a, b in value)
        elif name == "positions":
            value = None if value is None else tuple(None if v is None else int(v) for v in value)
        elif name == "debts":
            value = tuple(
                (int(seat), str(player), bool(big), bool(small)) for seat, player, big, small in value
            )
        values[name] = value
    return kind(**values)  # type: ignore[no-any-return]


def replay(entries: Sequence[Mapping[str, Any]], rules: Rules, small_blind: int, big_blind: int) -> Seats:
    """The seats the logged inputs give, fed in order into an empty table. An entry the core refuses
    now (the log missed a step the cashier took, say) is skipped: `reopen` reconciles with the
    cashier's open sessions anyway."""
    state = Seats.empty(rules, small_blind, big_blind)
    for entry in entries:
        try:
            state = feed(state, from_entry(entry), rules).state
        except (DomainError, SeatingError, KeyError, TypeError, ValueError):
            continue
    return state


def reopen(
    logged_state: Seats,
    rules: Rules,
    seating: Seating,
    sessions: Sequence[OpenSession],
    banks: Mapping[int, float],
    at: float,
) -> tuple[Seats, tuple[CashOut, ...], tuple[Input, ...]]:
    """The seats of a table that opens (a restart or a takeover): `restore` from the cashier's open
    seat sessions (the seats and stacks; a session the log does not know is seated afresh, a session
    that cannot be seated is owed a `CashOut`), then each seat whose player and session the replayed
    log (`logged_state`) holds there gets back what the log says of it: presence (away since, sitting
    out since, the timeout streak), leaving, how they re-enter, signals and, unless the hand taken over
    logged a newer one, the time bank. The kept time banks are the log's. Also the inputs that bring
    the log to these seats (to append): `CashedOut` for a logged seat the cashier no longer holds,
    `SessionOpened` for a seat the log does not know, `BankLeft` where the bank is not the log's."""
    state, owed = restore(logged_state, rules, seating, sessions, banks)
    # A close the operator asked for is carried out by whoever opens the table next (issue 38).
    state.closing = logged_state.closing
    state.closes = logged_state.closes
    for seat, player in state.players.items():
        known = logged_state.players.get(seat)
        if known is None or (known.player_id, known.session_id) != (player.player_id, player.session_id):
            continue
        player.presence = replace(known.presence)
        player.leaving = known.leaving
        player.entry = known.entry
        player.device, player.network = known.device, known.network
        player.display_name, player.avatar_url = known.display_name, known.avatar_url
        if seat not in banks:
            player.time_bank = known.time_bank
        _sync(state, seat)
    corrections: list[Input] = []
    replayed = logged_state
    for seat, known in sorted(logged_state.players.items()):
        now = state.players.get(seat)
        if now is None or (now.player_id, now.session_id) != (known.player_id, known.session_id):
            corrections.append(CashedOut(seat, at))
    for seat, player in sorted(state.players.items()):
        known = logged_state.players.get(seat)
        if known is None or (known.player_id, known.session_id) != (player.player_id, player.session_id):
            stack = state.seating.player_at(seat)
            corrections.append(
                SessionOpened(
                    player.player_id, seat, player.session_id, stack.stack if stack else 0, False, at
                )
            )
    fed: list[Input] = []
    for given in corrections:
        try:
            replayed = feed(replayed, given, rules).state
        except (DomainError, SeatingError):
            continue  # the log holds what it cannot seat: a next opening reconciles it again
        fed.append(given)
    corrections = fed
    for seat, player in sorted(state.players.items()):
        again = replayed.players.get(seat)
        if again is not None and again.time_bank != player.time_bank:
            corrections.append(BankLeft(seat, player.time_bank))
            again.time_bank = player.time_bank
    # A seat seated afresh (the log did not know it) is as `restore` seats it, and so is its replay.
    for seat, player in state.players.items():
        again = replayed.players.get(seat)
        if again is not None:
            player.entry, player.presence = again.entry, replace(again.presence)
            player.device, player.network = again.device, again.network
            player.display_name, player.avatar_url = again.display_name, again.avatar_url
    state.banks = replayed.copy().banks
    return state, owed, tuple(corrections)
