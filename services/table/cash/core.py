"""The pure, deterministic core of a table's running hand (issue 30; docs/table.md "The hand's core").

No asyncio, no gRPC, no clock, no I/O: every time is an input. The shell (services/table/cash/actor.py)
feeds the core inputs and gets back, for each, a `Step`: the core's new state, the log entries to
append (durably, before anybody hears of the step), the engine events to publish (the shell redacts
them per recipient) and the effects to run. The state it is given is never changed: a step works
on a copy, so a shell whose log append fails keeps the state it had and nothing happened.

Inputs:

* `Act`: a player's decision with its request id (the first answer of a request id is kept: a retry
  gets it again, the same id with other fields is IDEMPOTENCY_CONFLICT, and no decision is applied
  twice);
* `Leave`: a player dealt in leaves the table during the hand (rules 12: folded at once);
* `Tick`: the clock says it is `at`; past the turn's deadline the clock acts (check, else fold);
* `Presence`: the player in a seat went away or came back (rules 13: an away player's time bank is
  not spent; their timeout does not count toward the sit-out streak);
* `Resume`: the hand goes on at a new owner (a takeover) at `at`; the player to act gets what was
  left of their turn plus `grace` seconds;
* `SettleAnswer`: the cashier's answer to the `Settle` effect (settled, unavailable, refused).

The log holds the core's accepted decisions, each a self-contained entry (the engine's replay format
plus the table's keys `at`, `bank`, `ms`, `own`, `counted`, `rid`; see takeover.py): an `Act`,
`Leave` or `Tick` that changes the hand becomes exactly one entry, and the state change is that
entry applied (`apply_entry`), live and in a replay alike. `replay(entries)` folds the log into the
state the hand had; presence, the handover grace and the settlement's progress are not in the log
(a next owner finds every player present and settles again under the same id).

Effects: `Settle` (the hand's nets by seat session, its rake and record: one cashier batch whose
id is the hand id), and once it is settled `Finish` (reveal the hand as finished with who saw which
deal position, send the record to history) or, refused for good, `Void` (reveal it voided with what
each player saw so far; nothing moves).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from poker_engine.actions import Action
from poker_engine.config import HandConfig
from poker_engine.errors import EngineError, IllegalActionError
from poker_engine.events import ActionKind, Event
from poker_engine.hand import Hand
from poker_engine.replay import config_from_json
from poker_engine.seating import TableState as Seating
from service_runtime.errors import AlreadyExists, FailedPrecondition, InvalidArgument
from services.table.cash.hand_record import (
    SeenPositions,
    config_entry,
    hand_record,
    seen_positions,
    seen_so_far,
)
from services.table.cash.takeover import seating_from_json, table_entry
from services.table.ports.library_errors import engine_refusal

if TYPE_CHECKING:
    from services.table.ports.rooms import Room

ENGINE_ACTIONS: dict[int, ActionKind] = {
    table_pb2.ACTION_KIND_FOLD: ActionKind.FOLD,
    table_pb2.ACTION_KIND_CHECK: ActionKind.CHECK,
    table_pb2.ACTION_KIND_CALL: ActionKind.CALL,
    table_pb2.ACTION_KIND_BET: ActionKind.BET,
    table_pb2.ACTION_KIND_RAISE: ActionKind.RAISE,
}


class Stage(enum.Enum):
    PLAYING = "PLAYING"
    SETTLING = "SETTLING"  # over; the `Settle` effect is outstanding until the cashier's answer
    SETTLED = "SETTLED"
    VOIDED = "VOIDED"  # the cashier refused the settlement for good


# ------------------------------------------------------------------ inputs


@dataclass(frozen=True, slots=True)
class Act:
    player_id: str
    seat: int  # the player's engine seat (the shell's seating)
    request_id: str
    hand_id: str
    kind: int  # table_pb2.ActionKind
    amount: int
    at: float


@dataclass(frozen=True, slots=True)
class Leave:
    seat: int
    at: float


@dataclass(frozen=True, slots=True)
class Tick:
    at: float


@dataclass(frozen=True, slots=True)
class Presence:
    seat: int
    away: bool
    at: float


@dataclass(frozen=True, slots=True)
class Resume:
    at: float
    grace: float


class Outcome(enum.Enum):
    SETTLED = "SETTLED"
    UNAVAILABLE = "UNAVAILABLE"  # try again, same id
    REFUSED = "REFUSED"  # for good


@dataclass(frozen=True, slots=True)
class SettleAnswer:
    hand_id: str
    outcome: Outcome


Input = Act | Leave | Tick | Presence | Resume | SettleAnswer


# ------------------------------------------------------------------ effects


@dataclass(frozen=True)
class Settle:
    hand_id: str
    nets: tuple[tuple[str, int], ...]  # (seat session, net)
    rake: int
    record: history_pb2.HandRecord


@dataclass(frozen=True)
class Finish:
    """Settled: reveal the hand as finished (who saw which position) and send its record."""

    hand_id: str
    record: history_pb2.HandRecord
    seen: SeenPositions


@dataclass(frozen=True)
class Void:
    """Refused for good: reveal the hand voided with what each player saw; nothing moved."""

    hand_id: str
    seen: SeenPositions


Effect = Settle | Finish | Void


# ------------------------------------------------------------------ state


@dataclass(frozen=True, slots=True)
class Answered:
    """A decision taken on a player's request: its retry gets the answer again (the event at `mark`,
    as `seat` saw it), never a second go at the hand."""

    player_id: str
    request_id: str
    kind: int
    amount: int
    seat: int
    mark: int  # the index of the first event the decision produced


@dataclass
class HandState:
    """A running hand and the table's state around it, as far as the hand needs it."""

    hand: Hand
    config: HandConfig
    commitment: str
    started_at: float
    seating: Seating  # as the hand began (`plan.table_after`)
    sessions: dict[int, str]  # engine seat -> seat session, fixed for the hand
    signals: dict[str, tuple[str, str]]  # fair play (rules 17): for the record only
    banks: dict[int, float]  # each seated player's time bank (the deal's, then each decision's)
    action_seconds: float
    room: Room  # not in the log: the shell's (a room's change applies from the next hand on)
    table_id: str
    turn_at: float  # when the running turn began (the last accepted entry; the first turn: the deal)
    turn_start: float  # the same, as the clock reckons it (moved by a takeover's grace)
    timed_out: set[int] = field(default_factory=set)  # timeouts of connected players (sit-out streak)
    acted: set[int] = field(default_factory=set)  # seats that decided for themselves
    left: set[int] = field(default_factory=set)  # seats whose players left during the hand
    decision_ms: dict[int, int] = field(default_factory=dict)  # by event position (rules 17)
    answered: dict[tuple[str, str], Answered] = field(default_factory=dict)
    decisions: int = 0  # entries applied
    away: set[int] = field(default_factory=set)  # not in the log: presence
    stage: Stage = Stage.PLAYING
    paused: bool = False  # not in the log: the cashier is away
    # Each player's display name as the hand began, for the record (never the player id).
    names: dict[str, str] = field(default_factory=dict)

    @property
    def hand_id(self) -> str:
        return self.config.hand_id

    @property
    def to_act(self) -> int | None:
        if self.stage is not Stage.PLAYING or self.hand.is_over:
            return None
        return self.hand.actor_seat

    def deadline(self) -> float | None:
        """When the running turn expires: the action time, plus what is left of the seat's time bank
        unless its player is away (rules 13). The start never moves with presence, so a player who
        drops and returns cannot stretch the turn."""
        seat = self.to_act
        if seat is None:
            return None
        bank = 0.0 if seat in self.away else self.banks.get(seat, 0.0)
        return self.turn_start + self.action_seconds + bank

    def durable(self) -> tuple[Any, ...]:
        """Everything the log holds of the state (what a replay must give back exactly), copied: a
        later change of the state does not change it."""
        hand = self.hand
        return (
            hand.events,
            hand.stacks,
            hand.bets,
            hand.pots(),
            hand.actor_seat,
            hand.legal_actions(),
            hand.street,
            hand.board,
            hand.is_over,
            hand.result,
            self.config,
            self.commitment,
            self.started_at,
            self.seating,
            dict(self.sessions),
            dict(self.signals),
            dict(self.names),
            dict(self.banks),
            self.turn_at,
            frozenset(self.timed_out),
            frozenset(self.acted),
            frozenset(self.left),
            dict(self.decision_ms),
            dict(self.answered),
            self.decisions,
            self.stage if self.stage is Stage.PLAYING else Stage.SETTLING,
        )


@dataclass(frozen=True)
class Replied:
    """An `Act`'s answer: the event at `mark` as `seat` sees it (`again`: a retry's first answer)."""

    seat: int
    mark: int
    again: bool = False


@dataclass(frozen=True)
class Step:
    state: HandState
    entries: tuple[dict[str, Any], ...] = ()  # to append to the hand's log before anything else
    events: tuple[Event, ...] = ()
    effects: tuple[Effect, ...] = ()
    reply: Replied | None = None
    bank: tuple[int, float] | None = None  # a seat's time bank changed
    notices: tuple[str, ...] = ()  # "HAND_OVER", "TABLE_PAUSED", "SETTLED", "VOIDED"


# ------------------------------------------------------------------ the deal


def deal(
    *,
    config: HandConfig,
    commitment: str,
    at: float,
    seating: Seating,
    sessions: Mapping[int, str],
    signals: Mapping[str, tuple[str, str]],
    banks: Mapping[int, float],
    action_seconds: float,
    room: Room,
    table_id: str,
    names: Mapping[str, str] | None = None,
) -> Step:
    """A hand dealt at `at`: its first two log entries (the engine's config, the table's entry)."""
    entries = (
        config_entry(config),
        table_entry(
            commitment=commitment,
            started_at=at,
            seating=seating,
            sessions=sessions,
            signals=signals,
            banks=banks,
            names=names or {},
        ),
    )
    state = _begin(entries, action_seconds, room, table_id)
    return Step(state, entries=entries, events=state.hand.events, effects=outstanding(state))


def _begin(
    entries: Sequence[Mapping[str, Any]], action_seconds: float, room: Room, table_id: str
) -> HandState:
    config = config_from_json(entries[0])
    shell = entries[1]
    at = float(shell["at"])
    state = HandState(
        hand=Hand(config),
        config=config,
        commitment=str(shell["commitment"]),
        started_at=float(shell["started_at"]),
        seating=seating_from_json(shell["seating"]),
        sessions={int(seat): str(session) for seat, session in shell["sessions"].items()},
        signals={str(p): (str(s[0]), str(s[1])) for p, s in shell["signals"].items()},
        # A hand logged before names were (an older shard's): its record names seats by number.
        names={str(p): str(n) for p, n in shell.get("names", {}).items()},
        banks={int(seat): float(bank) for seat, bank in shell["banks"].items()},
        action_seconds=action_seconds,
        room=room,
        table_id=table_id,
        turn_at=at,
        turn_start=at,
    )
    if set(state.sessions) != {s.seat for s in config.seats}:
        raise ValueError("a seat dealt in has no seat session")
    _check_over(state)
    return state


def replay(
    entries: Sequence[Mapping[str, Any]], *, action_seconds: float, room: Room, table_id: str
) -> HandState | None:
    """The state a hand's log gives (its entries applied in order), or None when the log does not
    hold a dealt hand whole: no config (only committed), no table entry, an entry the engine refuses."""
    if len(entries) < 2 or entries[0].get("type") != "config" or entries[1].get("type") != "table":
        return None
    try:
        state = _begin(entries, action_seconds, room, table_id)
        for entry in entries[2:]:
            apply_entry(state, entry)
    except (EngineError, KeyError, TypeError, ValueError, AttributeError, IndexError):
        return None
    return state


# ------------------------------------------------------------------ transitions


def apply_entry(state: HandState, entry: Mapping[str, Any]) -> tuple[Event, ...]:
    """One accepted decision, applied in place: the only way the log changes the hand, live or in a
    replay. Raises the engine's refusal for an entry it does not take (state then unusable)."""
    seat = int(entry["seat"])
    name = str(entry["action"]).upper()
    mark = len(state.hand.events)
    hand = state.hand
    if name == "TIMEOUT":
        events = hand.timeout(seat)
    elif name == "LEAVE":
        events = hand.leave(seat)
    elif name == "ALL_IN":
        events = hand.all_in(seat)
    else:
        to = entry.get("to")
        events = hand.act(Action(seat, ActionKind(name), None if to is None else int(to)))
    state.decisions += 1
    state.turn_at = state.turn_start = float(entry["at"])
    if "bank" in entry:
        state.banks[seat] = float(entry["bank"])
    if "ms" in entry:
        state.decision_ms[mark] = int(entry["ms"])
    if "rid" in entry:
        player, request, kind, amount = entry["rid"]
        answered = Answered(str(player), str(request), int(kind), int(amount), seat, mark)
        state.answered[(answered.player_id, answered.request_id)] = answered
    if entry.get("own"):
        state.acted.add(seat)
    if entry.get("counted"):
        state.timed_out.add(seat)
    if name == "LEAVE":
        state.left.add(seat)
    _check_over(state)
    return events


def _check_over(state: HandState) -> None:
    if state.stage is Stage.PLAYING and state.hand.is_over:
        state.stage = Stage.SETTLING


def _fork(state: HandState) -> HandState:
    """A copy the step may change (the engine's hand forked, the rest one level)."""
    return replace(
        state,
        hand=state.hand.fork(),
        sessions=dict(state.sessions),
        signals=dict(state.signals),
        names=dict(state.names),
        banks=dict(state.banks),
        timed_out=set(state.timed_out),
        acted=set(state.acted),
        left=set(state.left),
        decision_ms=dict(state.decision_ms),
        answered=dict(state.answered),
        away=set(state.away),
    )


def _bank_after(state: HandState, seat: int, at: float, *, timed_out: bool) -> float | None:
    """Rules 9: the action time is free; what runs past it comes out of the seat's bank. The seat's
    bank once its decision (or the clock's) is taken at `at`; None when it does not change."""
    if state.to_act != seat:
        return None
    if timed_out:
        return None if seat in state.away else 0.0
    used = at - state.turn_start - state.action_seconds
    bank = state.banks.get(seat, 0.0)
    return max(0.0, bank - used) if used > 0 else None


def _decide(state: HandState, entry: dict[str, Any], at: float, bank: float | None) -> Step:
    entry["at"] = at
    if bank is not None:
        entry["bank"] = bank
    new = _fork(state)
    mark = len(new.hand.events)
    events = apply_entry(new, entry)
    notices = ("HAND_OVER",) if new.stage is Stage.SETTLING else ()
    seat = int(entry["seat"])
    return Step(
        new,
        entries=(entry,),
        events=events,
        effects=outstanding(new),
        reply=Replied(seat, mark),
        bank=None if bank is None else (seat, bank),
        notices=notices,
    )


def feed(state: HandState, given: Input) -> Step:
    """The core's one transition: `given` applied to `state` (never changed). Raises a DomainError
    for a command it refuses (the state stays as it was)."""
    if isinstance(given, Act):
        return _act(state, given)
    if isinstance(given, Leave):
        if state.stage is not Stage.PLAYING or not state.hand.can_leave(given.seat):
            return Step(state)
        bank = _bank_after(state, given.seat, given.at, timed_out=False)
        return _decide(state, {"seat": given.seat, "action": "LEAVE"}, given.at, bank)
    if isinstance(given, Tick):
        deadline = state.deadline()
        seat = state.to_act
        if deadline is None or seat is None or given.at < deadline:
            return Step(state)
        bank = _bank_after(state, seat, given.at, timed_out=True)
        counted = seat not in state.away
        return _decide(state, {"seat": seat, "action": "TIMEOUT", "counted": counted}, given.at, bank)
    if isinstance(given, Presence):
        if (given.seat in state.away) == given.away:
            return Step(state)
        new = replace(state, away=set(state.away))
        if given.away:
            new.away.add(given.seat)
        else:
            new.away.discard(given.seat)
        return Step(new)
    if isinstance(given, Resume):
        return _resume(state, given)
    return _settle_answer(state, given)


def _act(state: HandState, act: Act) -> Step:
    known = state.answered.get((act.player_id, act.request_id))
    if known is not None:
        if (state.hand_id, known.kind, known.amount) != (act.hand_id, act.kind, act.amount):
            raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the request id was used with other fields")
        return Step(state, reply=Replied(known.seat, known.mark, again=True))
    if state.stage is not Stage.PLAYING:
        raise FailedPrecondition("NO_HAND_IN_PROGRESS", "no hand is running")
    if act.hand_id != state.hand_id:
        raise FailedPrecondition("HAND_IS_OVER", "that hand is not the running hand")
    seat = act.seat
    hand = state.hand
    if act.kind == table_pb2.ACTION_KIND_ALL_IN:
        entry: dict[str, Any] = {"seat": seat, "action": "ALL_IN"}
    else:
        engine_kind = ENGINE_ACTIONS.get(act.kind)
        if engine_kind is None:
            raise InvalidArgument("FIELD_REQUIRED", "an action is needed", {"field": "action"})
        to = act.amount if engine_kind in (ActionKind.BET, ActionKind.RAISE) and act.amount else None
        entry = {"seat": seat, "action": engine_kind.value, "to": to}
    was_turn = state.to_act == seat
    bank = _bank_after(state, seat, act.at, timed_out=False) if was_turn else None
    # The request, so that its retry (here or at a next owner) gets this very answer.
    entry["rid"] = [act.player_id, act.request_id, act.kind, act.amount]
    if was_turn:
        entry["own"] = True
        # Fair play (rules 17): how long the decision took (at least 1: 0 means not measured).
        entry["ms"] = max(1, round((act.at - state.turn_start) * 1000))
    try:
        if act.kind == table_pb2.ACTION_KIND_ALL_IN:
            hand.verify_all_in(seat)
        return _decide(state, entry, act.at, bank)
    except IllegalActionError as error:
        raise engine_refusal(error) from error


def _resume(state: HandState, resume: Resume) -> Step:
    """A hand taken over goes on: the player to act gets what was left of their turn (counted from
    when it began, the log's last entry) plus the grace; the grace is never charged to the bank."""
    seat = state.to_act
    if seat is None:
        return Step(state)
    allowed = state.action_seconds + state.banks.get(seat, 0.0)
    left = max(0.0, state.turn_at + allowed - resume.at)
    end = resume.at + left + resume.grace
    return Step(replace(state, turn_start=end - allowed))


def outstanding(state: HandState) -> tuple[Effect, ...]:
    """The effect a hand waits for: its settlement, while it is over and not settled (sent again
    after an unavailable answer, and by a next owner: the cashier applies the hand id once)."""
    return (settlement(state),) if state.stage is Stage.SETTLING else ()


def settlement(state: HandState) -> Settle:
    """The `Settle` effect of a hand that is over: its nets by seat session, rake and record (ended
    at the hand's last decision, so a next owner builds the same record)."""
    result = state.hand.result
    if result is None:
        raise ValueError("the hand is not over")
    record = hand_record(
        room=state.room,
        table_id=state.table_id,
        config=state.config,
        events=state.hand.events,
        commitment=state.commitment,
        started_at=state.started_at,
        # Never before it started, should the wall clock have stepped back meanwhile.
        ended_at=max(state.turn_at, state.started_at),
        signals=state.signals,
        decision_ms=state.decision_ms,
        names={s.player_id: state.names.get(s.player_id) or f"Seat {s.seat + 1}" for s in state.config.seats},
    )
    nets = tuple((state.sessions[r.seat], r.net) for r in result.results)
    return Settle(state.hand_id, nets, result.rake, record)


def _settle_answer(state: HandState, answer: SettleAnswer) -> Step:
    """The cashier's answer to `Settle`. A late or repeated answer (the hand already settled or
    voided, or another hand's) changes nothing: a hand ends once."""
    if answer.hand_id != state.hand_id or state.stage is not Stage.SETTLING:
        return Step(state)
    if answer.outcome is Outcome.UNAVAILABLE:
        if state.paused:
            return Step(state)
        return Step(replace(state, paused=True), notices=("TABLE_PAUSED",))
    if answer.outcome is Outcome.REFUSED:
        seen = seen_so_far(state.config, state.hand.events)
        return Step(
            replace(state, stage=Stage.VOIDED, paused=False),
            effects=(Void(state.hand_id, seen),),
            notices=("VOIDED",),
        )
    record = settlement(state).record
    return Step(
        replace(state, stage=Stage.SETTLED, paused=False),
        effects=(Finish(state.hand_id, record, seen_positions(record, state.config.deck)),),
        notices=("SETTLED",),
    )
