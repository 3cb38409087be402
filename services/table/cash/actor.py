"""One live table: an asyncio task (an actor) that owns the table's state and runs its hands.

Every change goes through the bounded command queue (`call`): RPC handlers enqueue a command and
await its answer; the actor runs one command at a time, so no lock is shared or needed. Between
commands the actor wakes up for its own timers: the start of the countdown (a fairness commitment is
published before any card), the seal and the deal, the action clock of the player to act (rules 9),
and the settlement retries while the cashier is down.

A hand, start to end (docs/table.md): commit -> countdown (client seeds) -> seal -> deck -> engine
runs the hand, each accepted decision appended to the hand's event log before anyone is answered ->
settlement through the cashier (one linked batch, id = hand id), retried with the same id until it
is acknowledged, no next hand before -> deferred cash-outs -> reveal and hand record, queued.

The actor is the shell: it owns the command queue and its loop and the timers, feeds the pure cores
(core.py the running hand, table_core.py the seats, countdown.py the countdown), appends their
inputs to the fenced logs before anyone hears of their effects, runs the effects and fans the events
out. The hand's lifecycle is hand_cycle.py (the stage machine between and during hands, its wake-ups
and the turn clock; it owns the stage, the running hand and the countdown, and reaches the actor
through a narrow `Shell`), which runs its steps through recovery.py (opening the table, a hand taken
over), dealing.py (commit, seal, deal) and settlement.py (the cashier's settlement of a finished
hand). The actor's other collaborators: table_streams.py (the players' streams and the spectators'
delayed feed) and table_state.py (the state every view is cut from).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from poker.table.v1 import table_pb2
from poker_engine.errors import SeatingError
from poker_engine.events import Event
from poker_engine.seating import TableState as Seating
from service_runtime.errors import (
    AlreadyExists,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    Unavailable,
)
from service_runtime.structured_logging import get_logger
from service_runtime.table_directory import MaintenanceSwitches, TableFigures
from service_runtime.tasks import cancel_and_wait
from services.table import hand_trace
from services.table import metrics as table_metrics
from services.table.cash import core, table_core
from services.table.cash.countdown import Countdown
from services.table.cash.hand_cycle import HandCycle, Shell
from services.table.cash.hand_cycle import first_answer as _first_answer
from services.table.cash.presence import PresenceRules
from services.table.cash.settlement import AfterHand
from services.table.cash.table_core import PlayerSeat
from services.table.cash.table_state import (
    Parts,
    Stage,
    lobby_figures,
    players_by_state,
    seat_status,
    table_state,
    waiting_view,
)
from services.table.cash.views import TableState, public_seat, seat_handle, table_view
from services.table.idempotency import AnswerMemory
from services.table.log.event_log import HandEventLog
from services.table.log.record_outbox import MemoryOutbox, RecordOutbox
from services.table.ports.clock import WALL_CLOCK, Clock
from services.table.ports.dependencies import CashierClient, FairnessClient, SeatSession
from services.table.ports.library_errors import engine_refusal
from services.table.ports.remote import is_unavailable
from services.table.ports.rooms import Room, RoomSource, SeatGrant
from services.table.streams.chat import ChatGuard, check_sticker, check_text
from services.table.streams.table_streams import (
    Spectator,
    TableStreams,
    Watcher,
    waiting_key,
)
from services.table.timings import Timings

T = TypeVar("T")
log = get_logger("table.actor")

# The seats' log is rewritten as a snapshot of the seats (table_core.Snapshot, one fenced write) when
# it would hold more entries than this, and at the table's first write after it opens: a table that
# runs for months replays a few hundred entries at a takeover, not every input it ever took.
SEATS_LOG_TRIM_AT = 256


@dataclass(frozen=True, slots=True)
class SitDownRequest:
    player_id: str
    request_id: str
    seat: int  # public (1-based); 0: the first free seat
    buy_in: int
    wait_for_big_blind: bool
    signals: tuple[str, str]  # (device, network) of the caller's token
    # The caller's token's name suggestion, for a player the lobby has no display name for yet (not
    # part of the request: a retry with a renewed token is the same request).
    suggested_name: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.player_id, "SitDown", self.request_id)

    @property
    def fingerprint(self) -> tuple[int, int, bool]:
        return (self.seat, self.buy_in, self.wait_for_big_blind)


class TableActor:
    def __init__(
        self,
        table_id: str,
        room: Room,
        *,
        cashier: CashierClient,
        fairness: FairnessClient,
        event_log: HandEventLog,
        after_hand: Callable[[AfterHand], None],
        rooms: RoomSource,
        timings: Timings,
        maintenance: Callable[[str], MaintenanceSwitches] = lambda room_id: MaintenanceSwitches(),
        chat: ChatGuard | None = None,
        outbox: RecordOutbox | None = None,
        clock: Clock = WALL_CLOCK,
    ) -> None:
        self.table_id = table_id
        # Every time, timer and fresh id of this table (ports/clock.py): the wall's in production,
        # a simulated one in tests and the table simulator.
        self._clock = clock
        self.room = room
        self._cashier = cashier
        self._fairness = fairness
        self._log = event_log
        self._rooms = rooms
        self._maintenance = maintenance
        self._t = timings
        self._queue: asyncio.Queue[tuple[Callable[[], Awaitable[Any]], asyncio.Future[Any]]] = asyncio.Queue(
            maxsize=timings.command_queue_size
        )
        self._task: asyncio.Task[None] | None = None
        # Set when the hand log refused an append (another shard owns the room now): this copy of
        # the table is stale and answers nothing but SHARD_NOT_OWNER from then on.
        self._fenced = False
        # The room's fencing token when the shard opened this table (the shard compares it with the
        # registry's each ownership round: another token means the room moved meanwhile).
        self.fencing_token = 0
        # Set when the shard closed this (extra, empty) table: commands get TABLE_CLOSED (retry).
        self._closed = False
        self._stopping = False  # stop() began: no further step
        # Why the table's open streams ended when it stopped (see STREAM_CLOSED).
        self.closed_reason = ""
        self._empty_since: float | None = None
        self._presence_rules = PresenceRules(
            reserve_seconds=timings.seat_reserve_seconds,
            sit_out_seconds=timings.sit_out_seconds,
            timeout_hands=timings.timeout_hands_to_sit_out,
        )
        # The seats, presence and kept time banks: the pure core of the seats (table_core.py).
        self._rules = table_core.Rules(
            table_id=table_id,
            seats=room.seats,
            time_bank_seconds=timings.time_bank_seconds,
            presence=self._presence_rules,
            keep_seconds=timings.time_bank_keep_seconds,
        )
        self._seats = table_core.Seats.empty(self._rules, room.small_blind, room.big_blind)
        # The seats' inputs the core took and the seats' log does not hold yet (appended, fenced, at
        # the end of the command or step that fed them, before anybody hears of it).
        self._seats_unlogged: list[dict[str, Any]] = []
        # How many entries the seats' log holds; None until this table wrote it (its first write is a
        # snapshot: whatever a last owner wrote is replaced).
        self._seats_in_log: int | None = None
        # The players' streams, the step's events not yet sent and the spectators' delay line.
        self._streams = TableStreams(
            queue_size=timings.watch_queue_size,
            max_streams_per_player=timings.max_streams_per_player,
            max_spectators=timings.max_spectators,
            spectator_delay_seconds=timings.spectator_delay_seconds,
            seat_of=self._seat_of,
            waiting_view=self._waiting_view,
            clock=clock,
        )
        self._answers = AnswerMemory(clock=clock.now)
        # The calls made outside the actor for seats (sit-downs, leaves, cash-outs), by key.
        self._seat_calls: dict[Hashable, asyncio.Task[Any]] = {}
        self._seat_call_fingerprints: dict[Hashable, Hashable] = {}
        # The hand's cycle (hand_cycle.py): the stage, the running hand, the countdown, the wake-ups;
        # it reaches the room, the seats' core, the streams and the fence through the shell's calls.
        shell = Shell(
            room=lambda: self.room,
            new_room=self._set_room,
            seats=lambda: self._seats,
            seats_unlogged=lambda: self._seats_unlogged,
            reopened=self._reopened,
            feed_seats=self._feed_seats,
            log_seats=self._log_seats,
            publish=self._publish,
            notice=self._publish_notice,
            fence_on=self._fence_on,
            fenced=lambda: self._fenced,
            no_new_hands=self._no_new_hands,
            cash_out=self._cash_out,
            off_clock=self._off_clock,
            inside=self._inside,
        )
        self._cycle = HandCycle(
            table_id=table_id,
            timings=timings,
            rules=self._rules,
            shell=shell,
            cashier=cashier,
            fairness=fairness,
            event_log=event_log,
            rooms=rooms,
            after_hand=after_hand,
            outbox=outbox or MemoryOutbox(),
            answers=self._answers,
            clock=clock,
        )
        self._chat = chat or ChatGuard()
        table_metrics.room_opened(room.room_id, room.variant.value)

    # ------------------------------------------------------------------ the seats' core

    @property
    def _players(self) -> dict[int, PlayerSeat]:
        return self._seats.players

    @_players.setter
    def _players(self, players: dict[int, PlayerSeat]) -> None:
        self._seats.players = players

    @property
    def _seating(self) -> Seating:
        return self._seats.seating

    @_seating.setter
    def _seating(self, seating: Seating) -> None:
        self._seats.seating = seating

    def _feed_seats(self, given: table_core.Input, *, in_log: bool = False) -> table_core.Step:
        """One input to the seats' core: its new state is kept, its notices published and the
        presence changes told to the running hand's core; its effects are the caller's to run.
        `in_log`: the seats' log has the input already (`_feed_seats_logged_first`)."""
        step = table_core.feed(self._seats, given, self._rules)
        # Into the seats' log when it changed the seats (a spectator's stream, a tick with nothing
        # due, change nothing: a replay without them is the same).
        # A hand's result always (it carries the button and debts the deal set outside the log).
        changed = step.state.durable() != self._seats.durable() or isinstance(given, table_core.HandResult)
        if not in_log and table_core.logged(given) and changed:
            self._seats_unlogged.append(table_core.to_entry(given))
        self._seats = step.state
        for notice_ in step.notices:
            self._publish_notice(notice_.code, notice_.text, seat=notice_.seat)
        for seat, away in step.presence:
            self._feed_presence(seat, away=away)
        return step

    async def _log_seats(self) -> None:
        """Append the seats' inputs taken since the last append to the fenced seats' log (docs/table.md
        "The hand's log"). A log that is away keeps them for the next step; a shard that lost the room
        is fenced. Never raises: the inputs are taken, and a next owner reconciles the seats with the
        cashier's open sessions anyway."""
        if not self._seats_unlogged or self._fenced:
            return
        try:
            await self._write_seats(self._seats)
        except DomainError as error:
            self._fence_on(error)
            if not self._fenced:
                log.warning("seats' log append failed; kept", table_id=self.table_id, reason=error.reason)

    async def _write_seats(self, after: table_core.Seats, *more: dict[str, Any]) -> None:
        """The inputs not logged yet and `more` into the seats' log, or, when the log would grow past
        `SEATS_LOG_TRIM_AT` (or this table has not written it yet), the log rewritten as the snapshot
        of `after` (the seats once they are all taken). Raises the log's refusal (nothing written)."""
        if self._fenced:
            raise FailedPrecondition("SHARD_NOT_OWNER", "another shard serves this table now")
        taken = len(self._seats_unlogged)
        entries = [*self._seats_unlogged, *more]
        if self._seats_in_log is None or self._seats_in_log + len(entries) > SEATS_LOG_TRIM_AT:
            snapshot = table_core.to_entry(table_core.snapshot_of(after))
            await self._log.rewrite_seats(self.room.room_id, self.table_id, [snapshot])
            self._seats_in_log = 1
        else:
            await self._log.append_seats(self.room.room_id, self.table_id, entries)
            self._seats_in_log += len(entries)
        del self._seats_unlogged[:taken]

    async def _feed_seats_logged_first(self, given: table_core.Input) -> table_core.Step:
        """A player's own seats' command: into the seats' log before it takes effect, so a log that
        is away refuses it (UNAVAILABLE, not remembered: the retry does it) and nothing changed.
        The core's refusals raise first, as for `_feed_seats`."""
        step = table_core.feed(self._seats, given, self._rules)
        if step.state.durable() == self._seats.durable():
            return self._feed_seats(given)
        await self._write_seats(step.state, table_core.to_entry(given))
        return self._feed_seats(given, in_log=True)

    # ------------------------------------------------------------------ lifecycle

    @property
    def fenced(self) -> bool:
        return self._fenced

    @property
    def closed(self) -> bool:
        """Takes no command any more: closed, fenced, stopping or its task ended."""
        return self._closed or self._fenced or self._stopping or self._task is None or self._task.done()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"table-{self.table_id}")
            self._task.add_done_callback(self._task_ended)

    def _task_ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("table task failed", table_id=self.table_id, exc_info=task.exception())

    def hand_over(self) -> None:
        """Start no new hand from now on: the shard moves the room to another shard once this table
        is between hands (`between_hands`). A hand in play, and a countdown already published (its
        hand id and commitment are public), are played to their end."""
        self._cycle.handing_over = True

    def keep(self) -> None:
        """The room stays here after all (the shard it was to go to is gone): hands start again."""
        self._cycle.keep()

    @property
    def between_hands(self) -> bool:
        """No hand in play, none about to be dealt, nobody waiting for a cash-out: the table can stop
        without voiding anything (its seats stay open in the cashier for the next owner)."""
        return (
            self._stage in (Stage.IDLE, Stage.RECOVERING)
            and self._live is None
            and not any(p.leaving for p in self._players.values())
            and not self._seats.reserved
        )

    async def close_if_between_hands(self) -> bool:
        """Inside the actor (after any command in flight): close the table for its handover if it
        is between hands; commands queued behind get UNAVAILABLE `TABLE_CLOSED` and are retried."""
        if not self.between_hands:
            return False
        self._closed = True
        return True

    async def stop(self) -> None:
        # Set before the cancel: should the cancel be lost (see service_runtime.tasks), the loop still
        # takes no further step, and cancel_and_wait cancels again until the task has ended.
        self._stopping = True
        if self._task is not None:
            # A task that had failed was logged when it ended; stopping the table must not fail too.
            await cancel_and_wait(self._task)
            self._task = None
        await self._cycle.close()
        for task in list(self._seat_calls.values()):
            await cancel_and_wait(task)
        # Commands still queued get an answer: a caller never waits on a stopped table.
        while not self._queue.empty():
            _, future = self._queue.get_nowait()
            if not future.done():
                future.set_exception(Unavailable("UNAVAILABLE", "the table is closing; retry"))
        # Open streams end too: their clients ask the lobby again (the table reopens where it lives).
        self.closed_reason = "SHARD_NOT_OWNER" if self._fenced else "TABLE_CLOSED"
        # A hand still waiting here (for its settlement, its deal) goes on where the table opens next:
        # this process waits for it no more, and its trace ends here.
        table_metrics.settlement_dropped(self.table_id)
        hand_trace.closed(self.table_id, self.closed_reason)
        self._streams.close_all()

    async def call(self, command: Callable[[], Awaitable[T]]) -> T:
        """Run `command` inside the actor and return its answer (the only way in)."""
        if asyncio.current_task() is self._task:
            # A command waiting for its own queue would wait for ever: a bug, said at once.
            raise RuntimeError(
                "TableActor.call from inside the actor (SitDown and LeaveTable are called outside)"
            )
        if self._fenced:
            raise FailedPrecondition("SHARD_NOT_OWNER", "another shard serves this table now")
        if self._closed:
            raise Unavailable("TABLE_CLOSED", "the table was closed; retry to reach its room's open table")
        if self._stopping or self._task is None or self._task.done():
            raise Unavailable("UNAVAILABLE", "the table is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        try:
            async with self._clock.timeout_at(self._now() + self._t.enqueue_timeout_seconds):
                await self._queue.put((command, future))
        except TimeoutError as error:
            raise Unavailable("UNAVAILABLE", "the table is busy; retry") from error
        return await future

    async def _run(self) -> None:
        # The spectators' first view: the table as it opens (no seat yet), which is also what it was
        # `delay` ago, so a spectator who comes early gets a start that is not younger than the delay.
        self._streams.start_feed(self._state(as_of_offset=-self._streams.feed.delay))
        while not self._stopping:
            # Timers first, every turn of the loop: a flood of commands (a reconnect storm, say) can
            # never starve the action clock, the seat reserves or the spectators' delay line.
            if await self._fire_due_timers():
                await self._guarded(self._advance)
                continue
            deadline = self._next_deadline()
            item = None
            try:
                async with self._clock.timeout_at(deadline):
                    item = await self._queue.get()
            except TimeoutError:
                continue
            if item is not None and self._fenced:
                if not item[1].done():
                    item[1].set_exception(
                        FailedPrecondition("SHARD_NOT_OWNER", "another shard serves this table now")
                    )
            elif item is not None and self._closed:
                if not item[1].done():
                    item[1].set_exception(Unavailable("TABLE_CLOSED", "the table was closed; retry"))
            elif item is not None:
                command, future = item
                try:
                    try:
                        answer = await command()
                    finally:
                        # The seats' inputs are logged, then the caller's own stream has the events
                        # first, before the caller hears the answer.
                        await self._log_seats()
                        self._flush()
                except DomainError as error:
                    self._fence_on(error)
                    if not future.done():
                        future.set_exception(error)
                except asyncio.CancelledError:
                    if not future.done():
                        future.set_exception(Unavailable("UNAVAILABLE", "the table is closing"))
                    raise
                except Exception as error:
                    log.exception("table command failed", table_id=self.table_id)
                    if not future.done():
                        future.set_exception(error)
                else:
                    if not future.done():
                        future.set_result(answer)
            await self._guarded(self._advance)

    def _next_deadline(self) -> float | None:
        if self._fenced:
            return None
        times = [
            t for t in (self._cycle.wake_at, self._presence_due(), self._streams.feed_due()) if t is not None
        ]
        return min(times) if times else None

    async def _fire_due_timers(self) -> bool:
        if self._fenced:
            return False
        fired = False
        now = self._now()
        due = self._streams.feed_due()
        if due is not None and now >= due:
            self._streams.release_feed()
            fired = True
        due = self._presence_due()
        if due is not None and now >= due:
            await self._guarded(self._expire_presence)
            fired = True
        if self._cycle.wake_at is not None and self._now() >= self._cycle.wake_at:
            self._cycle.wake_at = None
            await self._guarded(self._cycle.on_wake)
            fired = True
        return fired

    def _fence_on(self, error: DomainError) -> None:
        if error.reason == "SHARD_NOT_OWNER" and not self._fenced:
            self._fenced = True
            self._cycle.wake_at = None
            log.warning("table fenced: another shard owns the room", table_id=self.table_id)

    async def _guarded(self, step: Callable[[], Awaitable[None]]) -> None:
        if self._stopping:
            return
        if self._fenced:
            self._cycle.wake_at = None
            return
        try:
            try:
                await step()
            finally:
                await self._log_seats()
                self._flush()
        except asyncio.CancelledError:
            raise
        except DomainError as error:
            self._fence_on(error)
            if not self._fenced:
                log.warning("table step refused", table_id=self.table_id, reason=error.reason)
                self._cycle.retry_later()
        except Exception:
            log.exception("table step failed", table_id=self.table_id, stage=self._stage.value)
            self._cycle.retry_later()

    def _now(self) -> float:
        return self._clock.now()

    # ------------------------------------------------------------------ presence (rules 9, 13)

    def _presence_due(self) -> float | None:
        """The time the next seat expires (none while a deal's write is unsure: the seats hold still
        until the log says; the cycle's own wake-up asks it again)."""
        if self._cycle.deal_unsure:
            return None
        return table_core.due(self._seats, self._rules)

    def _feed_presence(self, seat: int, *, away: bool) -> None:
        """The seats' core saw the player of `seat` go away or come back: the hand's cycle tells the
        running hand (rules 13: the turn's end moves)."""
        self._cycle.presence(seat, away=away)

    def _stream_opened(self, player_id: str) -> None:
        step = self._feed_seats(table_core.Reconnect(player_id))
        if step.presence:
            log.info("player reconnected", table_id=self.table_id, player_id=player_id)
            table_metrics.player_reconnected()

    def _stream_closed(self, player_id: str) -> None:
        if self._streams.watching(player_id):
            return  # another stream of theirs is still open: still present
        step = self._feed_seats(table_core.Disconnect(player_id, self._now()))
        if step.presence:
            log.info("player disconnected", table_id=self.table_id, player_id=player_id)

    async def _expire_presence(self) -> None:
        """Seats past the reserve or the sit-out limit: removed now between hands, else once the
        running hand is settled, and cashed out through the cashier."""
        step = self._feed_seats(table_core.Tick(self._now()))
        for expired in step.notices:
            player_id = self._players[expired.seat].player_id
            log.info("seat expired", table_id=self.table_id, player_id=player_id, why=expired.code)
            table_metrics.seat_expired(expired.code)
        await self._cycle.finish_leavers()

    # ------------------------------------------------------------------ the hand's cycle (hand_cycle.py)

    @property
    def _stage(self) -> Stage:
        return self._cycle.stage

    @property
    def _live(self) -> core.HandState | None:
        return self._cycle.live

    @property
    def _next(self) -> Countdown | None:
        return self._cycle.countdown

    @property
    def _recent(self) -> collections.deque[tuple[float, int]]:
        return self._cycle.recent

    @property
    def hands_settled(self) -> int:
        return self._cycle.hands_settled

    def _no_new_hands(self) -> bool:
        return self._closing or self._maintenance(self.room.room_id).no_new_hands

    async def _advance(self) -> None:
        """After every command and wake-up: the streams that ended, then the cycle's transitions."""
        while self._streams.closed:
            self._stream_closed(self._streams.closed.popleft())
        self._cycle.advance()
        if self._closing:
            self._stand_everyone_up()

    # ------------------------------------------------------------------ closing (operations)

    @property
    def _closing(self) -> bool:
        """CloseTable asked (the seats' state, in their log: a next owner closes the table too)."""
        return self._seats.closing

    async def close_after_hand(self, request_id: str = "") -> table_pb2.CloseTableResponse:
        """Inside the actor (the CloseTable RPC): no new hand from now on; once no hand holds them,
        every seat is cashed out, and the table closes (`close_if_done`, the shard's next round).
        Answered once the close is in the seats' log (a log that is away: UNAVAILABLE, nothing
        changed), so a shard that dies before it is done leaves it to the room's next owner. The log
        keeps the closes' `request_id`s and answers (the last 16): a retry, even at the table opened
        again after it closed (the shard's memory of the id gone with a restart), gets its first
        answer and closes nothing."""
        self._require_open()
        for asked, running, players in self._seats.closes:
            if request_id and asked == request_id:
                return table_pb2.CloseTableResponse(
                    table_id=self.table_id, hand_running=running, players=players
                )
        response = table_pb2.CloseTableResponse(
            table_id=self.table_id, hand_running=self._live is not None, players=len(self._players)
        )
        closing = self._closing
        if request_id or not closing:
            # Closing already: a new id is remembered all the same (its retry, later, closes nothing).
            await self._feed_seats_logged_first(
                table_core.CloseAfterHand(request_id, response.hand_running, response.players)
            )
        if not closing:
            log.info("table closing after its hand", table_id=self.table_id, players=len(self._players))
            self._publish_notice(
                "TABLE_CLOSING", "this table closes after the hand; your chips go back to your wallet"
            )
            self._stand_everyone_up()
        return response

    def _stand_everyone_up(self) -> None:
        """A closing table between hands: every seated player leaves, cashed out outside the actor."""
        if (
            self._live is not None
            or self._stage not in (Stage.IDLE, Stage.COUNTDOWN)
            or self._cycle.deal_unsure
        ):
            return
        for player in list(self._players.values()):
            if player.leaving:
                continue
            step = self._feed_seats(table_core.Leave(player.player_id, in_hand=False))
            for effect in step.effects:
                if isinstance(effect, table_core.CashOut):
                    self._cash_out(effect)

    @property
    def closing(self) -> bool:
        return self._closing

    # ------------------------------------------------------------------ the shard's view (ownership/table.py)

    @property
    def has_seat_sessions(self) -> bool:
        return True

    async def quiet_for_handover(self) -> bool:
        try:
            return await self.call(self.close_if_between_hands)
        except DomainError:
            return self.closed  # closed already (an earlier round), fenced or ended

    def takes_part(self, player_id: str) -> bool:
        return self.seats_player(player_id)

    def holds_own_stream(self, player_id: str) -> bool:
        return self.seats_player(player_id)

    async def close_if_done(self, on_close: Callable[[], None]) -> bool:
        """Inside the actor: a closing table whose seats are all cashed out closes now (`on_close`
        runs before any later command)."""
        done = (
            self._closing
            and not self._players
            and not self._seats.reserved
            and self._live is None
            and self._stage in (Stage.IDLE, Stage.COUNTDOWN)
            and not self._cycle.asking
        )
        if done and not self._cycle.void_pending():
            # The commitments it held for a next hand (published or asked ahead) are being voided at
            # fairness, never dealt, not left open in the chain until the table opens again; off the
            # clock's path: the shard's next round closes the table once they are.
            return False
        if done:
            # Closed in the seats' log first: opened again later, it is an ordinary table (a log that
            # is away: the shard's next round tries again).
            try:
                await self._feed_seats_logged_first(table_core.TableClosed())
            except DomainError as error:
                self._fence_on(error)
                log.warning("table not closed: its log is away", table_id=self.table_id, reason=error.reason)
                return False
            self._closed = True
            on_close()
        return done

    async def _play(self, step: core.Step) -> dict[int, list[table_pb2.TableEvent]]:
        """A step of the core that changed the hand, played by the cycle (`HandCycle.play`)."""
        return await self._cycle.play(step)

    def _set_room(self, room: Room) -> None:
        self.room = room

    def _reopened(self, seats: table_core.Seats, corrections: Sequence[table_core.Input]) -> None:
        self._seats = seats
        self._seats_unlogged.extend(table_core.to_entry(given) for given in corrections)

    # ------------------------------------------------------------------ seats

    def seats_player(self, player_id: str) -> bool:
        return self._seat_of(player_id) is not None

    def _seat_of(self, player_id: str) -> int | None:
        return self._seats.seat_of(player_id)

    def _require_open(self) -> None:
        if self._stage is Stage.RECOVERING:
            raise Unavailable("UNAVAILABLE", "the table is opening; retry")

    # ------------------------------------------------------------------ commands (run inside the actor)

    # SitDown and LeaveTable are called from outside the actor (the adapter): what they decide is
    # decided inside it (`call`), and what they wait for (the lobby's authorisation, the cashier's seat
    # session or cash-out) is waited for outside, so the table's clock never waits on another service
    # (issue 42). The seat a sit-down chose is held meanwhile (the seats' core's `reserved`).

    async def sit_down(
        self,
        player_id: str,
        request_id: str,
        seat: int,
        buy_in: int,
        wait_for_big_blind: bool,
        signals: tuple[str, str] = ("", ""),
        suggested_name: str = "",
    ) -> table_pb2.SitDownResponse:
        """`signals`: the (device, network) signals of the caller's token, kept with the seat;
        `suggested_name`: its name suggestion (the lobby's profile decides the seat's name). A
        retry gets the first answer; a retry while the first is under way waits for it."""
        if seat and not 1 <= seat <= self.room.seats:
            # Bad input whatever the state of the table.
            raise InvalidArgument("FIELD_INVALID", "no such seat", {"field": "seat"})
        sitting = SitDownRequest(
            player_id, request_id, seat, buy_in, wait_for_big_blind, signals, suggested_name
        )
        started = await self.call(lambda: self._start_sit_down(sitting))
        if isinstance(started, table_pb2.SitDownResponse):
            return started
        try:
            async with self._clock.timeout_at(self._now() + self._t.seat_answer_seconds):
                return await asyncio.shield(started)
        except TimeoutError:
            # The call goes on (the seat stays held); a retry of the request waits for it.
            raise Unavailable(
                "UNAVAILABLE", "the cashier has not answered yet; retry", {"dependency": "cashier"}
            ) from None

    async def _start_sit_down(
        self, sitting: SitDownRequest
    ) -> table_pb2.SitDownResponse | asyncio.Task[table_pb2.SitDownResponse]:
        self._require_open()
        known = self._answers.known(sitting.key, sitting.fingerprint)
        if known is not None:
            return known  # type: ignore[no-any-return]
        running = self._seat_calls.get(sitting.key)
        if running is not None:
            if self._seat_call_fingerprints.get(sitting.key) != sitting.fingerprint:
                raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the request id was used with other fields")
            return running
        session_id = table_core.session_id(self.table_id, sitting.player_id, sitting.request_id)
        seated = self._seat_of(sitting.player_id)
        if seated is not None and self._players[seated].session_id == session_id:
            # This request's seat, opened before this table did (a handover mid-call): seated.
            return self._sit_down_answer(sitting, seated, session_id)
        if self._closing:
            # CloseTable: no new seat (it would only be cashed out again); the retry reaches the
            # room's table once this one has closed (opened afresh).
            raise Unavailable("TABLE_CLOSED", "the table is closing; retry to reach the room's open table")
        try:
            # The core picks the seat (or refuses) and holds it.
            step = self._feed_seats(table_core.SitDown(sitting.player_id, sitting.request_id, sitting.seat))
        except DomainError as error:
            if not is_unavailable(error):
                self._answers.remember(sitting.key, sitting.fingerprint, error)
            raise
        (opening,) = step.effects
        assert isinstance(opening, table_core.OpenSeatSession)
        self._seat_call_fingerprints[sitting.key] = sitting.fingerprint
        return self._off_clock(sitting.key, self._open_seat(sitting, opening))

    async def _open_seat(
        self, sitting: SitDownRequest, opening: table_core.OpenSeatSession
    ) -> table_pb2.SitDownResponse:
        """Outside the actor: the lobby's access and maintenance rules (private rooms, no new seats)
        first, then the cashier's seat session; then inside again to seat the player."""
        try:
            grant = await self._rooms.authorize_seat(
                sitting.player_id, self.room.room_id, sitting.suggested_name
            )
            session = await self._open_seat_session(sitting, opening)
        except DomainError as error:
            refused = error
            await self._inside(lambda: self._seat_not_opened(sitting, opening, refused))
            raise
        return await self._inside(lambda: self._seat_opened(sitting, opening, session, grant))

    async def _open_seat_session(
        self, sitting: SitDownRequest, opening: table_core.OpenSeatSession
    ) -> SeatSession:
        """The cashier's seat session for the seat held. An UNAVAILABLE answer says nothing of what the
        cashier did (its reply may be what was lost), so the table asks again, with the same session
        id and seat, until the cashier says yes or no, holding the seat meanwhile: a session the
        cashier opened is never left without its seat (the whole-table simulator found a retry that
        chose another seat, which the cashier refused as a conflict, the chips left in a seat
        session no seat held). A retry of the sit-down waits for this same call."""
        backoff = self._t.retry_initial_seconds
        while True:
            try:
                return await self._cashier.open_seat_session(
                    session_id=opening.session_id,
                    player_id=sitting.player_id,
                    table_id=self.table_id,
                    seat=public_seat(opening.seat),
                    pool=self.room.pool,
                    buy_in=sitting.buy_in,
                    min_buy_in=self.room.min_buy_in,
                    max_buy_in=self.room.max_buy_in,
                )
            except DomainError as error:
                if not is_unavailable(error) or self._stopping or self.closed or self._fenced:
                    raise
                log.warning(
                    "seat session not answered; asking again",
                    table_id=self.table_id,
                    player_id=sitting.player_id,
                    reason=error.reason,
                )
            await self._clock.sleep(backoff)
            backoff = min(self._t.retry_max_seconds, backoff * 2)

    async def _seat_not_opened(
        self, sitting: SitDownRequest, opening: table_core.OpenSeatSession, error: DomainError
    ) -> None:
        self._feed_seats(table_core.SeatNotOpened(sitting.player_id, opening.seat))
        if not is_unavailable(error):
            self._answers.remember(sitting.key, sitting.fingerprint, error)

    async def _seat_opened(
        self,
        sitting: SitDownRequest,
        opening: table_core.OpenSeatSession,
        session: SeatSession,
        grant: SeatGrant,
    ) -> table_pb2.SitDownResponse:
        await self._cycle.settle_deal()  # UNAVAILABLE: `_inside` brings it back in a moment
        seated = self._seat_of(sitting.player_id)
        if seated is None or self._players[seated].session_id != session.session_id:
            self._feed_seats(
                table_core.SessionOpened(
                    sitting.player_id,
                    opening.seat,
                    session.session_id,
                    session.stack,
                    sitting.wait_for_big_blind,
                    self._now(),
                    device=sitting.signals[0],
                    network=sitting.signals[1],
                    display_name=grant.display_name,
                    avatar_url=grant.avatar_url,
                )
            )
            seated = opening.seat
        return self._sit_down_answer(sitting, seated, session.session_id)

    def _sit_down_answer(
        self, sitting: SitDownRequest, seat: int, session_id: str
    ) -> table_pb2.SitDownResponse:
        seated = self._seating.player_at(seat)
        response = table_pb2.SitDownResponse(seat=public_seat(seat), seat_session_id=session_id)
        response.stack.pool = self.room.pool  # type: ignore[assignment]
        response.stack.amount = seated.stack if seated is not None else 0
        self._answers.remember(sitting.key, sitting.fingerprint, response)
        return response

    async def leave(self, player_id: str, request_id: str) -> table_pb2.LeaveTableResponse:
        """Dealt into the running hand: folded at once, cashed out after the settlement (rules 12).
        Between hands: leaving at once (dealt into no hand), answered once the cashier cashed the
        seat out (waited for outside the actor)."""
        key = (player_id, "LeaveTable", request_id)
        started = await self.call(lambda: self._start_leave(key, player_id))
        if isinstance(started, table_pb2.LeaveTableResponse):
            return started
        return await asyncio.shield(started)

    async def _start_leave(
        self, key: tuple[str, str, str], player_id: str
    ) -> table_pb2.LeaveTableResponse | asyncio.Task[table_pb2.LeaveTableResponse]:
        self._require_open()
        known = self._answers.known(key, ())
        if known is not None:
            return known  # type: ignore[no-any-return]
        running = self._seat_calls.get(key)
        if running is not None:
            return running
        await self._cycle.settle_deal()  # a deal whose log answer was lost: dealt or not, first
        seat = self._seat_of(player_id)
        if self._live is not None:
            await self._cycle.known()  # a decision whose log answer was lost, settled first
        live = self._live
        in_hand = seat is not None and live is not None and seat in live.sessions
        response = table_pb2.LeaveTableResponse()
        response.cashed_out.pool = self.room.pool  # type: ignore[assignment]
        if seat is not None and self._players[seat].leaving and not in_hand:
            # Leaving already (a retry, or a leave during the hand now settled): the cash-out.
            owed = table_core.CashOut(seat, self._players[seat].session_id)
        else:
            try:
                step = table_core.feed(self._seats, table_core.Leave(player_id, in_hand), self._rules)
            except DomainError as error:
                self._answers.remember(key, (), error)
                raise
            assert seat is not None
            if step.reply:
                # Rules 12: folded at once; the chips already in stay; cash-out after settlement.
                if not self._players[seat].leaving and live is not None:
                    played = core.feed(live, core.Leave(seat, self._now()))
                    if played.entries:
                        await self._play(played)  # the log has it first (a refused append changes nothing)
                self._feed_seats(table_core.Leave(player_id, in_hand))  # after the hand's own step
                response.folded_mid_hand = True
                self._answers.remember(key, (), response)
                return response
            self._feed_seats(table_core.Leave(player_id, in_hand))
            (effect,) = step.effects
            assert isinstance(effect, table_core.CashOut)
            owed = effect
        cashing = self._cash_out(owed)

        async def answered() -> table_pb2.LeaveTableResponse:
            response.cashed_out.amount = await asyncio.shield(cashing)
            self._answers.remember(key, (), response)
            return response

        return self._off_clock(key, answered())

    def _cash_out(self, owed: table_core.CashOut) -> asyncio.Task[int]:
        """The seat's cash-out, outside the actor (one at a time per seat session); the seat is freed
        inside once the cashier answered. A failure is logged and the cycle tries again later."""
        return self._off_clock(("cash-out", owed.session_id), self._cash_out_call(owed))

    async def _cash_out_call(self, owed: table_core.CashOut) -> int:
        try:
            amount = await self._cashier.cash_out(owed.session_id)
        except DomainError as error:
            log.warning("cash-out failed; retrying", table_id=self.table_id, reason=error.reason)
            await self._inside(self._cash_out_failed)
            raise
        await self._inside(lambda: self._cashed_out(owed))
        return amount

    async def _cash_out_failed(self) -> None:
        self._cycle.retry_later()

    async def _cashed_out(self, owed: table_core.CashOut) -> None:
        player = self._players.get(owed.seat)
        if player is not None and player.session_id == owed.session_id:
            self._feed_seats(table_core.CashedOut(owed.seat, self._now()))

    def _off_clock(self, key: Hashable, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run `work` as its own task, outside the actor's loop (one per key; stopped with the
        table); a second start of a key under way gets the running one."""
        running = self._seat_calls.get(key)
        if running is not None:
            work.close()
            return running
        task = asyncio.create_task(work)
        self._seat_calls[key] = task
        task.add_done_callback(functools.partial(self._off_clock_ended, key))
        return task

    def _off_clock_ended(self, key: Hashable, task: asyncio.Task[Any]) -> None:
        if self._seat_calls.get(key) is task:
            del self._seat_calls[key]
            self._seat_call_fingerprints.pop(key, None)
        if not task.cancelled():
            task.exception()  # taken: its caller may have gone (its answer is remembered)

    async def _inside(self, command: Callable[[], Awaitable[T]]) -> T:
        """Back into the actor from a call made outside it: a full queue is waited out; a closed,
        fenced or stopping table raises (the next owner takes the seats the cashier holds)."""
        while True:
            try:
                return await self.call(command)
            except Unavailable:
                if self.closed:
                    raise
                await self._clock.sleep(self._t.retry_initial_seconds)

    async def act(
        self, player_id: str, request_id: str, hand_id: str, kind: int, amount: int
    ) -> table_pb2.ActResponse:
        async def run() -> table_pb2.ActResponse:
            seat = self._seat_of(player_id)
            if seat is None:
                raise FailedPrecondition("NOT_SEATED", "you have no seat at this table")
            # A decision whose log answer was lost is settled first (the log says whether it was taken).
            await self._cycle.known()
            live = self._live
            if live is None or self._stage is not Stage.PLAYING:
                raise FailedPrecondition("NO_HAND_IN_PROGRESS", "no hand is running")
            # The core decides on a copy (its refusals raise here); the log has the decision before
            # anyone hears of it; a retry of a decision taken gets its first answer, never a second go.
            step = core.feed(live, core.Act(player_id, seat, request_id, hand_id, kind, amount, self._now()))
            reply = step.reply
            assert reply is not None
            if reply.again:
                return _first_answer(live, reply)
            (entry,) = step.entries
            messages = await self._play(step)
            waited = entry["ms"] / 1000 if "ms" in entry else None
            table_metrics.action_accepted(str(entry["action"]), waited)
            own = messages.get(seat)
            response = table_pb2.ActResponse()
            if own:
                response.event.CopyFrom(own[0])
            return response

        return await self._answers.once((player_id, "Act", request_id), (hand_id, kind, amount), run)

    async def set_player_seed(
        self, player_id: str, request_id: str, seed: bytes, seed_hash: str = ""
    ) -> table_pb2.SetPlayerSeedResponse:
        """A client seed for the next hand, or (version 3, first step) its hash (exactly one of them,
        checked by the adapter). The seat is always the caller's own."""
        self._require_open()

        async def run() -> table_pb2.SetPlayerSeedResponse:
            seat = self._seat_of(player_id)
            if seat is None:
                raise FailedPrecondition("NOT_SEATED", "you have no seat at this table")
            pending = self._next
            if pending is None:
                raise FailedPrecondition("ENTROPY_CLOSED", "no hand is open for client seeds now")
            hand_id = pending.commitment.hand_id
            phase = pending.check(seat, player_id, is_hash=bool(seed_hash))
            if seed_hash:
                await self._fairness.add_entropy(hand_id, public_seat(seat), player_id, seed_hash=seed_hash)
            else:
                await self._fairness.add_entropy(hand_id, public_seat(seat), player_id, seed)
            pending.take(seat, player_id, seed=seed, seed_hash=seed_hash)
            return table_pb2.SetPlayerSeedResponse(hand_id=hand_id, seed_phase=phase)  # type: ignore[arg-type]

        return await self._answers.once((player_id, "SetPlayerSeed", request_id), (seed, seed_hash), run)

    async def sit_out(self, player_id: str, request_id: str, back_in: bool, wait: bool) -> int:
        self._require_open()

        async def run() -> int:
            await self._cycle.settle_deal()
            given: table_core.SitIn | table_core.SitOut = (
                table_core.SitIn(player_id, wait) if back_in else table_core.SitOut(player_id, self._now())
            )
            try:
                step = await self._feed_seats_logged_first(given)
            except SeatingError as error:
                raise engine_refusal(error) from error
            if step.reply is None:
                return int(table_pb2.SEAT_STATUS_SITTING_OUT)  # leaving: out until the cash-out
            return self._status(step.reply)

        return await self._answers.once(
            (player_id, "SitOut" if not back_in else "SitIn", request_id), (wait,), run
        )

    async def chat(
        self, player_id: str, request_id: str, text: str, sticker: str
    ) -> table_pb2.SendChatResponse:
        async def run() -> table_pb2.SendChatResponse:
            # Rules 14: messages and stickers are for the players seated at the table.
            seat = self._seat_of(player_id)
            if seat is None:
                raise FailedPrecondition("NOT_SEATED", "only players seated at the table may chat")
            if sticker:
                check_sticker(sticker)
            else:
                check_text(text)
            self._chat.admit(player_id, self.table_id, self._now())
            sender = self._players[seat]
            message = table_pb2.ChatMessage(
                player_id=seat_handle(sender.session_id),
                text=text,
                sticker_id=sticker,
                display_name=sender.display_name,
                seat=public_seat(seat),
            )
            sent = self._broadcast({None: {"chat": message}}, seat=seat)
            return table_pb2.SendChatResponse(event=sent)

        return await self._answers.once((player_id, "SendChat", request_id), (text, sticker), run)

    def figures(self, shard_id: str) -> TableFigures:
        """The table's public figures for the lobby (no card, public seat numbers from 1)."""
        return lobby_figures(self._parts(), self._recent, shard_id, now=self._now())

    def players(self) -> table_metrics.TablePlayers:
        """The players seated and waiting now, for the shard's figures (read at scrape time)."""
        seated, waiting = players_by_state(self._seats, self._cycle.live)
        return table_metrics.TablePlayers(self.room.room_id, self.room.variant.value, seated, waiting)

    async def snapshot(self, player_id: str) -> table_pb2.TableView:
        seat = self._seat_of(player_id)
        state = self._state()
        return self._waiting_view(state) if seat is None else table_view(state, seat)

    # ------------------------------------------------------------------ streams (table_streams.py)

    async def watch(self, player_id: str) -> Watcher:
        """A WatchTable stream: the full view first; for a seated player the stream is presence
        (a new one within the seat reserve reconnects, and the others see the status change)."""
        watcher = self._streams.new_watcher(player_id)
        self._stream_opened(player_id)
        first = table_pb2.WatchTableResponse(view=await self.snapshot(player_id))
        if self._seat_of(player_id) is None:
            watcher.waiting = waiting_key(first.view)  # the next waiting view only when it changes
        self._flush()  # what the others hear of this stream (a reconnect) is in the view it starts from
        self._streams.open_watcher(watcher, first)
        return watcher

    def unwatch(self, watcher: Watcher) -> None:
        """The stream ended (called outside the actor): the actor takes note on its next turn."""
        if not self._streams.unwatch(watcher):
            return
        with contextlib.suppress(asyncio.QueueFull):
            # Wake the actor; when the queue is full it is awake anyway.
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            # Nobody awaits it: a refusal (a closed or fenced table) is read here, never logged as lost.
            future.add_done_callback(lambda f: f.cancelled() or f.exception())
            self._queue.put_nowait((_nothing, future))

    async def spectate(self, player_id: str) -> Spectator:
        """A SpectateTable stream: the public view `spectator_delay_seconds` late (rules 14), starting
        from a snapshot that is itself that old. Whoever the caller is, they get the public view."""
        return self._streams.spectate(player_id)

    async def authorize_spectator(self, player_id: str) -> None:
        """Closed access (rules 18) for spectators, when the setting says so: the lobby's seat check,
        of which only the allow-list refusals apply (maintenance and disabled rooms stop seats, not
        watching). Runs outside the actor (a lobby call must not hold the table up)."""
        if not self._t.spectators_need_access:
            return
        try:
            await self._rooms.authorize_seat(player_id, self.room.room_id)
        except DomainError as error:
            if error.reason in ("MAINTENANCE_NO_NEW_SEATS", "ROOM_DISABLED"):
                return
            raise

    def unspectate(self, spectator: Spectator) -> None:
        self._streams.unspectate(spectator)

    @property
    def spectator_count(self) -> int:
        return len(self._streams.spectators)

    # ------------------------------------------------------------------ closing an extra table

    def empty_for(self) -> float:
        """Seconds this table has been empty and idle (no seat, no player's own WatchTable stream, no
        hand); 0 if it is not. Spectators (SpectateTable: players' and staff's delayed view) do not keep
        an idle table open: when it closes their streams end with TABLE_CLOSED (`stop`)."""
        empty = (
            not self._players
            and not self._streams.watchers
            and self._stage is Stage.IDLE
            and self._live is None
        )
        if not empty:
            self._empty_since = None
            return 0.0
        now = self._now()
        if self._empty_since is None:
            self._empty_since = now
        return now - self._empty_since

    async def close_if_empty(self, on_close: Callable[[], None]) -> bool:
        """Inside the actor: close the table if it is still empty; `on_close` runs before any later command."""
        if self.empty_for() <= 0.0 or not self._queue.empty():
            return False
        self._closed = True
        on_close()
        return True

    # ------------------------------------------------------------------ views (table_state.py) and events

    def _status(self, seat: int) -> int:
        return seat_status(self._seats, self._live, seat)

    def _parts(self) -> Parts:
        return Parts(
            table_id=self.table_id,
            room=self.room,
            seats=self._seats,
            live=self._live,
            last=self._cycle.last,
            pending=self._next,
            stage=self._stage,
            paused=self._cycle.paused,
            handing_over=self._cycle.handing_over,
            no_new_hands=self._no_new_hands,
        )

    def _state(self, *, as_of_offset: float = 0.0) -> TableState:
        return table_state(self._parts(), now=self._now() + as_of_offset)

    def _waiting_view(self, state: TableState) -> table_pb2.TableView:
        return waiting_view(state, self._seating)

    def _publish(self, events: Sequence[Event]) -> dict[int, list[table_pb2.TableEvent]]:
        """Each engine event as each seat (and the public) may see it, sent at the end of the step
        (`_flush`); returns each seat's version of the events."""
        holders = [(seat, player.player_id) for seat, player in self._players.items()]
        return self._streams.publish(events, holders)

    def _publish_notice(self, code: str, text: str, *, seat: int | None = None) -> None:
        self._streams.publish_notice(code, text, seat=seat)

    def _broadcast(self, body: dict[None, dict[str, Any]], *, seat: int | None) -> table_pb2.TableEvent:
        """A table event that is the same for everybody (notices, chat), sent at the end of the step."""
        return self._streams.broadcast(body, seat=seat)

    def _flush(self) -> None:
        """The end of a command or timer step: every stream gets what the step caused (table_streams.py)."""
        self._streams.flush(self._state, stopping=self._stopping)


async def _nothing() -> None:
    """A command that only wakes the actor (its `_advance` does the work)."""
