"""The whole-table simulator (issue 42, after TigerBeetle's VOPR): the real shell (`TableActor`, the
hand's cycle, the logs) and the pure cores, on a simulated clock, against a simulated cashier,
fairness and lobby that delay, refuse, lose and repeat their answers; the shard crashes at any log
append or effect (before or after it took place) and the next owner opens the table from the same
log and the cashier and goes on.

One seed decides everything: the players' choices (sit down, act, retry, leave, go quiet), the
faults, the crashes and the time between them. Equal seeds give equal runs (the logs, the records
and the ledger are compared by `run(seed).digest`). A failing run prints its seed; run it again
with one command:

    .venv/bin/python -m tests.table.table_simulator --seed <seed> [--hands N]

Checked at every step: the chips of the pool are conserved (wallets + seats + rake); the cashier
never gets two settlements of one hand with other figures and fairness never two outcomes; no view
shows a player a card of another seat that the hand's record does not say was shown; a turn never
outlives its deadline (the clock fires it); a table always answers within a bounded simulated time.
Checked per hand: a player's decision is in the record once (never applied twice, never lost once
answered); the button moves on by one seat between two hands with the same players.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import hashlib
import json
import random
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from poker_engine.config import Variant
from service_runtime.errors import AlreadyExists, DomainError, FailedPrecondition, Unavailable
from service_runtime.structured_logging import configure_logging
from services.table.cash import table_core
from services.table.cash.actor import TableActor
from services.table.cash.hand_record import SeenPositions
from services.table.cash.settlement import AfterHand
from services.table.cash.table_state import Stage
from services.table.log.event_log import LocalEventLog
from services.table.log.record_outbox import MemoryOutbox
from services.table.ports.clock import SimulatedClock
from services.table.ports.dependencies import Commitment, SeatSession
from services.table.ports.rooms import Room, SeatGrant
from services.table.streams.chat import ChatGuard
from services.table.streams.table_streams import Watcher
from services.table.timings import Timings
from tests.table.fakes import ROOM

A = table_pb2
T = TypeVar("T")
TABLE = f"{ROOM.room_id}.1"
ACTION_SECONDS = 20.0
RETRY_MAX_SECONDS = 4.0
# A table that does not answer a command within this much simulated time (stepping the clock) hangs.
ANSWER_WITHIN_SECONDS = 600.0
# A read waits for no other service: while the cashier, fairness or the lobby are slow it is answered
# within this (the time the simulator's steps move the clock), except while the table opens (recovery).
# The seal too is off the clock's path (a seat change while it is out voids the sealed hand).
READ_WITHIN_SECONDS = 0.5
DECISIONS = (
    A.ACTION_KIND_FOLD,
    A.ACTION_KIND_CHECK,
    A.ACTION_KIND_CALL,
    A.ACTION_KIND_BET,
    A.ACTION_KIND_RAISE,
)


class Violation(AssertionError):
    pass


@dataclass
class Faults:
    """How often a dependency's call misbehaves, and how often the shard dies at an append or call."""

    refuse: float = 0.04  # UNAVAILABLE before doing anything
    lose: float = 0.03  # done, then UNAVAILABLE (the answer lost on the way)
    delay: float = 0.10  # answers after up to `max_delay` simulated seconds
    crash: float = 0.004  # the shard dies here: before the call or append, or right after it
    max_delay: float = 8.0


class Environment:
    """The simulated world around the table: clock, randomness, faults and the crash switch."""

    def __init__(self, seed: int, faults: Faults) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.clock = SimulatedClock(start=1_800_000_000.0, seed=seed)
        self.faults = faults
        self.crashed = asyncio.Event()
        self.crash_points: list[str] = []
        self.faults_injected = 0
        # When the log misbehaved (Redis away): the table waits for its log, and retries after.
        self.log_faults: list[float] = []
        self.frozen = False  # while a check reads, nothing misbehaves
        self.waiting: collections.Counter[str] = collections.Counter()  # calls delayed now, by name

    async def call(self, what: str, action: Callable[[], Awaitable[T]]) -> T:
        """One call of a dependency, as the faults decide."""
        if self.crashed.is_set():
            await _forever()
        f = self.faults
        if not self.frozen:
            roll = self.rng.random()
            if roll < f.crash:
                return await self._crash(what, action)
            roll -= f.crash
            if roll < f.refuse:
                self.faults_injected += 1
                self._log_fault(what)
                raise Unavailable("UNAVAILABLE", f"{what}: refused by the simulator", {"dependency": what})
            roll -= f.refuse
            if roll < f.delay and not what.startswith("log."):
                self.faults_injected += 1
                self.waiting[what] += 1
                try:
                    await self.clock.sleep(self.rng.uniform(0.0, f.max_delay))
                finally:
                    self.waiting[what] -= 1
            roll -= f.delay
            if roll < f.lose:
                self.faults_injected += 1
                self._log_fault(what)
                await action()
                raise Unavailable(
                    "UNAVAILABLE", f"{what}: answer lost by the simulator", {"dependency": what}
                )
        return await action()

    def _log_fault(self, what: str) -> None:
        if what.startswith("log."):
            self.log_faults.append(self.clock.now())

    async def _crash(self, what: str, action: Callable[[], Awaitable[T]]) -> T:
        after = self.rng.random() < 0.5
        if after:
            await action()
        self.crash_points.append(f"{'after' if after else 'before'} {what}")
        self.crashed.set()
        never: T = await _forever()
        return never


async def _forever() -> Any:
    await asyncio.Event().wait()


# ---------------------------------------------------------------------- the simulated services


class SimCashier:
    """Wallets, seat sessions and settlements of one pool, exactly once each; every call through the
    environment's faults."""

    def __init__(self, env: Environment, wallets: dict[str, int]) -> None:
        self.env = env
        self.wallets = dict(wallets)
        self.total = sum(wallets.values())
        self.sessions: dict[str, SeatSession] = {}
        self.closed: dict[str, int] = {}  # session -> cashed out
        self.settled: dict[str, tuple[tuple[tuple[str, int], ...], int]] = {}
        self.rake = 0
        self.violations: list[str] = []

    def chips(self) -> int:
        return sum(self.wallets.values()) + sum(s.stack for s in self.sessions.values()) + self.rake

    async def open_sessions(self, table_id: str) -> list[SeatSession]:
        async def read() -> list[SeatSession]:
            return list(self.sessions.values())

        return await self.env.call("cashier.ListOpenSeatSessions", read)

    async def open_seat_session(self, **fields: Any) -> SeatSession:
        async def open_() -> SeatSession:
            session_id, player = fields["session_id"], fields["player_id"]
            earlier = self.sessions.get(session_id)
            if earlier is not None:
                if (earlier.player_id, earlier.seat) != (player, fields["seat"]):
                    # As the cashier: a session id asked again with other fields is a conflict.
                    raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the session id was used with other fields")
                return earlier
            if session_id in self.closed:
                raise FailedPrecondition("SEAT_SESSION_CLOSED", "the seat session is closed")
            if any(s.player_id == player for s in self.sessions.values()):
                raise FailedPrecondition("SEAT_SESSION_ALREADY_OPEN", "the player has a seat here")
            buy_in = fields["buy_in"]
            if not fields["min_buy_in"] <= buy_in <= fields["max_buy_in"]:
                raise FailedPrecondition("BUY_IN_OUT_OF_RANGE", "out of the room's range")
            if self.wallets.get(player, 0) < buy_in:
                raise FailedPrecondition("INSUFFICIENT_FUNDS", "not enough chips")
            self.wallets[player] -= buy_in
            session = SeatSession(session_id, player, fields["seat"], buy_in)
            self.sessions[session_id] = session
            return session

        return await self.env.call("cashier.OpenSeatSession", open_)

    async def settle_hand(
        self, *, hand_id: str, table_id: str, pool: int, nets: list[tuple[str, int]], rake: int
    ) -> None:
        async def settle() -> None:
            figures = (tuple(nets), rake)
            first = self.settled.get(hand_id)
            if first is not None:
                if first != figures:
                    self.violations.append(f"hand {hand_id} settled again with other figures")
                    raise FailedPrecondition("IDEMPOTENCY_CONFLICT", "other figures")
                return
            if sum(n for _, n in nets) + rake != 0:
                self.violations.append(f"hand {hand_id}: nets and rake do not sum to 0")
            for session_id, net in nets:
                session = self.sessions.get(session_id)
                if session is None:
                    self.violations.append(f"hand {hand_id} settles closed session {session_id}")
                    raise FailedPrecondition("SEAT_SESSION_CLOSED", "closed")
                if session.stack + net < 0:
                    self.violations.append(f"hand {hand_id} takes {session_id} below zero")
            self.settled[hand_id] = figures
            for session_id, net in nets:
                s = self.sessions[session_id]
                self.sessions[session_id] = SeatSession(s.session_id, s.player_id, s.seat, s.stack + net)
            self.rake += rake

        await self.env.call("cashier.SettleHand", settle)

    async def cash_out(self, session_id: str) -> int:
        async def out() -> int:
            session = self.sessions.pop(session_id, None)
            if session is not None:
                self.closed[session_id] = session.stack
                self.wallets[session.player_id] = self.wallets.get(session.player_id, 0) + session.stack
            return self.closed.get(session_id, 0)

        return await self.env.call("cashier.CashOutSeatSession", out)

    async def hand_settled(self, hand_id: str) -> bool:
        async def look() -> bool:
            return hand_id in self.settled

        return await self.env.call("cashier.LookupTransfers", look)


class SimFairness:
    """Commitments, decks and reveals; a hand has one outcome (FINISHED or VOIDED) for ever."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.hands: dict[str, str] = {}
        self.decks: dict[str, tuple[int, ...]] = {}
        self.sealed_for: dict[str, tuple[str, ...]] = {}  # hand -> the participants it was sealed for
        self.outcome: dict[str, bool] = {}  # hand -> voided
        self.voided: list[str] = []  # in the order they were voided
        self.violations: list[str] = []

    async def commit(self, request_id: str, table_id: str, **_: Any) -> Commitment:
        async def commit_() -> Commitment:
            if request_id not in self.hands:
                self.hands[request_id] = f"h{self.env.rng.getrandbits(64):016x}"
            hand_id = self.hands[request_id]
            return Commitment(hand_id, hashlib.sha256(hand_id.encode()).hexdigest())

        return await self.env.call("fairness.CommitHand", commit_)

    async def add_entropy(self, hand_id: str, seat: int, player_id: str, seed: bytes = b"", **_: Any) -> None:
        async def add() -> None:
            return None

        await self.env.call("fairness.AddPlayerEntropy", add)

    async def seal(self, hand_id: str, participants: Sequence[str] = ()) -> tuple[int, ...]:
        async def seal_() -> tuple[int, ...]:
            if hand_id in self.outcome:
                raise FailedPrecondition("HAND_ALREADY_REVEALED", "the hand already ended")
            # As the service: a seal binds its participants; asked again for others, a conflict.
            if self.sealed_for.setdefault(hand_id, tuple(participants)) != tuple(participants):
                raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the hand was sealed for other participants")
            if hand_id not in self.decks:
                deck = list(range(52))
                random.Random(hand_id).shuffle(deck)
                self.decks[hand_id] = tuple(deck)
            return self.decks[hand_id]

        return await self.env.call("fairness.SealHand", seal_)

    async def reveal(self, hand_id: str, *, voided: bool = False, seen: SeenPositions | None = None) -> None:
        async def reveal_() -> None:
            if hand_id not in self.outcome and voided:
                self.voided.append(hand_id)
            first = self.outcome.setdefault(hand_id, voided)
            if first != voided:
                self.violations.append(
                    f"hand {hand_id} revealed {'VOIDED' if first else 'FINISHED'} then not"
                )

        await self.env.call("fairness.RevealHand", reveal_)


class SimRooms:
    def __init__(self, env: Environment, room: Room) -> None:
        self.env = env
        self.room = room

    async def get_room(self, room_id: str) -> Room:
        async def get() -> Room:
            return self.room

        return await self.env.call("lobby.GetRoom", get)

    async def list_rooms(self) -> list[Room]:
        return [self.room]

    async def authorize_seat(self, player_id: str, room_id: str, suggested_name: str = "") -> SeatGrant:
        async def grant() -> SeatGrant:
            return SeatGrant(0, suggested_name or player_id)

        return await self.env.call("lobby.AuthorizeSeat", grant)


class SimLog(LocalEventLog):
    """The hand and seats' log in memory (it outlives the shard); each write may crash the shard
    before or after it is written, or be refused."""

    def __init__(self, env: Environment) -> None:
        super().__init__()
        self.env = env

    async def append(self, room_id: str, hand_id: str, entries: Any) -> None:
        await self.env.call("log.append", lambda: LocalEventLog.append(self, room_id, hand_id, entries))

    async def mark_live(self, room_id: str, table_id: str, hand_id: str) -> None:
        await self.env.call(
            "log.mark_live", lambda: LocalEventLog.mark_live(self, room_id, table_id, hand_id)
        )

    async def mark_next(self, room_id: str, table_id: str, hand_id: str) -> None:
        await self.env.call(
            "log.mark_next", lambda: LocalEventLog.mark_next(self, room_id, table_id, hand_id)
        )

    async def append_live(self, *args: Any, **kwargs: Any) -> None:
        await self.env.call("log.append_live", lambda: LocalEventLog.append_live(self, *args, **kwargs))

    async def forget_live(self, table_id: str, hand_id: str) -> None:
        await self.env.call("log.forget_live", lambda: LocalEventLog.forget_live(self, table_id, hand_id))

    async def append_seats(self, room_id: str, table_id: str, entries: Any) -> None:
        await self.env.call(
            "log.append_seats", lambda: LocalEventLog.append_seats(self, room_id, table_id, entries)
        )

    async def rewrite_seats(self, room_id: str, table_id: str, entries: Any) -> None:
        await self.env.call(
            "log.rewrite_seats", lambda: LocalEventLog.rewrite_seats(self, room_id, table_id, entries)
        )


# ---------------------------------------------------------------------- the players and the run


@dataclass
class Pending:
    """A player's call under way: a task, what it was, and the ids to retry it with."""

    kind: str
    player: str
    request_id: str
    task: asyncio.Task[Any]
    hand_id: str = ""
    args: tuple[Any, ...] = ()


@dataclass
class Result:
    seed: int
    hands: int = 0
    voided: int = 0
    crashes: int = 0
    faults: int = 0
    decisions: int = 0
    timeouts: int = 0
    steps: int = 0
    closes: int = 0  # CloseTable carried out: every seat cashed out, the table closed and opened again
    simulated_seconds: float = 0.0
    digest: str = ""

    def summary(self) -> str:
        return (
            f"seed {self.seed}: {self.hands} hands settled ({self.voided} commitments voided), {self.decisions} "
            f"decisions, {self.timeouts} timeouts, {self.crashes} crashes, {self.faults} faults injected, "
            f"{self.steps} steps, {self.closes} tables closed, {self.simulated_seconds:.0f} simulated s, "
            "no violation"
        )


class Simulation:
    def __init__(self, seed: int, *, hands: int, players: int = 5, faults: Faults | None = None) -> None:
        self.env = Environment(seed, faults or Faults())
        self.rng = self.env.rng
        self.target = hands
        self.players = [f"p{i}" for i in range(players)]
        self.cashier = SimCashier(self.env, {p: 5_000 for p in self.players})
        self.fairness = SimFairness(self.env)
        # The game by seed: no-limit at six seats, or fixed limit at six or ten (rules 5, 6).
        self.room = ROOM
        if self.rng.random() < 0.35:
            self.room = dataclasses.replace(
                ROOM, variant=Variant.FIXED_LIMIT, small_bet=10, big_bet=20, seats=self.rng.choice([6, 10])
            )
        self.rooms = SimRooms(self.env, self.room)
        # The players' WatchTable streams (a stream open is presence: closing the last one is away).
        self.watchers: dict[str, Watcher] = {}
        self.log = SimLog(self.env)
        self.outbox = MemoryOutbox()
        self.records: dict[str, history_pb2.HandRecord] = {}
        self.order: list[str] = []  # hands in the order they were settled
        self.actor: TableActor | None = None
        self.pending: list[Pending] = []
        self.accepted: dict[str, set[str]] = {}  # hand -> request ids answered OK
        self.unknown: dict[str, set[str]] = {}  # hand -> request ids whose answer a crash took
        self.shown_to: list[tuple[str, int, tuple[int, ...], str]] = []  # (hand, seat, cards, viewer)
        self.result = Result(seed)
        self.counter = 0
        # Seats seen taken while each hand was the table's current one (1-based, as the views).
        self.occupied: dict[str, set[int]] = {}
        self.dealt: list[str] = []  # every hand id the views showed, in order
        self.dealt_at: dict[str, int] = {}  # hand id -> its place in `dealt`
        self.uncounted: list[str] = []  # settled hands whose decisions are not counted yet
        self.seated: set[str] = set()  # the players whose own view showed them seated, last check
        self.orphaned: dict[str, int] = {}  # player -> checks in a row their session had no seat
        self.pairs_checked = 0  # `order`'s pairs whose blinds were checked
        self.voided_checked = 0  # fairness's voided hands checked against `in_play`
        self.in_play: set[str] = set()  # hands a view showed dealt and running
        # The operator's CloseTable answered OK: the hands that may still be played (dealt before it).
        self.closing_allows: set[str] | None = None
        self.close_ids: set[str] = set()  # CloseTable request ids sent
        self.close_ids_ok: set[str] = set()  # ... answered OK (so in the table's log)
        self.closes_done: set[str] = set()  # ... of those, the ones answered before the table closed

    # ------------------------------------------------------------------ the table and its owners

    def _open(self) -> TableActor:
        timings = Timings(
            action_seconds=ACTION_SECONDS,
            time_bank_seconds=10,
            countdown_seconds=0,
            retry_initial_seconds=0.5,
            retry_max_seconds=RETRY_MAX_SECONDS,
            command_queue_size=64,
            watch_queue_size=16,
            handover_grace_seconds=5.0,
            showdown_seconds=0.0,
        )
        actor = TableActor(
            TABLE,
            self.room,
            cashier=self.cashier,  # type: ignore[arg-type]
            fairness=self.fairness,  # type: ignore[arg-type]
            event_log=self.log,
            after_hand=self._after_hand,
            rooms=self.rooms,  # type: ignore[arg-type]
            timings=timings,
            chat=ChatGuard(),
            outbox=self.outbox,
            clock=self.env.clock,
        )
        actor.start()
        return actor

    def _after_hand(self, job: AfterHand) -> None:
        """The shard's after-hand queue: the record kept, the reveal sent (no faults: the queue
        retries them for ever in the service)."""
        record = job.record
        if job.hand_id not in self.records:
            self.order.append(job.hand_id)
            self.uncounted.append(job.hand_id)
        self.records[job.hand_id] = record
        # A settled hand is FINISHED at fairness: one voided before is a second outcome.
        if self.fairness.outcome.setdefault(job.hand_id, False):
            self.fairness.violations.append(f"hand {job.hand_id} settled after it was voided")

    async def _crash(self) -> None:
        """The shard died: its table is gone without a word; the next owner opens it."""
        assert self.actor is not None
        self.result.crashes += 1
        dead = self.actor
        self.actor = None
        await dead.stop()
        for player in list(self.watchers):
            self._check_stream(player, None)  # what they carried before the shard died
        self.watchers.clear()  # the dead shard's streams ended with it
        # Calls in flight at the dead shard end with the connection; their players retry.
        for pending in self.pending:
            if not pending.task.done():
                pending.task.cancel()
        await _turns(8)
        self.env.crashed.clear()
        self.actor = self._open()
        if self.closing_allows is not None and not self._log_says_closing(self.actor):
            # The dead shard had closed the table (its seats' log ends with TableClosed) and died
            # before its round was over: the table the next call opens is an ordinary one.
            self.closing_allows = None
            self.result.closes += 1
            self.closes_done |= self.close_ids_ok
        self._collect()  # the calls the crash cut: unanswered (their players retry them)

    def _log_says_closing(self, actor: TableActor) -> bool:
        entries = self.log._seats.get(TABLE, [])
        return table_core.replay(entries, actor._rules, self.room.small_blind, self.room.big_blind).closing

    # ------------------------------------------------------------------ asking the table

    async def _ask(self, make: Callable[[TableActor], Awaitable[T]]) -> T | None:
        """A read of the table, stepping the clock while it is busy (the table's opening waits for a
        slow service inside it); None when the shard crashed meanwhile."""
        waited = 0.0
        while True:
            if self.env.crashed.is_set():
                await self._crash()
            actor = self.actor
            assert actor is not None
            task = asyncio.ensure_future(make(actor))
            for _ in range(10_000):
                # Every turn the loop can take at this instant first: only a wait for time to pass
                # (a timer, a slow service) moves the clock.
                for _ in range(200):
                    await asyncio.sleep(0)
                    if task.done() or self.env.crashed.is_set():
                        break
                if task.done() or self.env.crashed.is_set():
                    break
                await self.env.clock.run_for(0.25, turns=4)
                waited += 0.25
                if task.done() or self.env.crashed.is_set():
                    break
                if waited > ANSWER_WITHIN_SECONDS:
                    task.cancel()
                    raise Violation(f"the table did not answer within {ANSWER_WITHIN_SECONDS} simulated s")
                held = actor._cycle.stage is Stage.RECOVERING
                if waited > READ_WITHIN_SECONDS and not held:
                    slow = sorted(name for name, n in self.env.waiting.items() if n)
                    task.cancel()
                    raise Violation(f"a read waited {waited} simulated s for another service ({slow})")
            if not task.done():
                task.cancel()
                await _turns(4)
                continue
            try:
                return task.result()
            except Unavailable:
                if self.env.crashed.is_set():
                    continue
                return None

    async def _view(self, player: str) -> table_pb2.TableView | None:
        self.env.frozen = True
        try:
            return await self._ask(lambda actor: actor.call(lambda: actor.snapshot(player)))
        finally:
            self.env.frozen = False

    # ------------------------------------------------------------------ the players' moves

    def _request(self, player: str) -> str:
        self.counter += 1
        return f"{player}-{self.counter}"

    def _start(self, kind: str, player: str, request_id: str, *args: Any, hand_id: str = "") -> None:
        actor = self.actor
        assert actor is not None
        if kind == "act":
            coro: Awaitable[Any] = actor.act(player, request_id, hand_id, *args)
        elif kind == "sit":
            coro = actor.sit_down(player, request_id, *args)
        elif kind == "sitout":
            back_in, wait = args
            coro = actor.call(lambda: actor.sit_out(player, request_id, back_in, wait))
        elif kind == "close":
            coro = actor.call(lambda: actor.close_after_hand(request_id))
            args = (actor.closing,)  # whether the table was closing already as it was sent
            self.close_ids.add(request_id)
        else:
            coro = actor.leave(player, request_id)
        self.pending.append(Pending(kind, player, request_id, asyncio.ensure_future(coro), hand_id, args))

    def _collect(self) -> None:
        """Answers that came: acts accepted counted; calls a crash cut are retried with the same id."""
        still: list[Pending] = []
        for pending in self.pending:
            task = pending.task
            if not task.done():
                still.append(pending)
                continue
            if task.cancelled() or isinstance(task.exception(), Unavailable):
                # No answer (a crash, a dependency away): the player retries later with the same id.
                if pending.kind == "act":
                    self.unknown.setdefault(pending.hand_id, set()).add(pending.request_id)
                if self.rng.random() < 0.7 and self.actor is not None:
                    self._start(
                        pending.kind,
                        pending.player,
                        pending.request_id,
                        *pending.args,
                        hand_id=pending.hand_id,
                    )
                    still.append(self.pending.pop())
                continue
            error = task.exception()
            if (
                error is None
                and pending.kind == "close"
                and pending.request_id in self.closes_done
                and not pending.args[0]
                and self.actor is not None
                and self.actor.closing
            ):
                # A retry of a close carried out already (its answer lost) closed the table again.
                raise Violation(f"CloseTable {pending.request_id}, retried, closed the table opened again")
            if error is None and pending.kind == "close":
                self.close_ids_ok.add(pending.request_id)
            # A close answered while the table is not closing is a retry of one it carried out already
            # (the log remembers the id; its first answer was lost), or the table closed (or died)
            # since: no hand is held back by it.
            closing_now = self.actor is not None and self.actor.closing
            if error is None and pending.kind == "close" and closing_now and self.closing_allows is None:
                # Answered: the hand under way (if any) is the last this table deals until it closes.
                live = self.actor._live if self.actor is not None else None
                self.closing_allows = set(self.dealt) | ({live.hand_id} if live is not None else set())
            if error is None and pending.kind == "act":
                self.accepted.setdefault(pending.hand_id, set()).add(pending.request_id)
                self.unknown.get(pending.hand_id, set()).discard(pending.request_id)
                self.result.decisions += 1
            elif error is not None and not isinstance(error, DomainError):
                raise Violation(f"{pending.kind} by {pending.player} failed with {error!r}")
        self.pending = still

    async def _move(self) -> None:
        """One player does one thing, as the seed says."""
        roll = self.rng.random()
        view = await self._view(self.rng.choice(self.players))
        if view is None:
            return
        seated = {s.player_id for s in view.seats if s.player_id}
        busy = {p.player for p in self.pending if not p.task.done()}
        if roll < 0.55 and view.to_act_seat:
            actor_view = None
            for player in self.players:
                if player in busy:
                    continue
                mine = await self._view(player)
                if mine is not None and mine.legal_actions.actions and mine.to_act_seat:
                    own = next((s for s in mine.seats if s.player_id == player), None)
                    if own is not None and own.seat == mine.to_act_seat:
                        actor_view = (player, mine)
                        break
            if actor_view is None:
                return
            player, mine = actor_view
            if self.rng.random() < 0.15:
                return  # they think it over: the clock may decide for them
            kind, amount = self._decide(mine.legal_actions)
            self._start("act", player, self._request(player), kind, amount, hand_id=mine.hand_id)
        elif roll < 0.75:
            standing = [p for p in self.players if p not in busy and p not in seated]
            if standing:
                player = self.rng.choice(standing)
                free = self.rng.choice([0, *range(1, self.room.seats + 1)])
                buy_in = self.rng.choice([ROOM.min_buy_in, 500, ROOM.max_buy_in, ROOM.max_buy_in + 1])
                self._start("sit", player, self._request(player), free, buy_in, self.rng.random() < 0.5)
        elif roll < 0.82:
            sitting = [p for p in self.players if p not in busy and p in self.seated]
            if sitting:
                player = self.rng.choice(sitting)
                self._start("leave", player, self._request(player))
        elif roll < 0.84:
            sitting = [p for p in self.players if p not in busy and p in self.seated]
            if sitting:
                player = self.rng.choice(sitting)
                back_in = self.rng.random() < 0.6
                self._start("sitout", player, self._request(player), back_in, self.rng.random() < 0.5)
        elif roll < 0.88:
            # A player's client opens or closes its stream (a seated player away, back).
            player = self.rng.choice(self.players)
            self._check_stream(player, None)  # what it carried up to now
            watcher = self.watchers.pop(player, None)
            actor = self.actor
            if watcher is not None and actor is not None:
                actor.unwatch(watcher)
            elif actor is not None:
                opened = await self._ask(lambda table: table.call(lambda: table.watch(player)))
                if opened is not None:
                    self.watchers[player] = opened
        elif roll < 0.90 and self.pending:
            # A retry of a call already answered (a lost answer, as the client sees it).
            done = [p for p in self.pending if p.task.done()]
            if done:
                again = self.rng.choice(done)
                self._start(again.kind, again.player, again.request_id, *again.args, hand_id=again.hand_id)
        elif 0.90 <= roll < 0.905 and not any(p.kind == "close" and not p.task.done() for p in self.pending):
            # The operator closes the table after its hand (CloseTable, issue 38), or their client
            # retries a close whose answer it lost, with its request id (perhaps after the table
            # closed and opened again: that retry must close nothing).
            earlier = sorted(self.close_ids)
            if earlier and self.rng.random() < 0.5:
                self._start("close", "operator", self.rng.choice(earlier))
            else:
                self._start("close", "operator", self._request("operator"))

    async def _check_sealed(self) -> None:
        """At the end: every hand fairness sealed was dealt or voided, but the ones the table still
        holds (its countdown, a seal or void under way, the running hand, the log's marks, which a
        next owner takes). A sealed hand left otherwise is a deck nobody will ever open."""
        actor = self.actor
        held: set[str] = set(self.records) | set(self.dealt) | self.in_play
        for mark in (
            await LocalEventLog.live_hand(self.log, TABLE),
            await LocalEventLog.next_hand(self.log, TABLE),
        ):
            if mark is not None:
                held.add(mark)
        if actor is not None:
            cycle = actor._cycle
            if cycle.countdown is not None:
                held.add(cycle.countdown.commitment.hand_id)
            if cycle._sealed_for is not None:
                held.add(cycle._sealed_for[0])
            if actor._live is not None:
                held.add(actor._live.hand_id)
            if cycle.asking:
                return  # a seal or a void under way: its hand is not settled yet
        stranded = sorted(
            h for h in self.fairness.sealed_for if h not in held and h not in self.fairness.outcome
        )
        if stranded:
            raise Violation(f"hands sealed and neither dealt nor voided: {stranded}")

    async def _shards_round(self) -> None:
        """What the shard's ownership round does for a closing table: close it once every seat is
        cashed out (`close_if_done`); the next call for it opens it again, an ordinary table."""
        actor = self.actor
        if actor is None or actor.closed or not actor.closing:
            return
        done = await self._ask(lambda table: table.call(lambda: table.close_if_done(lambda: None)))
        # The table that answered: a crash meanwhile has `_ask` ask the next owner's (which closes
        # the table as well, its log saying so).
        actor = self.actor
        if not done or actor is None or not actor.closed:
            return
        still = [s for s in self.cashier.sessions.values()]
        if still:
            raise Violation(f"the table closed with seat sessions open: {still}")
        self.result.closes += 1
        self.closing_allows = None
        self.closes_done |= self.close_ids_ok
        await actor.stop()
        for player in list(self.watchers):
            self._check_stream(player, None)
        self.watchers.clear()  # the closed table's streams ended with it
        self.actor = self._open()

    def _seated(self, view: table_pb2.TableView, player: str) -> bool:
        # Other seats carry a handle, not the id: ask the player's own view.
        return any(s.player_id == player for s in view.seats)

    def _decide(self, legal: table_pb2.LegalActions) -> tuple[int, int]:
        kinds = list(legal.actions)
        kind = self.rng.choice(kinds)
        if kind in (A.ACTION_KIND_BET, A.ACTION_KIND_RAISE):
            low, high = legal.min_amount, legal.max_amount
            amount = self.rng.choice([low, high, self.rng.randint(low, high)]) if high >= low else low
            return kind, amount
        return kind, 0

    # ------------------------------------------------------------------ checks

    async def _check(self) -> None:
        c = self.cashier
        if c.chips() != c.total:
            raise Violation(f"chips not conserved: {c.chips()} held, {c.total} bought")
        problems = c.violations + self.fairness.violations
        # A hand dealt is never voided: whoever opens the table next goes on with it.
        voided = self.fairness.voided
        problems += [
            f"hand {hand} was dealt and then voided"
            for hand in voided[self.voided_checked :]
            if hand in self.in_play
        ]
        self.voided_checked = len(voided)
        if problems:
            raise Violation("; ".join(problems))
        now = self.env.clock.now()
        for player in self.players:
            view = await self._view(player)
            if view is None:
                return
            own = next((s.seat for s in view.seats if s.player_id == player), None)
            if own is None:
                self.seated.discard(player)
            else:
                self.seated.add(player)
            self._check_session(player, own)
            self._check_stream(player, own)
            if view.hand_id and view.hand_id not in self.dealt_at:
                if (
                    self.closing_allows is not None
                    and view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS
                    and view.hand_id not in self.closing_allows
                ):
                    raise Violation(f"hand {view.hand_id} was dealt after CloseTable was answered")
                self.dealt_at[view.hand_id] = len(self.dealt)
                self.dealt.append(view.hand_id)
            if view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS:
                self.in_play.add(view.hand_id)
            if view.hand_id:
                self.occupied.setdefault(view.hand_id, set()).update(
                    s.seat for s in view.seats if s.player_id
                )
            for seat in view.seats:
                visible = tuple(c.index for c in seat.hole_cards if not c.hidden)
                if seat.seat != own and visible:
                    self.shown_to.append((view.hand_id, seat.seat, visible, player))
            if (
                view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS
                and view.to_act_seat
                and view.to_act_deadline.seconds
            ):
                deadline = view.to_act_deadline.ToNanoseconds() / 1e9
                # Nothing but the clock's own step lies between the deadline and the turn's end,
                # unless the log refused an append near it: the decision is logged before it is
                # taken, and the table retries after a backoff.
                self.env.log_faults = [at for at in self.env.log_faults if at >= now - 600]
                excused = any(deadline - RETRY_MAX_SECONDS - 0.5 <= at <= now for at in self.env.log_faults)
                if now > deadline + 0.5 and not excused:
                    raise Violation(
                        f"the turn of seat {view.to_act_seat} in {view.hand_id} outlived its deadline by "
                        f"{now - deadline:.2f} s"
                    )

    def _check_stream(self, player: str, own: int | None) -> None:
        """What the player's stream carried: no other seat's hole card face up, but cards shown at a
        showdown (checked against the hand's record, as the views are)."""
        watcher = self.watchers.get(player)
        if watcher is None:
            return
        while not watcher.queue.empty():
            message = watcher.queue.get_nowait()
            hand_id = message.view.hand_id
            mine = next((s.seat for s in message.view.seats if s.player_id == player), own)
            for seat in message.view.seats:
                visible = tuple(c.index for c in seat.hole_cards if not c.hidden)
                if seat.seat != mine and visible:
                    self.shown_to.append((hand_id, seat.seat, visible, player))
            for event in message.events:
                if not event.HasField("cards") or event.seat in (0, mine):
                    continue
                visible = tuple(c.index for c in event.cards.cards if not c.hidden)
                if visible and not event.cards.shown_by_player:
                    raise Violation(f"{player}'s stream showed seat {event.seat}'s cards {visible} face up")
                if visible:
                    self.shown_to.append((hand_id, event.seat, visible, player))

    def _check_session(self, player: str, own: int | None) -> None:
        """A seat session the cashier holds open is the player's seat at the table, unless a call of
        theirs is under way (a sit-down or a leave) or the table is opening: never an orphan."""
        sessions = [s for s in self.cashier.sessions.values() if s.player_id == player]
        if not sessions or own == sessions[0].seat:
            self.orphaned.pop(player, None)
            return
        busy = any(p.player == player and not p.task.done() for p in self.pending)
        actor = self.actor
        opening = actor is None or actor._cycle.stage is Stage.RECOVERING
        leaving = actor is not None and any(
            seat.player_id == player and seat.leaving for seat in actor._seats.players.values()
        )
        if not busy and not opening and not leaving:
            self.orphaned[player] = self.orphaned.get(player, 0) + 1
            if self.orphaned[player] > 20:  # twenty checks in a row: nothing will seat it
                session = sessions[0]
                raise Violation(
                    f"{player}'s seat session at seat {session.seat} is no seat (the view: {own})"
                )
        else:
            self.orphaned.pop(player, None)

    def _check_records(self) -> None:
        for hand_id, seat, cards, viewer in self.shown_to:
            record = self.records.get(hand_id)
            if record is None:
                continue  # its record comes later (a hand still running when the run ends: never)
            held = next((s for s in record.seats if s.seat + 1 == seat), None)
            if held is None or not held.shown or tuple(c.index for c in held.hole_cards) != cards:
                raise Violation(f"{viewer} saw seat {seat}'s cards {cards} in hand {hand_id}, never shown")
        self.shown_to = [s for s in self.shown_to if s[0] not in self.records]
        pending_hands = {p.hand_id for p in self.pending if p.kind == "act" and not p.task.done()}
        waiting = [hand for hand in self.uncounted if hand in pending_hands]
        counting, self.uncounted = [h for h in self.uncounted if h not in pending_hands], waiting
        for hand_id in counting:
            record = self.records[hand_id]
            decided = sum(1 for a in record.actions if a.cause == history_pb2.ACTION_CAUSE_PLAYER)
            answered = len(self.accepted.get(hand_id, ()))
            lost = len(self.unknown.get(hand_id, set()) - self.accepted.get(hand_id, set()))
            if not answered <= decided <= answered + lost:
                raise Violation(
                    f"hand {hand_id}: {decided} decisions recorded, {answered} answered, {lost} unanswered"
                )
        start, self.pairs_checked = self.pairs_checked, max(0, len(self.order) - 1)
        for index in range(start, len(self.order) - 1):
            first, second = self.order[index], self.order[index + 1]
            a, b = self.records[first], self.records[second]
            seats = sorted(s.seat for s in a.seats)
            if seats != sorted(s.seat for s in b.seats) or len(seats) < 2:
                continue
            if [s.player_id for s in a.seats] != [s.player_id for s in b.seats]:
                continue
            # Nobody else sat at the table meanwhile (a seat taken, left or waiting changes who
            # owes what), and no hand was voided between them.
            seen = self.occupied.get(first, set()) | self.occupied.get(second, set())
            if not seen <= {seat + 1 for seat in seats}:
                continue
            if first not in self.dealt_at or second not in self.dealt_at:
                continue  # a hand no view caught: a voided one may lie between
            between = self.dealt[self.dealt_at[first] + 1 : self.dealt_at[second]]
            if any(self.fairness.outcome.get(hand) for hand in between):
                continue
            # The dead-button rules: the big blind moves on by one player every hand.
            big_a, big_b = _big_blind(a), _big_blind(b)
            if big_a is None or big_b is None:
                continue
            later = [seat for seat in seats if seat > big_a] or seats
            if big_b != later[0]:
                raise Violation(f"the big blind went from seat {big_a} to {big_b} over {seats}")

    # ------------------------------------------------------------------ the run

    async def run(self) -> Result:
        self.actor = self._open()
        try:
            steps = 0
            while len(self.records) < self.target:
                steps += 1
                if steps > self.target * 400:
                    raise Violation(f"only {len(self.records)} hands in {steps} steps: the table stalls")
                if self.env.crashed.is_set():
                    await self._crash()
                self._collect()
                if self.rng.random() < 0.35:
                    await self.env.clock.run_for(self.rng.uniform(0.0, ACTION_SECONDS * 1.6), turns=8)
                await self._move()
                await _turns(8)
                self._collect()
                await self._shards_round()
                await self._check()
                self._check_records()
            self.result.steps = steps
            self._check_records()  # the records that came in the last step
            await self._check_sealed()
        finally:
            for pending in self.pending:
                pending.task.cancel()
            if self.actor is not None:
                await self.actor.stop()
        self.result.hands = len(self.records)
        self.result.voided = sum(1 for voided in self.fairness.outcome.values() if voided)
        self.result.faults = self.env.faults_injected
        self.result.timeouts = sum(
            1 for r in self.records.values() for a in r.actions if a.cause == history_pb2.ACTION_CAUSE_TIMEOUT
        )
        self.result.simulated_seconds = self.env.clock.now() - 1_800_000_000.0
        self.result.digest = self._digest()
        return self.result

    def _digest(self) -> str:
        state = {
            "log": sorted((str(k), repr(v)) for k, v in vars(self.log).items() if k != "env"),
            "records": [self.records[h].SerializeToString(deterministic=True).hex() for h in self.order],
            "wallets": sorted(self.cashier.wallets.items()),
            "settled": sorted((k, repr(v)) for k, v in self.cashier.settled.items()),
            "crashes": self.env.crash_points,
        }
        return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def _big_blind(record: history_pb2.HandRecord) -> int | None:
    return next((a.seat for a in record.actions if a.kind == "POST_BIG_BLIND"), None)


async def _turns(count: int) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def simulate(seed: int, *, hands: int = 30, faults: Faults | None = None) -> Result:
    simulation = Simulation(seed, hands=hands, faults=faults)
    try:
        return await simulation.run()
    except Violation as violation:
        raise Violation(
            f"{violation} (seed {seed}; again: .venv/bin/python -m tests.table.table_simulator --seed {seed} "
            f"--hands {hands})"
        ) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The whole-table simulator (tests/table/table_simulator.py)")
    parser.add_argument("--seed", type=int, default=None, help="one seed (default: random seeds)")
    parser.add_argument("--seeds", type=int, default=1, help="how many random seeds")
    parser.add_argument("--hands", type=int, default=30, help="hands settled per seed")
    args = parser.parse_args(argv)
    configure_logging("table-simulator", log_format="console", level="error")
    seeds = [args.seed] if args.seed is not None else [random.randrange(2**32) for _ in range(args.seeds)]
    failed = 0
    for seed in seeds:
        try:
            result = asyncio.run(simulate(seed, hands=args.hands))
        except Violation as violation:
            failed += 1
            print(f"FAILED {violation}", flush=True)
            continue
        print(result.summary(), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
