"""The hand's cycle of one cash table: the stage machine between and during hands, for the actor.

From the table's opening to each hand's end (docs/table.md "A hand, start to end"): recovery (the
seats and a hand a previous owner left running, recovery.py), the countdown (commit, client seeds,
the hash set's close; countdown.py), the seal and the deal (dealing.py), the turn clock while the
hand runs (the hand's core, core.py, says when the turn ends), the settlement with the cashier
(settlement.py; retried with backoff, no next hand before), the deferred cash-outs, the room re-read
between hands and the table's move to another shard.

`HandCycle` owns the hand's and the stage's state: the stage, the running hand, the last one, the
next hand's countdown, the wake-up time and its backoff. The actor (actor.py) wakes it at `wake_at`
(`on_wake`), checks its transitions after every command and step (`advance`) and runs the steps
under its guard (a refusal of the log fences the table, a failure retries later). The actor keeps
the room, the seats' core (fed and logged by the actor), the streams and the fence: the cycle
reaches them only through `Shell`.
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from poker.table.v1 import table_pb2
from poker_engine.events import CardsShown, Event
from poker_engine.seating import HandPlan
from poker_engine.seating import TableState as Seating
from service_runtime.errors import DomainError, Unavailable
from service_runtime.structured_logging import get_logger
from service_runtime.tasks import cancel_and_wait
from services.table import hand_trace
from services.table import metrics as table_metrics
from services.table.cash import core, table_core
from services.table.cash.countdown import Countdown, Due, seed_seconds
from services.table.cash.dealing import Dealer
from services.table.cash.recovery import Recovery, reopen_seats
from services.table.cash.settlement import AfterHand, Settlement
from services.table.cash.table_state import Stage
from services.table.cash.views import event_body, public_seat, redact_for
from services.table.idempotency import AnswerMemory
from services.table.log.event_log import HandEventLog
from services.table.log.record_outbox import RecordOutbox
from services.table.ports.clock import WALL_CLOCK, Clock
from services.table.ports.dependencies import CashierClient, FairnessClient
from services.table.ports.remote import is_unavailable
from services.table.ports.rooms import Room, RoomSource
from services.table.timings import Timings

log = get_logger("table.actor")

MAINTENANCE_RECHECK_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class Shell:
    """What the cycle asks of the actor (actor.py), which keeps these: the room (re-read between
    hands), the seats' core, its log and presence, the streams' events and notices, the fence."""

    room: Callable[[], Room]
    new_room: Callable[[Room], None]
    seats: Callable[[], table_core.Seats]
    # The seats' inputs not in the seats' log yet (a table that opens reads the log with them).
    seats_unlogged: Callable[[], Sequence[dict[str, Any]]]
    # A table that opens: its seats, and the inputs that caught the seats' log up with them.
    reopened: Callable[[table_core.Seats, Sequence[table_core.Input]], None]
    feed_seats: Callable[[table_core.Input], table_core.Step]
    # Append the seats' inputs not logged yet (never raises; a log that is away keeps them).
    log_seats: Callable[[], Awaitable[None]]
    publish: Callable[[Sequence[Event]], dict[int, list[table_pb2.TableEvent]]]
    notice: Callable[[str, str], None]
    fence_on: Callable[[DomainError], None]
    fenced: Callable[[], bool]
    no_new_hands: Callable[[], bool]
    # Cash a seat out outside the actor (at most one call per seat session under way).
    cash_out: Callable[[table_core.CashOut], object]
    # Run a call to another service outside the actor (stopped with the table), and come back in.
    off_clock: Callable[[Hashable, Coroutine[Any, Any, None]], object]
    inside: Callable[[Callable[[], Awaitable[None]]], Awaitable[None]]


class HandCycle:
    """The stage machine of one table (see the module's docstring); every method runs inside the actor."""

    def __init__(
        self,
        *,
        table_id: str,
        timings: Timings,
        rules: table_core.Rules,
        shell: Shell,
        cashier: CashierClient,
        fairness: FairnessClient,
        event_log: HandEventLog,
        rooms: RoomSource,
        after_hand: Callable[[AfterHand], None],
        outbox: RecordOutbox,
        answers: AnswerMemory,
        clock: Clock = WALL_CLOCK,
    ) -> None:
        self._clock = clock
        self._table_id = table_id
        self._t = timings
        self._rules = rules
        self._shell = shell
        self._cashier = cashier
        self._log = event_log
        self._rooms = rooms
        self._after_hand = after_hand
        self._answers = answers
        self.stage = Stage.RECOVERING
        # The running hand: the pure core's state (services/table/cash/core.py); the cycle feeds it.
        self.live: core.HandState | None = None
        self.last: core.HandState | None = None
        self.countdown: Countdown | None = None  # the next hand's countdown (countdown.py), once committed
        # The commitment of the hand after the running one, asked for as the running hand is dealt
        # (issue 28: off the path between two hands); it becomes the countdown once the hand settles.
        self._ahead: asyncio.Task[Countdown | None] | None = None
        self.wake_at: float | None = 0.0
        # A hand that ended with cards shown stays on the table until then: no countdown.
        self.showdown_until: float | None = None
        self.paused = False
        # Set when the shard hands the room to another shard (a drain, or a room that rendezvous
        # hashing gives to another shard): no new hand; the running one and a published countdown end.
        self.handing_over = False
        self.hands_settled = 0
        self.recent: collections.deque[tuple[float, int]] = collections.deque(maxlen=200)  # (ended, pot)
        # A step whose log append's answer was lost, with the hand it was decided on (`known`).
        self._unsure: tuple[core.HandState, core.Step] | None = None
        # The call to another service the cycle waits for, made outside the actor (`_ask`), and its
        # answer once it came back in: (what was asked, the result, the refusal). Nothing else of the
        # stage machine runs meanwhile; commands, reads and the other timers do (issue 42).
        self._asking: str | None = None
        self._asks = 0
        # A deal whose log write is unsure (refused, or its answer lost): countdown, plan and step.
        self._unsure_deal: tuple[Countdown, HandPlan, core.Step] | None = None
        # The hand and the players a seal was last asked for (`_deal`; it may have landed).
        self._sealed_for: tuple[str, tuple[tuple[int, str], ...]] | None = None
        self._answers_in: dict[str, tuple[Any, DomainError | None]] = {}
        self._backoff = timings.retry_initial_seconds
        self._room_read_at = 0.0
        self._move_announced = False
        # Opening the table (a hand left running, kept records), dealing and settling its hands.
        self._recovery = Recovery(
            table_id=table_id,
            room=shell.room,
            action_seconds=timings.action_seconds,
            cashier=cashier,
            fairness=fairness,
            event_log=event_log,
            outbox=outbox,
            after_hand=after_hand,
        )
        self._dealer = Dealer(
            table_id=table_id,
            fairness=fairness,
            event_log=event_log,
            action_seconds=timings.action_seconds,
            full_reveal_rooms=timings.full_reveal_rooms,
            clock=clock,
            retry_seconds=(timings.retry_initial_seconds, timings.retry_max_seconds),
        )
        self._settlement = Settlement(
            table_id=table_id, cashier=cashier, fairness=fairness, event_log=event_log, outbox=outbox
        )

    def keep(self) -> None:
        """The room stays here after all: hands start again (and a later move is announced again)."""
        self.handing_over = False
        self._move_announced = False

    def retry_later(self) -> None:
        self.wake_at = self._clock.now() + self._backoff
        self._backoff = min(self._t.retry_max_seconds, self._backoff * 2)

    # ------------------------------------------------------------------ the turn clock and presence

    def _arm_turn(self) -> None:
        """Wake up when the running turn expires (the core's deadline, wall clock; the action time
        plus what is left of the seat's bank unless its player is away), or not at all: no turn."""
        deadline = self.live.deadline() if self.live is not None else None
        self.wake_at = None if deadline is None else deadline

    def presence(self, seat: int, *, away: bool) -> None:
        """Tell the core the player of `seat` went away or came back (rules 13: the turn's end moves)."""
        live = self.live
        if live is None:
            return
        self.live = core.feed(live, core.Presence(seat, away, self._clock.now())).state
        if self.stage is Stage.PLAYING and live.to_act == seat:
            self._arm_turn()

    def _count_hand(self, live: core.HandState) -> None:
        """After a settled hand: three hands in a row lost to timeouts put a player in sit-out."""
        self._shell.feed_seats(
            table_core.HandPlayed(
                tuple(sorted(live.sessions.items())),
                frozenset(live.timed_out),
                frozenset(live.acted),
                self._clock.now(),
            )
        )

    # ------------------------------------------------------------------ the stages

    def advance(self) -> None:
        """Transitions that follow from the state, checked after every command and wake-up."""
        if self._asking is not None:
            return  # the step that asked goes on when the answer comes back
        idle = self.stage is Stage.IDLE and self.wake_at is None
        if idle and self._shell.seats().seating.plan_next_hand() is not None:
            self.wake_at = self._clock.now()
        if self.stage is Stage.PLAYING and self.live is not None and self.live.hand.is_over:
            table_metrics.hand_over(self._table_id)
            hand_trace.over(self._table_id)
            self.stage = Stage.SETTLING
            self.wake_at = self._clock.now()

    # ------------------------------------------------------------------ calls off the clock's path

    def _ask(self, what: str, call: Coroutine[Any, Any, Any]) -> None:
        """Make `call` outside the actor; its answer comes back inside as this cycle's next wake-up,
        for the step that asked (`_answered`). The turn clock, the reads and the players' commands
        never wait for it."""
        self._asking = what

        async def run() -> None:
            try:
                result, refused = await call, None
            except DomainError as error:
                result, refused = None, error
            except Exception as error:  # a bug: said, and the step retried, never a stalled table
                log.exception("table call failed", table_id=self._table_id, call=what)
                result, refused = None, Unavailable("UNAVAILABLE", f"{what} failed: {error!r}")

            async def back() -> None:
                if self._asking == what:
                    self._asking = None
                    self._answers_in[what] = (result, refused)
                    self.wake_at = self._clock.now()

            await self._shell.inside(back)

        # A key of its own: the call asked before it may not have ended its task yet (it is in its
        # last step, coming back in).
        self._asks += 1
        self._shell.off_clock(("cycle", what, self._asks), run())

    def _waiting_for(self, what: str) -> bool:
        """The answer to `what` is here, to be taken."""
        return what in self._answers_in

    def _answered(self, what: str) -> tuple[Any, DomainError | None] | None:
        """The answer to `what`, taken once (None: not asked, or not answered yet). Answers to other
        calls wait for their own step (a commitment is never lost to a room re-read after it)."""
        return self._answers_in.pop(what, None)

    async def on_wake(self) -> None:
        if self._asking is not None:
            return  # its answer wakes the cycle again
        if self.stage is Stage.RECOVERING:
            await self._recover()
        elif self.stage is Stage.IDLE:
            await self._begin_countdown()
        elif self.stage is Stage.COUNTDOWN:
            pending = self.countdown
            due = Due.SEAL if pending is None else pending.due(self._clock.now())
            if due is Due.CLOSE_HASHES:
                assert pending is not None
                self._close_seed_hashes(pending)
            elif due is Due.SEAL:
                await self._deal()
            else:
                self._arm_countdown()  # not yet
        elif self.stage is Stage.PLAYING:
            await self._expire_turn()
        elif self.stage is Stage.SETTLING:
            await self._settle()

    async def _recover(self) -> None:
        """Seat again every player whose seat session of this table is still open (shard restart), and
        go on with the hand a previous owner left running (docs/table.md "Takeover")."""
        # A commitment this table asked for ahead (the seats read again after a refused settlement):
        # marked as the next hand, it is voided with whatever else the recovery finds.
        await self._drop_ahead(wait=True)
        try:
            found = await self._recovery.find(self._shell.seats_unlogged())
        except DomainError as error:
            log.warning("recovery waits for the cashier", table_id=self._table_id, reason=error.reason)
            self.retry_later()
            return
        taken = found.taken
        seats, owed, corrections = reopen_seats(found, self._rules, self._shell.room(), self._clock.now)
        # The log caught up with the seats the cashier holds (appended at the end of this step).
        self._shell.reopened(seats, corrections)
        for cash_out in owed:
            try:
                await self._cashier.cash_out(cash_out.session_id)
            except DomainError as error:
                log.warning("recovery cash-out failed", table_id=self._table_id, reason=error.reason)
                self.retry_later()
                return
        self._room_read_at = self._clock.now()
        log.info("table open", table_id=self._table_id, seated=len(self._shell.seats().players))
        self.stage = Stage.IDLE
        self._backoff = self._t.retry_initial_seconds
        self._shell.notice("TABLE_OPEN", "the table is open")
        if self._shell.seats().closing:
            # CloseTable asked of a previous owner (in the seats' log): this owner carries it out.
            self._shell.notice(
                "TABLE_CLOSING", "this table closes after the hand; your chips go back to your wallet"
            )
        if taken is not None:
            self._continue_hand(taken)

    def _continue_hand(self, taken: core.HandState) -> None:
        """Go on with a hand taken over, as it was: same cards, stacks, bets and player to act. That
        player gets what was left of their turn (wall clock: the turn began at the log's last entry)
        plus the handover grace; their time bank is the one the log last gave the seat."""
        config = taken.config
        for seat in taken.left:
            player = self._shell.seats().players.get(seat)
            if player is not None:
                self._shell.feed_seats(table_core.Leave(player.player_id, in_hand=True))
        # The core gives the player to act the rest of their turn plus the grace (core.Resume).
        live = core.feed(taken, core.Resume(self._clock.now(), self._t.handover_grace_seconds)).state
        # Players the seats' log says are away are away in the hand too (rules 13), until they are back.
        for seat in taken.sessions:
            player = self._shell.seats().players.get(seat)
            if player is not None and player.presence.disconnected:
                live = core.feed(live, core.Presence(seat, True, self._clock.now())).state
        self.live = live
        self.stage = Stage.PLAYING
        # Decisions the last owner took whose answers may never have reached their players: a retry
        # with the same request id gets the first answer (the event as that seat saw it), not a second
        # go; the core answers it while the hand runs, the memory also once it has ended.
        for answered in taken.answered.values():
            self._answers.remember(
                (answered.player_id, "Act", answered.request_id),
                (config.hand_id, answered.kind, answered.amount),
                first_answer(taken, core.Replied(answered.seat, answered.mark)),
            )
        table_metrics.hand_continued()
        hand_trace.playing(self._table_id, config.hand_id)
        to_act = self.live.to_act
        if to_act is None:
            self.wake_at = self._clock.now()  # over already (the owner died before settling): settle it
        else:
            self._arm_turn()
        log.info(
            "hand continued after a takeover",
            table_id=self._table_id,
            hand_id=config.hand_id,
            decisions=taken.decisions,
            to_act=to_act,
        )
        self._shell.notice("HAND_CONTINUED", f"hand {config.hand_id} goes on where it was")

    async def _refresh_room(self) -> None:
        """Re-read the room between hands (rules 11: a change applies from the next hand only)."""
        answer = self._answered("room")
        if answer is None:
            if self._clock.now() - self._room_read_at >= self._t.room_refresh_seconds:
                self._ask("room", self._rooms.get_room(self._shell.room().room_id))
            return
        room, error = answer
        if error is not None:
            log.warning(
                "room not re-read; playing on with the last one", table_id=self._table_id, reason=error.reason
            )
            return
        self._room_read_at = self._clock.now()
        was = self._shell.room()
        if (room.seats, room.variant, room.pool) == (was.seats, was.variant, was.pool):
            self._shell.new_room(room)
            seats = self._shell.seats()
            seats.seating = replace(seats.seating, small_blind=room.small_blind, big_blind=room.big_blind)

    async def _begin_countdown(self) -> None:
        self._answers_in.pop("void", None)  # a commitment voided (`_void_unsealable`): done
        if self.showdown_until is not None:
            if self._clock.now() < self.showdown_until:
                self.wake_at = self.showdown_until
                return
            self.showdown_until = None
        await self.finish_leavers()
        if self.handing_over:
            # The room moves to another shard (services/table/ownership/shard.py): no new hand here; leavers
            # still get their cash-out, so the wake-up comes back like maintenance's.
            self._announce_move()
            self.wake_at = self._clock.now() + MAINTENANCE_RECHECK_SECONDS
            return
        if self._shell.seats().seating.plan_next_hand() is None:
            return
        if self._shell.no_new_hands():
            # Maintenance: the running hand finished; none starts until the switch is off again.
            self.wake_at = self._clock.now() + MAINTENANCE_RECHECK_SECONDS
            return
        await self._refresh_room()
        if self._asking is not None:
            return  # the room's answer brings the countdown back here
        room = self._shell.room()
        if self.countdown is None and self._ahead is not None and self._ahead.done():
            self.countdown = await self._take_ahead()  # answered already: no wait
        elif self.countdown is None and (self._ahead is not None or self._waiting_for("ahead")):
            answer = self._answered("ahead")
            if answer is None:
                # The commitment asked for ahead, once fairness answered and the log marked it.
                task, self._ahead = self._ahead, None
                assert task is not None
                self._ask("ahead", _outcome(task))
                return
            ahead, error = answer
            if error is not None:
                raise error  # the log refused its mark, as the commit made in place would
            self.countdown = ahead
        if self.countdown is not None and self.countdown.terms != self._dealer.terms(room):
            # The room became private (or changed its shuffle) after the commitment was asked for: the
            # hand is committed again on the room's terms; the old commitment is voided, never dealt
            # (off the clock's path: best effort, one left is voided by the table's next owner).
            self._void_unsealable(self.countdown, "the room's terms changed")
            return
        if self.countdown is None:
            answer = self._answered("commit")
            if answer is None:
                # Marked before anyone sees it: if this shard dies now, the next owner voids it.
                self._ask("commit", self._dealer.commit(room))
                return
            committed, error = answer
            if error is not None:
                raise error  # the log refused the mark: fenced, or away (retried)
            self.countdown = committed
            if self.countdown is None:
                self.retry_later()
                return
        self._backoff = self._t.retry_initial_seconds
        self.stage = Stage.COUNTDOWN
        pending = self.countdown
        # Version 3: hashes for the countdown less its seed part, then the seeds (`_close_seed_hashes`);
        # a countdown begun again for a hand whose hash set already closed takes seeds throughout.
        pending.start(self._clock.now(), self._t.countdown_seconds, self._seed_seconds())
        self._arm_countdown()
        self._shell.notice("HAND_COMMITTED", f"next hand {pending.commitment.hand_id} committed")

    def _seed_seconds(self) -> float:
        return seed_seconds(self._t.countdown_seconds, self._t.seed_reveal_seconds)

    # ------------------------------------------------------------------ the next hand's commitment, ahead

    def _commit_ahead(self) -> None:
        """Ask fairness for the next hand's commitment while this one plays (issue 28: the commit off
        the path between two hands). It is marked as the table's next hand once fairness answers (a
        next owner voids it) and stays unpublished until the countdown begins: the players see the
        same commitment notice, at the same point of the table's life, as before."""
        if self._ahead is not None or self.countdown is not None or self.handing_over:
            return
        if self._shell.no_new_hands():
            return
        self._ahead = asyncio.get_running_loop().create_task(
            self._dealer.commit(self._shell.room(), ahead=True), name=f"commit-ahead-{self._table_id}"
        )

    @property
    def ahead_ready(self) -> bool:
        """The commitment asked for ahead has its answer (or there is none to wait for)."""
        return self._ahead is None or self._ahead.done()

    async def _take_ahead(self) -> Countdown | None:
        """The commitment asked for ahead, once fairness answered and the log marked it (awaited if it
        has not yet): None when there was none or fairness refused. A log that refused the mark
        raises here, as the commit made in place does."""
        task, self._ahead = self._ahead, None
        if task is None:
            return None
        return await task

    async def _drop_ahead(self, *, wait: bool) -> None:
        """Forget the commitment asked for ahead; its mark stays, so whoever opens the table next (this
        table's own recovery included) voids it. `wait`: let the request end first (its mark lands, no
        commitment is left unmarked); otherwise it is cancelled (the table stops)."""
        task = self._ahead
        if task is None:
            return
        if not task.done():
            if wait:
                await asyncio.wait({task})
            else:
                await cancel_and_wait(task)
        self._ahead = None
        if not task.cancelled() and task.exception() is not None:
            log.warning(
                "commitment asked ahead failed", table_id=self._table_id, error=repr(task.exception())
            )

    async def close(self) -> None:
        """The table stops: a commitment still asked for is not waited for."""
        await self._drop_ahead(wait=False)

    @property
    def asking(self) -> bool:
        """A call to another service is under way for the stage machine (`_ask`), or a deal's write
        is unsure (the log will say whether the hand is dealt)."""
        return self._asking is not None or self._unsure_deal is not None

    def void_pending(self) -> bool:
        """The table closes for good (CloseTable): every commitment it holds for a next hand, never
        dealt (the countdown's, one asked ahead, one answered and not taken yet), is voided at
        fairness and its mark cleared (best effort: one left is voided by whoever opens the table),
        off the clock's path (`_ask`: the table answers meanwhile). True when there is nothing (left)
        to void; False when the voids were just asked for (the close waits for their answer)."""
        self._answers_in.pop("void", None)  # the voids asked for before: done
        pending: list[Countdown] = []
        if self.countdown is not None:
            pending.append(self.countdown)
            self.countdown = None
        for what in ("commit", "ahead"):
            answer = self._answers_in.pop(what, None)
            if answer is not None and isinstance(answer[0], Countdown):
                pending.append(answer[0])
        task, self._ahead = self._ahead, None
        if not pending and task is None:
            return True
        self._ask("void", self._void_all(pending, task))
        return False

    async def _void_all(self, pending: list[Countdown], ahead: asyncio.Task[Countdown | None] | None) -> None:
        if ahead is not None:
            await asyncio.wait({ahead})
            if (
                not ahead.cancelled()
                and ahead.exception() is None
                and (answered := ahead.result()) is not None
            ):
                pending.append(answered)
        for countdown in pending:
            await self._dealer.void(countdown)

    def _arm_countdown(self) -> None:
        """Wake up when the countdown's running phase ends."""
        ends = self.countdown.phase_ends if self.countdown is not None else None
        self.wake_at = None if ends is None else ends

    def _close_seed_hashes(self, pending: Countdown) -> None:
        """Version 3: the set of seed hashes closes; it is in every view from now on, and only its
        seats may send their seeds, until the seal at the end of the countdown."""
        pending.close_hashes(self._clock.now(), self._seed_seconds())
        self._arm_countdown()
        if not pending.hashes:
            # Nobody waits to send a seed: the views show the empty set from their next update on
            # (a table with no countdown, as the end-to-end runs and benches, pays no broadcast).
            return
        seats = ", ".join(str(public_seat(seat)) for seat in sorted(pending.hashes))
        self._shell.notice(
            "SEED_HASHES_CLOSED",
            f"client-seed hashes of hand {pending.commitment.hand_id} closed (seats: {seats}); send your seeds",
        )

    def _announce_move(self) -> None:
        if not self._move_announced:
            self._move_announced = True
            self._shell.notice("TABLE_MOVING", "the table moves to another server; your seat is kept")

    async def _deal(self) -> None:
        """The countdown's end: the seal, asked of fairness off the clock's path (`_ask`: the table
        answers reads and commands meanwhile), then the deal. The deck is sealed for the players of
        the plan as the seal was asked, and fairness binds the hand to them: a seat change while it
        was out (a sit-down, a leave, a sit-out), or before a retry of a seal whose answer was lost
        (it may have landed), makes it a deck for other players. That commitment is voided (nothing
        was dealt, nothing opens), never sealed again for others (a conflict, and the hand stranded
        sealed), and the next wake-up commits a hand for the seats as they are."""
        if self._unsure_deal is not None:
            await self._settle_unsure_deal()
            return
        pending = self.countdown
        answer = self._answered("seal")
        plan = self._shell.seats().seating.plan_next_hand()
        # The players a seal of this hand was asked for (it may have landed), if one was.
        asked = self._sealed_for
        if pending is None or (asked is not None and asked[0] != pending.commitment.hand_id):
            asked = self._sealed_for = None
        if answer is None:
            if pending is None or plan is None or self._shell.no_new_hands():
                if asked is not None and pending is not None:
                    self._void_unsealable(pending, "the seats changed before the seal was asked again")
                self.stage = Stage.IDLE
                return
            if asked is not None and asked[1] != _players_of(plan):
                self._void_unsealable(pending, "the seats changed before the seal was asked again")
                self.stage = Stage.IDLE
                return
            self._sealed_for = (pending.commitment.hand_id, _players_of(plan))
            self._ask("seal", self._dealer.seal(pending, plan))
            return
        sealed_deck, error = answer
        if error is not None and is_unavailable(error):
            # The seal may have landed (its answer lost): asked again for the same players only.
            self.retry_later()
            return
        self._sealed_for = None
        if error is None and (
            pending is None
            or plan is None
            or self._shell.no_new_hands()
            or self.handing_over
            or asked is None
            or _players_of(plan) != asked[1]
        ):
            if pending is not None:
                self._void_unsealable(pending, "the seats changed during the seal")
            self.stage = Stage.IDLE
            return
        try:
            if error is not None:
                raise error
            deck = sealed_deck
        except DomainError as error:
            if error.reason == "HAND_ALREADY_REVEALED":
                # Ended elsewhere: the room's next owner voided the commitment this table marked (a
                # stale owner after a partition heals; its next fenced write fences it). The table
                # commits a fresh hand; one that met this at every seat would be reusing old request
                # ids (the bug test_table_reopen keeps out).
                log.warning(
                    "seal refused: the commitment was ended elsewhere; dropped",
                    table_id=self._table_id,
                    reason=error.reason,
                )
                hand_trace.dropped(self._table_id, error.reason)
                self.countdown = None
            else:
                log.error(
                    "seal refused; the commitment is voided", table_id=self._table_id, reason=error.reason
                )
                if pending is not None:
                    self._void_unsealable(pending, error.reason)
                self.countdown = None
            self.stage = Stage.IDLE
            return
        assert pending is not None
        assert plan is not None
        room = self._shell.room()
        # The core deals; the hand's log has its first entries before anyone hears of it (dealing.py).
        step = self._dealer.dealt(plan, pending.commitment, deck, room, self._shell.seats().players)
        try:
            await self._dealer.write_deal(room, step)
        except DomainError as unwritten:
            if not is_unavailable(unwritten):
                raise
            # The deal's write was refused, or its answer lost (the log may hold the hand as live):
            # the log says which (`_settle_unsure_deal`). It had been dropped, its sealed deck left
            # sealed for ever (the whole-table simulator's end check found them).
            self._unsure_deal = (pending, plan, step)
            await self._settle_unsure_deal()
            return
        self.countdown = None
        self._sealed_for = None
        self._begin_hand(plan, step)

    @property
    def deal_unsure(self) -> bool:
        """A deal's write is unsure: the seats hold still until the log says (`settle_deal`)."""
        return self._unsure_deal is not None

    async def settle_deal(self) -> None:
        """Before anything changes the seats: a deal whose write is unsure is settled by reading the
        log back (the hand plays on as dealt, or is voided); while the log cannot say, UNAVAILABLE
        (nothing changed; the caller retries). A leave or a sit-down in that window had cashed out,
        or seated outside the hand, a player the hand then dealt (an outside reviewer's case)."""
        if self._unsure_deal is None:
            return
        await self._settle_unsure_deal()
        if self._unsure_deal is not None:
            raise Unavailable(
                "UNAVAILABLE", "the table is waiting for its hand log; retry", {"dependency": "log"}
            )

    async def _settle_unsure_deal(self) -> None:
        """A deal whose write is unsure: the log read back. It holds the hand as live: the hand goes
        on as dealt (whoever opens the table next would continue it). It does not: nobody heard of the
        hand, which is voided (its next-hand mark stands until then). The log cannot say: asked again
        at the next wake-up, the countdown kept (nothing else is decided meanwhile)."""
        assert self._unsure_deal is not None
        pending, plan, step = self._unsure_deal
        try:
            live = await self._log.live_hand(self._table_id)
        except DomainError as error:
            if not is_unavailable(error):
                raise
            self.retry_later()
            return
        self._unsure_deal = None
        if live == pending.commitment.hand_id:
            log.info("a deal whose log answer was lost is in the log", table_id=self._table_id)
            self.countdown = None
            self._sealed_for = None
            self._begin_hand(plan, step)
            return
        self._void_unsealable(pending, "its deal was not written")
        self.stage = Stage.IDLE

    def _void_unsealable(self, pending: Countdown, why: str) -> None:
        """The countdown's commitment will not be dealt (sealed, or maybe sealed, for other players,
        or asked on the room's old terms): voided at fairness off the clock's path, asked until
        fairness answers (dealing.py). The stage machine waits for it (`_ask`) before it commits the
        next hand: the commitment's mark stays the table's next hand until then, so a shard that
        dies meanwhile leaves the void to the next owner (a newer mark would strand it sealed)."""
        hand_id = pending.commitment.hand_id
        log.info("hand not dealt; voided", table_id=self._table_id, hand_id=hand_id, why=why)
        hand_trace.dropped(self._table_id, "NOT_DEALT")
        self._ask("void", self._dealer.void(pending, until_answered=True))
        self.countdown = None
        self._sealed_for = None

    def _begin_hand(self, plan: HandPlan, step: core.Step) -> None:
        """The hand dealt (its log has the deal): it plays from now on."""
        room = self._shell.room()
        live = step.state
        for seat in live.config.seats:
            if self._shell.seats().players[seat.seat].presence.disconnected:
                live = core.feed(live, core.Presence(seat.seat, True, live.started_at)).state
        self.live = live
        self._shell.seats().seating = plan.table_after
        self.stage = Stage.PLAYING
        self._backoff = self._t.retry_initial_seconds
        table_metrics.hand_started(room.room_id, room.variant.value)
        hand_trace.playing(self._table_id, live.config.hand_id)
        self._arm_turn()
        self._shell.publish(step.events)
        self._commit_ahead()

    async def known(self) -> None:
        """Before anything is decided for the running hand: an append whose answer was lost (the log
        may hold it or not) is settled by reading the log back; a log that cannot say raises
        UNAVAILABLE (nothing is decided meanwhile)."""
        await self._resolve()

    async def _resolve(self) -> dict[int, list[table_pb2.TableEvent]] | None:
        """`known`; the messages of the step it found in the log and played, or None."""
        if self._unsure is None:
            return None
        live, step = self._unsure
        if self.live is not live:
            self._unsure = None
            return None
        held = await self._log.read(live.hand_id)
        self._unsure = None
        if not _ends_with(held, step.entries):
            return None
        log.info("a decision whose log answer was lost is in the log", table_id=self._table_id)
        return self._apply(step)

    async def play(self, step: core.Step) -> dict[int, list[table_pb2.TableEvent]]:
        """A step of the core that changed the hand: its entry in the log first (durable before anyone
        hears of it: a shard that takes over replays the log; a refused append leaves the hand, the
        clock and the banks as they were, and a retry plays it), then the new state, the seat's time
        bank, the turn's clock and the events. An append whose answer was lost (written or not: Redis
        ran the script and its reply timed out) is settled by reading the log back (`known`) before
        the hand goes on: the log never holds a decision the table did not take, nor two for a turn
        (the whole-table simulator found a timeout logged after a lost call, and the hand voided at
        the next owner)."""
        live = self.live
        assert live is not None
        await self.known()
        if self.live is not live:
            raise Unavailable("UNAVAILABLE", "the hand moved on; decide again")
        try:
            await self._log.append(self._shell.room().room_id, live.hand_id, list(step.entries))
        except DomainError as error:
            if not is_unavailable(error):
                raise
            self._unsure = (live, step)
            played = await self._resolve()
            if played is None:
                raise  # not in the log: nothing changed, a retry plays it
            return played  # it was: played
        return self._apply(step)

    def _apply(self, step: core.Step) -> dict[int, list[table_pb2.TableEvent]]:
        """The step the log holds: the new hand, the seat's bank, the turn's clock, the events."""
        # Every decision the log now holds is an event of the hand's play span, whoever took it.
        hand_trace.actions(self._table_id, step.events)
        self.live = step.state
        if step.bank is not None and (player := self._shell.seats().players.get(step.bank[0])) is not None:
            table_metrics.time_bank_spent(player.time_bank - step.bank[1])
            self._shell.feed_seats(table_core.BankLeft(*step.bank))
        self._arm_turn()
        return self._shell.publish(step.events)

    async def _expire_turn(self) -> None:
        live = self.live
        if live is None:
            return
        await self.known()
        live = self.live
        if live is None:
            return
        # Rules 9: past the deadline the core checks when a check is allowed, otherwise folds.
        step = core.feed(live, core.Tick(self._clock.now()))
        if not step.entries:
            self._arm_turn()  # not yet
            return
        await self.play(step)
        table_metrics.turn_timed_out()

    async def _settle(self) -> None:
        live = self.live
        assert live is not None
        answer = self._answered("settle")
        if answer is None:
            # The core's effect: the nets by seat session, the rake and the record (ids: the hand
            # id), sent outside the actor; the answer comes back here.
            self._ask("settle", self._settlement.send(live, core.settlement(live), self._shell.room()))
            return
        _, error = answer
        if error is not None:
            self._shell.fence_on(error)
            if self._shell.fenced():
                return
            if not is_unavailable(error):
                await self._refused_for_good(live, error)
                return
            # No next hand before the cashier acknowledged this one; the retry sends the same hand id.
            step = core.feed(live, core.SettleAnswer(live.hand_id, core.Outcome.UNAVAILABLE))
            self.live = step.state
            if "TABLE_PAUSED" in step.notices:
                self.paused = True
                self._shell.notice("TABLE_PAUSED", "waiting for the cashier to settle the hand")
            log.warning(
                "settlement not acknowledged; retrying",
                table_id=self._table_id,
                hand_id=live.hand_id,
                reason=error.reason,
            )
            self.retry_later()
            return
        live, finished = self._settlement.settled(live, self._shell.room())
        result = live.hand.result
        assert result is not None
        self.paused = False
        self._backoff = self._t.retry_initial_seconds
        self.hands_settled += 1
        self.recent.append((self._clock.now(), sum(p.amount + p.rake for p in result.pots)))
        stacks = tuple((r.seat, r.final_stack) for r in result.results)
        self._shell.feed_seats(table_core.hand_result(self._shell.seats().seating, stacks))
        self.last = live
        self.live = None
        self.stage = Stage.IDLE
        self._after_hand(AfterHand(live.hand_id, finished.record, self._table_id, finished.seen))
        # The hand's result is in the seats' log before the hand's log and live mark go: a shard that
        # died in between would leave its next owner no trace of the blinds' move (the whole-table
        # simulator found it). A log that is away keeps the mark: the next owner finds the hand
        # settled and takes its result from the hand's log (recovery.py, `Found.ended`); the next
        # hand's live mark replaces it otherwise.
        await self._shell.log_seats()
        if not self._shell.seats_unlogged():
            await self._settlement.forget(live.hand_id)
        self._shell.notice("HAND_SETTLED", f"hand {live.hand_id} settled")
        self._count_hand(live)
        if self._t.showdown_seconds > 0 and any(isinstance(e, CardsShown) for e in live.hand.events):
            # The showdown stays on the table (issue 36): the views are this hand's (board, the cards
            # shown, the awards) until the hold is over; then the countdown. The players who leave
            # (those who lost every chip at it, too) keep their seats until then, so they see it as
            # well; their cash-outs begin with the countdown (`_begin_countdown`).
            self.showdown_until = self._clock.now() + self._t.showdown_seconds
            self.wake_at = self.showdown_until
            return
        await self.finish_leavers()
        if self.ahead_ready and self.wake_at is None:
            # The next hand is committed already: its countdown begins in this step, so the players'
            # streams carry the settlement and the next commitment in one message.
            await self._begin_countdown()

    async def _refused_for_good(self, live: core.HandState, error: DomainError) -> None:
        """The cashier refuses the hand's settlement for good (settlement.py): the hand is voided
        unless the cashier settled it after all, and the seats are read again from the cashier."""
        leavers = [player.session_id for player in self._shell.seats().players.values() if player.leaving]
        await self._settlement.refused_for_good(live, error, self._shell.room(), leavers)
        self.live = None
        self.last = None
        self.paused = False
        room = self._shell.room()
        seats = self._shell.seats()
        seats.players = {}
        seats.seating = Seating.empty(room.seats, room.small_blind, room.big_blind)
        self._answers_in.clear()  # a commitment among them is voided by the recovery
        self.stage = Stage.RECOVERING
        self.wake_at = self._clock.now()

    async def finish_leavers(self) -> None:
        """Cash out players who left during a hand, and players with no chips left."""
        if self.stage not in (Stage.IDLE, Stage.COUNTDOWN):
            return
        for owed in table_core.leavers(self._shell.seats()):
            # Outside the actor (the clock never waits for the cashier); the seat is freed when the
            # cashier answers, and a failure brings the cycle back here later.
            self._shell.cash_out(owed)


async def _outcome(task: asyncio.Task[Countdown | None]) -> Countdown | None:
    return await task


def _players_of(plan: HandPlan) -> tuple[tuple[int, str], ...]:
    """Who a plan deals in, by seat: what a sealed deck is for."""
    return tuple((s.seat, s.player_id) for s in plan.seats)


def _ends_with(held: Sequence[dict[str, Any]], entries: Sequence[dict[str, Any]]) -> bool:
    """The log `held` ends with `entries` (compared as the log stores them: JSON values)."""
    if not entries or len(held) < len(entries):
        return False
    tail = held[len(held) - len(entries) :]
    same: bool = json.loads(json.dumps(list(tail))) == json.loads(json.dumps(list(entries)))
    return same


def first_answer(live: core.HandState, reply: core.Replied) -> table_pb2.ActResponse:
    """The answer of a decision already taken, for its retry: its first event as its seat saw it."""
    (raw,) = redact_for([live.hand.events[reply.mark]], reply.seat)
    where, body = event_body(raw, reply.seat)
    return table_pb2.ActResponse(event=table_pb2.TableEvent(seat=where, **body))  # type: ignore[arg-type]
