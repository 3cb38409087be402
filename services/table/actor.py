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
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import enum
import hashlib
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from poker_engine.actions import Action
from poker_engine.config import HandConfig
from poker_engine.errors import IllegalActionError, SeatingError
from poker_engine.events import ActionKind, Event, HandEnded, PotAwarded
from poker_engine.hand import Hand
from poker_engine.seating import Entry, HandPlan
from poker_engine.seating import TableState as Seating
from service_runtime.errors import (
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    ResourceExhausted,
    Unavailable,
)
from service_runtime.structured_logging import get_logger
from service_runtime.table_directory import MaintenanceSwitches, SeatFigures, TableFigures
from service_runtime.tasks import cancel_and_wait
from services.table import hand_trace
from services.table import metrics as table_metrics
from services.table.chat import ChatGuard, check_sticker, check_text
from services.table.dependencies import CashierClient, Commitment, FairnessClient
from services.table.event_log import HandEventLog
from services.table.hand_record import config_entry, hand_record
from services.table.idempotency import AnswerMemory
from services.table.library_errors import engine_refusal
from services.table.presence import Expiry, PresenceRules, SeatPresence
from services.table.record_outbox import MemoryOutbox, RecordOutbox
from services.table.remote import is_unavailable
from services.table.rooms import Room, RoomSource
from services.table.spectators import DelayLine
from services.table.time_banks import KeptTimeBanks
from services.table.views import (
    SeatState,
    TableState,
    event_body,
    notice,
    public_seat,
    redact_for,
    street_pb,
    table_view,
)

T = TypeVar("T")
log = get_logger("table.actor")

MAINTENANCE_RECHECK_SECONDS = 0.5


class Stage(enum.Enum):
    RECOVERING = "RECOVERING"  # reading the open seat sessions from the cashier
    IDLE = "IDLE"  # between hands, fewer than two players or about to commit
    COUNTDOWN = "COUNTDOWN"  # commitment published, client seeds accepted until the seal
    PLAYING = "PLAYING"
    SETTLING = "SETTLING"  # hand over, waiting for the cashier to acknowledge the settlement


@dataclass(frozen=True, slots=True)
class Timings:
    action_seconds: float
    time_bank_seconds: float
    countdown_seconds: float
    retry_initial_seconds: float
    retry_max_seconds: float
    command_queue_size: int
    watch_queue_size: int
    enqueue_timeout_seconds: float = 5.0
    room_refresh_seconds: float = 30.0
    seat_reserve_seconds: float = 90.0
    sit_out_seconds: float = 600.0
    timeout_hands_to_sit_out: int = 3
    spectator_delay_seconds: float = 20.0
    max_spectators: int = 200
    max_streams_per_player: int = 4
    spectators_need_access: bool = False
    time_bank_keep_seconds: float = 1800.0


@dataclass
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


@dataclass
class LiveHand:
    hand: Hand
    config: HandConfig
    commitment: str
    started_at: float
    sessions: dict[int, str]  # engine seat -> seat session, fixed for the hand
    timed_out: set[int] = field(default_factory=set)  # seats that timed out while connected
    acted: set[int] = field(default_factory=set)  # seats that decided for themselves
    # Fair play (rules 17), for the record only: each player's (device, network) signals as the hand
    # began, and the milliseconds each decision took (by the position of its event in the hand).
    signals: dict[str, tuple[str, str]] = field(default_factory=dict)
    decision_ms: dict[int, int] = field(default_factory=dict)


@dataclass
class PendingCommitment:
    commitment: Commitment
    seeds: dict[int, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AfterHand:
    """What the after-hand queues need: the hand to reveal, its record for history."""

    hand_id: str
    record: Any  # history_pb2.HandRecord
    # The cash table whose record outbox holds the record until history has it ("" for house rounds).
    table_id: str = ""


class Watcher:
    """One WatchTable stream: a bounded queue of updates for one caller."""

    def __init__(self, player_id: str, size: int) -> None:
        self.player_id = player_id
        self.queue: asyncio.Queue[table_pb2.WatchTableResponse] = asyncio.Queue(maxsize=size)
        self.snapshots_sent = 0
        # The last waiting view sent while the caller has no seat (sent again only when it changes).
        self.waiting = b""


@dataclass(slots=True)
class PublicUpdate:
    """One update of the public view: the event (none for a bare view) and the table it left."""

    event: table_pb2.TableEvent | None
    state: TableState
    rendered: table_pb2.SpectateTableResponse | None = None

    def response(self) -> table_pb2.SpectateTableResponse:
        if self.rendered is None:
            self.rendered = table_pb2.SpectateTableResponse(view=table_view(self.state, None))
            if self.event is not None:
                self.rendered.event.CopyFrom(self.event)
        return self.rendered


# Put in a stream's queue when the table stops (closed, room lost, fenced): the stream then ends with
# UNAVAILABLE and the stream's `closed_reason`, so its client re-routes through the lobby instead of
# waiting for a table that will never speak again.
STREAM_CLOSED = table_pb2.WatchTableResponse()
SPECTATOR_STREAM_CLOSED = table_pb2.SpectateTableResponse()


def _close_stream(queue: asyncio.Queue[Any], sentinel: Any) -> None:
    while not queue.empty():
        queue.get_nowait()
    queue.put_nowait(sentinel)


def offer(stream: Watcher | Spectator, update: Any, snapshot: Callable[[], Any]) -> None:
    """Queue `update` on a stream. A stream too slow to keep up loses what it has not read and gets
    `snapshot()` instead (the table as it is now; None: nothing), counted in `snapshots_sent`."""
    kind = "spectator" if isinstance(stream, Spectator) else "watcher"
    table_metrics.update_offered(kind, stream.queue.qsize())
    try:
        stream.queue.put_nowait(update)
    except asyncio.QueueFull:
        table_metrics.update_dropped(kind)
        while not stream.queue.empty():
            stream.queue.get_nowait()
        stream.snapshots_sent += 1
        replacement = snapshot()
        if replacement is not None:
            stream.queue.put_nowait(replacement)


class Spectator:
    """One SpectateTable stream: a bounded queue of delayed public updates."""

    def __init__(self, player_id: str, size: int) -> None:
        self.player_id = player_id
        self.queue: asyncio.Queue[table_pb2.SpectateTableResponse] = asyncio.Queue(maxsize=size)
        self.snapshots_sent = 0


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
    ) -> None:
        self.table_id = table_id
        self.room = room
        self._cashier = cashier
        self._fairness = fairness
        self._log = event_log
        self._after_hand = after_hand
        self._rooms = rooms
        self._maintenance = maintenance
        self._room_read_at = 0.0
        self._t = timings
        # This opening of the table: a table closed and opened again in the same process (its room
        # lost and won back, an empty extra table reused) must not send the `CommitHand` request ids
        # of its earlier life again, or fairness answers with those hands, long revealed.
        self._life = uuid.uuid4().hex[:16]
        self._outbox: RecordOutbox = outbox or MemoryOutbox()
        self._queue: asyncio.Queue[tuple[Callable[[], Awaitable[Any]], asyncio.Future[Any]]] = asyncio.Queue(
            maxsize=timings.command_queue_size
        )
        self._task: asyncio.Task[None] | None = None
        self._stage = Stage.RECOVERING
        self._paused = False
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
        self._seating = Seating.empty(room.seats, room.small_blind, room.big_blind)
        self._players: dict[int, PlayerSeat] = {}
        self._live: LiveHand | None = None
        self._last: LiveHand | None = None
        self._next: PendingCommitment | None = None
        self._hand_counter = 0
        self._wake_at: float | None = 0.0
        self._backoff = timings.retry_initial_seconds
        self._turn: tuple[int, float] | None = None  # (engine seat, loop time the turn started)
        self._watchers: set[Watcher] = set()
        self._sequence = 0
        self._answers = AnswerMemory()
        self.hands_settled = 0
        self._recent: collections.deque[tuple[float, int]] = collections.deque(maxlen=200)  # (ended, pot)
        self._presence_rules = PresenceRules(
            reserve_seconds=timings.seat_reserve_seconds,
            sit_out_seconds=timings.sit_out_seconds,
            timeout_hands=timings.timeout_hands_to_sit_out,
        )
        self._chat = chat or ChatGuard()
        self._time_banks = KeptTimeBanks(timings.time_bank_keep_seconds)
        # Rules 14: the public view reaches spectators `spectator_delay_seconds` late (spectators.py).
        self._feed: DelayLine[PublicUpdate] = DelayLine(timings.spectator_delay_seconds)
        self._spectators: set[Spectator] = set()
        self._closed_streams: collections.deque[str] = collections.deque()

    # ------------------------------------------------------------------ lifecycle

    @property
    def fenced(self) -> bool:
        return self._fenced

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"table-{self.table_id}")
            self._task.add_done_callback(self._task_ended)

    def _task_ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("table task failed", table_id=self.table_id, exc_info=task.exception())

    async def stop(self) -> None:
        # Set before the cancel: should the cancel be lost (see service_runtime.tasks), the loop still
        # takes no further step, and cancel_and_wait cancels again until the task has ended.
        self._stopping = True
        if self._task is not None:
            # A task that had failed was logged when it ended; stopping the table must not fail too.
            await cancel_and_wait(self._task)
            self._task = None
        # Commands still queued get an answer: a caller never waits on a stopped table.
        while not self._queue.empty():
            _, future = self._queue.get_nowait()
            if not future.done():
                future.set_exception(Unavailable("UNAVAILABLE", "the table is closing; retry"))
        # Open streams end too: their clients ask the lobby again (the table reopens where it lives).
        self.closed_reason = "SHARD_NOT_OWNER" if self._fenced else "TABLE_CLOSED"
        for watcher in list(self._watchers):
            _close_stream(watcher.queue, STREAM_CLOSED)
        for spectator in list(self._spectators):
            _close_stream(spectator.queue, SPECTATOR_STREAM_CLOSED)

    async def call(self, command: Callable[[], Awaitable[T]]) -> T:
        """Run `command` inside the actor and return its answer (the only way in)."""
        if self._fenced:
            raise FailedPrecondition("SHARD_NOT_OWNER", "another shard serves this table now")
        if self._closed:
            raise Unavailable("TABLE_CLOSED", "the table was closed; retry to reach its room's open table")
        if self._stopping or self._task is None or self._task.done():
            raise Unavailable("UNAVAILABLE", "the table is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(self._t.enqueue_timeout_seconds):
                await self._queue.put((command, future))
        except TimeoutError as error:
            raise Unavailable("UNAVAILABLE", "the table is busy; retry") from error
        return await future

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        # The spectators' first view: the table as it opens (no seat yet), which is also what it was
        # `delay` ago, so a spectator who comes early gets a start that is not younger than the delay.
        self._feed.push(
            time.time() - self._feed.delay, PublicUpdate(None, self._state(as_of_offset=-self._feed.delay))
        )
        while not self._stopping:
            # Timers first, every turn of the loop: a flood of commands (a reconnect storm, say) can
            # never starve the action clock, the seat reserves or the spectators' delay line.
            if await self._fire_due_timers():
                await self._guarded(self._advance)
                continue
            deadline = self._next_deadline()
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            item = None
            try:
                async with asyncio.timeout(timeout):
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
                    answer = await command()
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
        times = [t for t in (self._wake_at, self._presence_due(), self._feed_due()) if t is not None]
        return min(times) if times else None

    async def _fire_due_timers(self) -> bool:
        if self._fenced:
            return False
        fired = False
        now = self._now()
        due = self._feed_due()
        if due is not None and now >= due:
            self._release_feed()
            fired = True
        due = self._presence_due()
        if due is not None and now >= due:
            await self._guarded(self._expire_presence)
            fired = True
        if self._wake_at is not None and self._now() >= self._wake_at:
            self._wake_at = None
            await self._guarded(self._on_wake)
            fired = True
        return fired

    def _fence_on(self, error: DomainError) -> None:
        if error.reason == "SHARD_NOT_OWNER" and not self._fenced:
            self._fenced = True
            self._wake_at = None
            log.warning("table fenced: another shard owns the room", table_id=self.table_id)

    async def _guarded(self, step: Callable[[], Awaitable[None]]) -> None:
        if self._stopping:
            return
        if self._fenced:
            self._wake_at = None
            return
        try:
            await step()
        except asyncio.CancelledError:
            raise
        except DomainError as error:
            self._fence_on(error)
            if not self._fenced:
                log.warning("table step refused", table_id=self.table_id, reason=error.reason)
                self._retry_later()
        except Exception:
            log.exception("table step failed", table_id=self.table_id, stage=self._stage.value)
            self._retry_later()

    def _retry_later(self) -> None:
        loop = asyncio.get_running_loop()
        self._wake_at = loop.time() + self._backoff
        self._backoff = min(self._t.retry_max_seconds, self._backoff * 2)

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    # ------------------------------------------------------------------ presence (rules 9, 13)

    def _presence_due(self) -> float | None:
        times = [
            due
            for player in self._players.values()
            if not player.leaving and (due := player.presence.due(self._presence_rules)) is not None
        ]
        return min(times) if times else None

    def _sync_seat(self, seat: int) -> None:
        """Sit the seat out in the seating model while the player leaves, sits out or is away; back in
        otherwise (missed blinds are then owed by the engine's dead-button rule)."""
        player = self._players.get(seat)
        seated = self._seating.player_at(seat)
        if player is None or seated is None:
            return
        out = player.leaving or player.presence.sitting_out or player.presence.disconnected
        if out and not seated.sitting_out:
            self._seating = self._seating.sit_out(seat)
        elif not out and seated.sitting_out:
            self._seating = self._seating.sit_in(seat, player.entry)

    def _turn_end(self) -> float | None:
        """When the running turn expires: the action time, plus what is left of the seat's time bank
        unless the player is disconnected (rules 13: a disconnected player's bank is not spent). The
        start never moves, so a player who drops and returns cannot stretch the turn."""
        if self._turn is None:
            return None
        seat, started = self._turn
        player = self._players.get(seat)
        bank = player.time_bank if player is not None and not player.presence.disconnected else 0.0
        return started + self._t.action_seconds + bank

    def _stream_opened(self, player_id: str) -> None:
        seat = self._seat_of(player_id)
        if seat is None:
            return
        player = self._players[seat]
        if not player.presence.came_back() or player.leaving:
            return
        self._sync_seat(seat)
        if self._stage is Stage.PLAYING and self._turn is not None and self._turn[0] == seat:
            self._wake_at = self._turn_end()
        log.info("player reconnected", table_id=self.table_id, player_id=player_id)
        table_metrics.player_reconnected()
        self._publish_notice("PLAYER_RECONNECTED", f"{player_id} is back", seat=seat)

    def _stream_closed(self, player_id: str) -> None:
        seat = self._seat_of(player_id)
        if seat is None:
            return
        if any(w.player_id == player_id for w in self._watchers):
            return  # another stream of theirs is still open: still present
        player = self._players[seat]
        if not player.presence.went_away(self._now()) or player.leaving:
            return
        self._sync_seat(seat)
        if self._stage is Stage.PLAYING and self._turn is not None and self._turn[0] == seat:
            self._wake_at = self._turn_end()
        log.info("player disconnected", table_id=self.table_id, player_id=player_id)
        self._publish_notice(
            "PLAYER_DISCONNECTED",
            f"{player_id} is away; the seat is kept {self._presence_rules.reserve_seconds:g} s",
            seat=seat,
        )

    async def _expire_presence(self) -> None:
        """Seats past the reserve or the sit-out limit: removed now between hands, else once the
        running hand is settled, and cashed out through the cashier."""
        now = self._now()
        for seat, player in list(self._players.items()):
            if player.leaving:
                continue
            expiry = player.presence.expiry(now, self._presence_rules)
            if expiry is None:
                continue
            player.leaving = True
            self._sync_seat(seat)
            code = "SEAT_RESERVE_EXPIRED" if expiry is Expiry.RESERVE else "SIT_OUT_EXPIRED"
            log.info("seat expired", table_id=self.table_id, player_id=player.player_id, why=code)
            table_metrics.seat_expired(code)
            self._publish_notice(code, f"{player.player_id} is removed from the table", seat=seat)
        await self._finish_leavers()

    def _count_hand(self, live: LiveHand) -> None:
        """After a settled hand: three hands in a row lost to timeouts put a player in sit-out."""
        now = self._now()
        for seat, session in live.sessions.items():
            player = self._players.get(seat)
            if player is None or player.session_id != session or player.leaving:
                continue
            out = player.presence.hand_played(
                timed_out=seat in live.timed_out, acted=seat in live.acted, rules=self._presence_rules
            )
            if out and player.presence.sit_out(now):
                self._sync_seat(seat)
                self._publish_notice(
                    "PLAYER_SAT_OUT",
                    f"{player.player_id} timed out {player.presence.timeout_streak} hands in a row",
                    seat=seat,
                )

    # ------------------------------------------------------------------ spectators (rules 14)

    def _feed_due(self) -> float | None:
        """The loop time the next delayed update is due, while anybody is spectating."""
        if not self._spectators:
            return None
        due = self._feed.next_due()
        return None if due is None else self._now() + (due - time.time())

    def _feed_push(self, event: table_pb2.TableEvent | None, state: TableState) -> None:
        self._release_feed()
        self._feed.push(time.time(), PublicUpdate(event, state))

    def _release_feed(self) -> None:
        released = self._feed.release(time.time())
        if not released or not self._spectators:
            return
        for update in released:
            response = update.item.response()
            for spectator in list(self._spectators):
                self._deliver_delayed(spectator, response)

    def _delayed_snapshot(self) -> table_pb2.SpectateTableResponse | None:
        base = self._feed.base
        if base is None:
            return None
        return table_pb2.SpectateTableResponse(view=base.item.response().view)

    def _deliver_delayed(self, spectator: Spectator, response: table_pb2.SpectateTableResponse) -> None:
        # A slow spectator gets the newest delayed view instead of what it did not read.
        offer(spectator, response, self._delayed_snapshot)

    # ------------------------------------------------------------------ timers

    def _no_new_hands(self) -> bool:
        return self._maintenance(self.room.room_id).no_new_hands

    async def _advance(self) -> None:
        """Transitions that follow from the state, checked after every command and wake-up."""
        while self._closed_streams:
            self._stream_closed(self._closed_streams.popleft())
        if self._stage is Stage.IDLE and self._wake_at is None and self._seating.plan_next_hand() is not None:
            self._wake_at = self._now()
        if self._stage is Stage.PLAYING and self._live is not None and self._live.hand.is_over:
            table_metrics.hand_over(self.table_id)
            hand_trace.over(self.table_id)
            self._stage = Stage.SETTLING
            self._turn = None
            self._wake_at = self._now()

    async def _on_wake(self) -> None:
        if self._stage is Stage.RECOVERING:
            await self._recover()
        elif self._stage is Stage.IDLE:
            await self._begin_countdown()
        elif self._stage is Stage.COUNTDOWN:
            await self._deal()
        elif self._stage is Stage.PLAYING:
            await self._expire_turn()
        elif self._stage is Stage.SETTLING:
            await self._settle()

    async def _end_dangling_hand(self) -> None:
        """A hand a previous owner left running never settled (or settled but was never revealed):
        reveal it as what the cashier says it was, so fairness's chain holds no open hand."""
        hand_id = await self._log.live_hand(self.table_id)
        if hand_id is None:
            return
        settled = await self._cashier.hand_settled(hand_id)
        try:
            await self._fairness.reveal(hand_id, voided=not settled)
        except DomainError as error:
            if is_unavailable(error):
                raise
            log.warning("dangling hand not revealed", table_id=self.table_id, reason=error.reason)
        log.info("dangling hand ended", table_id=self.table_id, hand_id=hand_id, voided=not settled)
        if not settled:
            table_metrics.hand_voided("unfinished_after_takeover")
        await self._log.forget(hand_id)
        await self._log.clear_live(self.table_id, hand_id)

    async def _resend_kept_records(self) -> None:
        """Records of hands this table settled that history never acknowledged (the shard that
        settled them died or lost the room): into the after-hand queues again. Runs after the
        dangling hand is ended, so a record the cashier never settled is of a voided hand."""
        for hand_id, data in sorted((await self._outbox.kept(self.table_id)).items()):
            if not await self._cashier.hand_settled(hand_id):
                # Kept before a settlement that never happened: the hand was voided, nothing moved.
                await self._outbox.done(self.table_id, hand_id)
                continue
            record = history_pb2.HandRecord.FromString(data)
            log.info("settled hand's record sent again", table_id=self.table_id, hand_id=hand_id)
            self._after_hand(AfterHand(hand_id, record, self.table_id))

    async def _recover(self) -> None:
        """Seat again every player whose seat session of this table is still open (shard restart)."""
        try:
            await self._end_dangling_hand()
            await self._resend_kept_records()
            sessions = await self._cashier.open_sessions(self.table_id)
        except DomainError as error:
            log.warning("recovery waits for the cashier", table_id=self.table_id, reason=error.reason)
            self._retry_later()
            return
        for session in sessions:
            seat = session.seat - 1
            if session.stack > 0 and 0 <= seat < self.room.seats and self._seating.player_at(seat) is None:
                self._seating = self._seating.sit_down(seat, session.player_id, session.stack)
                self._players[seat] = PlayerSeat(
                    session.player_id, session.session_id, self._t.time_bank_seconds
                )
                continue
            try:
                await self._cashier.cash_out(session.session_id)
            except DomainError as error:
                log.warning("recovery cash-out failed", table_id=self.table_id, reason=error.reason)
                self._retry_later()
                return
        self._room_read_at = self._now()
        log.info("table open", table_id=self.table_id, seated=len(self._players))
        self._stage = Stage.IDLE
        self._backoff = self._t.retry_initial_seconds
        self._publish_notice("TABLE_OPEN", "the table is open")

    async def _refresh_room(self) -> None:
        """Re-read the room between hands (rules 11: a change applies from the next hand only)."""
        if self._now() - self._room_read_at < self._t.room_refresh_seconds:
            return
        try:
            room = await self._rooms.get_room(self.room.room_id)
        except DomainError as error:
            log.warning(
                "room not re-read; playing on with the last one", table_id=self.table_id, reason=error.reason
            )
            return
        self._room_read_at = self._now()
        if (room.seats, room.variant, room.pool) == (self.room.seats, self.room.variant, self.room.pool):
            self.room = room
            self._seating = replace(self._seating, small_blind=room.small_blind, big_blind=room.big_blind)

    async def _begin_countdown(self) -> None:
        await self._finish_leavers()
        if self._seating.plan_next_hand() is None:
            return
        if self._no_new_hands():
            # Maintenance: the running hand finished; none starts until the switch is off again.
            self._wake_at = self._now() + MAINTENANCE_RECHECK_SECONDS
            return
        await self._refresh_room()
        if self._next is None:
            self._hand_counter += 1
            request_id = f"{self.table_id}:{self._life}:{self._hand_counter}"
            try:
                with hand_trace.phase(self.table_id, "commit"):
                    commitment = await self._fairness.commit(request_id, self.table_id)
            except DomainError as error:
                log.warning("commit failed; retrying", table_id=self.table_id, reason=error.reason)
                self._retry_later()
                return
            # Marked before anyone sees it: if this shard dies now, the next owner voids it.
            await self._log.mark_live(self.room.room_id, self.table_id, commitment.hand_id)
            self._next = PendingCommitment(commitment)
        self._backoff = self._t.retry_initial_seconds
        self._stage = Stage.COUNTDOWN
        self._wake_at = self._now() + self._t.countdown_seconds
        self._publish_notice("HAND_COMMITTED", f"next hand {self._next.commitment.hand_id} committed")

    async def _deal(self) -> None:
        pending = self._next
        plan = self._seating.plan_next_hand()
        if pending is None or plan is None or self._no_new_hands():
            self._stage = Stage.IDLE
            return
        try:
            with hand_trace.phase(self.table_id, "deal"):
                deck = await self._fairness.seal(
                    pending.commitment.hand_id, [s.player_id for s in plan.seats]
                )
        except DomainError as error:
            if is_unavailable(error):
                self._retry_later()
                return
            log.error("seal refused; the commitment is dropped", table_id=self.table_id, reason=error.reason)
            hand_trace.dropped(self.table_id, error.reason)
            self._next = None
            self._stage = Stage.IDLE
            return
        self._next = None
        await self._start_hand(plan, pending.commitment, deck)

    async def _start_hand(self, plan: HandPlan, commitment: Commitment, deck: tuple[int, ...]) -> None:
        room = self.room
        config = plan.hand_config(
            deck,
            variant=room.variant,
            step=room.step,
            rake=room.rake,
            hand_id=commitment.hand_id,
            small_bet=room.small_bet,
            big_bet=room.big_bet,
        )
        await self._log.append(room.room_id, config.hand_id, [config_entry(config)])
        await self._log.mark_live(room.room_id, self.table_id, config.hand_id)
        hand = Hand(config)
        self._live = LiveHand(
            hand=hand,
            config=config,
            commitment=commitment.commitment,
            started_at=time.time(),
            sessions={s.seat: self._players[s.seat].session_id for s in config.seats},
            signals={
                s.player_id: (self._players[s.seat].device, self._players[s.seat].network)
                for s in config.seats
            },
        )
        self._seating = plan.table_after
        self._stage = Stage.PLAYING
        self._backoff = self._t.retry_initial_seconds
        table_metrics.hand_started(room.variant.value)
        hand_trace.playing(self.table_id, config.hand_id)
        self._start_turn()
        self._publish(hand.events)

    def _start_turn(self) -> None:
        live = self._live
        seat = live.hand.actor_seat if live is not None and not live.hand.is_over else None
        if seat is None:
            self._turn = None
            self._wake_at = None
            return
        self._turn = (seat, self._now())
        self._wake_at = self._turn_end()

    def _charge_time_bank(self, seat: int, *, timed_out: bool) -> None:
        """Rules 9: the action time is free; what runs past it comes out of the seat's bank."""
        player = self._players.get(seat)
        if player is None or self._turn is None or self._turn[0] != seat:
            return
        if timed_out:
            if not player.presence.disconnected:
                table_metrics.time_bank_spent(player.time_bank)
                player.time_bank = 0.0
            return
        used = self._now() - self._turn[1] - self._t.action_seconds
        if used > 0:
            table_metrics.time_bank_spent(min(used, player.time_bank))
            player.time_bank = max(0.0, player.time_bank - used)

    def _deadline_wall(self) -> float | None:
        end = self._turn_end()
        return None if end is None else time.time() + (end - self._now())

    async def _expire_turn(self) -> None:
        live = self._live
        if live is None or live.hand.is_over or self._turn is None:
            return
        seat = self._turn[0]
        player = self._players.get(seat)
        # Rules 9: check when a check is allowed, otherwise fold; never an automatic call. Played on a
        # copy until the log has it: a refused append (Redis away) must leave the hand as it was.
        trial = copy.deepcopy(live.hand)
        events = trial.timeout(seat)
        await self._log.append(self.room.room_id, live.config.hand_id, [{"seat": seat, "action": "TIMEOUT"}])
        live.hand = trial
        if player is not None and not player.presence.disconnected:
            live.timed_out.add(seat)
        self._charge_time_bank(seat, timed_out=True)
        table_metrics.turn_timed_out()
        self._start_turn()
        self._publish(events)

    async def _settle(self) -> None:
        live = self._live
        assert live is not None
        result = live.hand.result
        assert result is not None
        nets = [(live.sessions[r.seat], r.net) for r in result.results]
        record = hand_record(
            room=self.room,
            table_id=self.table_id,
            config=live.config,
            events=live.hand.events,
            commitment=live.commitment,
            started_at=live.started_at,
            signals=live.signals,
            decision_ms=live.decision_ms,
        )
        try:
            # Settled means history gets the record, whatever becomes of this process: it is kept
            # durably before the cashier hears of the hand; whoever opens the table next sends it if the
            # cashier settled the hand and drops it if not.
            await self._outbox.keep(self.table_id, live.config.hand_id, record.SerializeToString())
            # A fenced write first: a shard that lost the room must not settle behind the new owner.
            await self._log.mark_live(self.room.room_id, self.table_id, live.config.hand_id)
            with hand_trace.phase(self.table_id, "settle"):
                await self._cashier.settle_hand(
                    hand_id=live.config.hand_id,
                    table_id=self.table_id,
                    pool=self.room.pool,
                    nets=nets,
                    rake=result.rake,
                )
        except DomainError as error:
            self._fence_on(error)
            if self._fenced:
                return
            # No next hand before the cashier acknowledged this one; the retry sends the same hand id.
            if not self._paused:
                self._paused = True
                self._publish_notice("TABLE_PAUSED", "waiting for the cashier to settle the hand")
            log.warning(
                "settlement not acknowledged; retrying",
                table_id=self.table_id,
                hand_id=live.config.hand_id,
                reason=error.reason,
            )
            self._retry_later()
            return
        self._paused = False
        self._backoff = self._t.retry_initial_seconds
        self.hands_settled += 1
        table_metrics.hand_settled(self.table_id, self.room.variant.value)
        hand_trace.settled(self.table_id, live.config.hand_id)
        self._recent.append((time.time(), sum(p.amount + p.rake for p in result.pots)))
        self._seating = self._seating.apply_result(result)
        self._last = live
        self._live = None
        self._stage = Stage.IDLE
        self._after_hand(AfterHand(live.config.hand_id, record, self.table_id))
        await self._log.forget(live.config.hand_id)
        await self._log.clear_live(self.table_id, live.config.hand_id)
        self._publish_notice("HAND_SETTLED", f"hand {live.config.hand_id} settled")
        self._count_hand(live)
        await self._finish_leavers()

    async def _finish_leavers(self) -> None:
        """Cash out players who left during a hand, and players with no chips left."""
        if self._stage not in (Stage.IDLE, Stage.COUNTDOWN):
            return
        for seat, player in list(self._players.items()):
            seated = self._seating.player_at(seat)
            if not player.leaving and seated is not None and seated.stack > 0:
                continue
            try:
                await self._cashier.cash_out(player.session_id)
            except DomainError as error:
                log.warning("cash-out failed; retrying", table_id=self.table_id, reason=error.reason)
                self._retry_later()
                continue
            self._stand_up(seat)

    def _stand_up(self, seat: int) -> None:
        player = self._players.pop(seat)
        self._time_banks.keep(player.player_id, player.time_bank, self._now())
        if self._seating.player_at(seat) is not None:
            self._seating = self._seating.stand_up(seat)
        self._publish_notice("PLAYER_LEFT", f"{player.player_id} left seat {public_seat(seat)}", seat=seat)

    # ------------------------------------------------------------------ seats

    def seats_player(self, player_id: str) -> bool:
        return self._seat_of(player_id) is not None

    def _seat_of(self, player_id: str) -> int | None:
        return next((seat for seat, p in self._players.items() if p.player_id == player_id), None)

    def _require_open(self) -> None:
        if self._stage is Stage.RECOVERING:
            raise Unavailable("UNAVAILABLE", "the table is opening; retry")

    # ------------------------------------------------------------------ commands (run inside the actor)

    async def sit_down(
        self,
        player_id: str,
        request_id: str,
        seat: int,
        buy_in: int,
        wait_for_big_blind: bool,
        signals: tuple[str, str] = ("", ""),
    ) -> table_pb2.SitDownResponse:
        """`signals`: the (device, network) signals of the caller's token, kept with the seat."""
        if seat and not 1 <= seat <= self.room.seats:
            # Bad input whatever the state of the table.
            raise InvalidArgument("FIELD_INVALID", "no such seat", {"field": "seat"})
        self._require_open()

        async def run() -> table_pb2.SitDownResponse:
            if self._seat_of(player_id) is not None:
                raise FailedPrecondition("ALREADY_SEATED", "you already have a seat at this table")
            if seat:
                chosen = seat - 1
                if chosen in self._players:
                    raise FailedPrecondition("SEAT_TAKEN", "the seat is taken")
            else:
                free = [s for s in range(self.room.seats) if s not in self._players]
                if not free:
                    raise FailedPrecondition("TABLE_FULL", "every seat is taken")
                chosen = free[0]
            # The lobby's access and maintenance rules (private rooms, no new seats) come first.
            await self._rooms.authorize_seat(player_id, self.room.room_id)
            digest = hashlib.sha256(f"{player_id}\0{request_id}".encode()).hexdigest()[:24]
            session = await self._cashier.open_seat_session(
                session_id=f"{self.table_id}:{digest}",
                player_id=player_id,
                table_id=self.table_id,
                seat=public_seat(chosen),
                pool=self.room.pool,
                buy_in=buy_in,
                min_buy_in=self.room.min_buy_in,
                max_buy_in=self.room.max_buy_in,
            )
            entry = Entry.WAIT_FOR_BIG_BLIND if wait_for_big_blind else Entry.POST_NOW
            self._seating = self._seating.sit_down(chosen, player_id, session.stack, entry)
            bank = self._time_banks.bank_for(player_id, self._t.time_bank_seconds, self._now())
            self._players[chosen] = PlayerSeat(
                player_id,
                session.session_id,
                bank,
                entry=entry,
                device=signals[0],
                network=signals[1],
            )
            self._publish_notice(
                "PLAYER_SAT_DOWN", f"{player_id} sat at seat {public_seat(chosen)}", seat=chosen
            )
            response = table_pb2.SitDownResponse(seat=public_seat(chosen), seat_session_id=session.session_id)
            response.stack.pool = self.room.pool  # type: ignore[assignment]
            response.stack.amount = session.stack
            return response

        return await self._answers.once(
            (player_id, "SitDown", request_id), (seat, buy_in, wait_for_big_blind), run
        )

    async def leave(self, player_id: str, request_id: str) -> table_pb2.LeaveTableResponse:
        self._require_open()

        async def run() -> table_pb2.LeaveTableResponse:
            seat = self._seat_of(player_id)
            if seat is None:
                raise FailedPrecondition("NOT_SEATED", "you have no seat at this table")
            player = self._players[seat]
            response = table_pb2.LeaveTableResponse()
            response.cashed_out.pool = self.room.pool  # type: ignore[assignment]
            live = self._live
            if player.leaving or (live is not None and seat in live.sessions):
                # Rules 12: folded at once; the chips already in stay; cash-out after settlement.
                if not player.leaving:
                    events: tuple[Event, ...] = ()
                    if live is not None and live.hand.can_leave(seat):
                        # On a copy until the log has it (a refused append changes nothing).
                        trial = copy.deepcopy(live.hand)
                        events = trial.leave(seat)
                        await self._log.append(
                            self.room.room_id, live.config.hand_id, [{"seat": seat, "action": "LEAVE"}]
                        )
                        live.hand = trial
                        if self._turn is not None and self._turn[0] == seat:
                            self._charge_time_bank(seat, timed_out=False)
                    player.leaving = True
                    self._seating = self._seating.sit_out(seat)
                    if events:
                        self._start_turn()
                        self._publish(events)
                response.folded_mid_hand = True
                return response
            amount = await self._cashier.cash_out(player.session_id)
            self._stand_up(seat)
            response.cashed_out.amount = amount
            return response

        return await self._answers.once((player_id, "LeaveTable", request_id), (), run)

    async def act(
        self, player_id: str, request_id: str, hand_id: str, kind: int, amount: int
    ) -> table_pb2.ActResponse:
        async def run() -> table_pb2.ActResponse:
            seat = self._seat_of(player_id)
            if seat is None:
                raise FailedPrecondition("NOT_SEATED", "you have no seat at this table")
            live = self._live
            if live is None or self._stage is not Stage.PLAYING:
                raise FailedPrecondition("NO_HAND_IN_PROGRESS", "no hand is running")
            if hand_id != live.config.hand_id:
                raise FailedPrecondition("HAND_IS_OVER", "that hand is not the running hand")
            # Played on a copy until the log has it: a refused append (Redis away) leaves the hand,
            # the clock and the time bank as they were, and the retry plays it.
            hand = copy.deepcopy(live.hand)
            try:
                if kind == table_pb2.ACTION_KIND_ALL_IN:
                    hand.verify_all_in(seat)
                    entry: dict[str, Any] = {"seat": seat, "action": "ALL_IN"}
                    apply: Callable[[], tuple[Event, ...]] = lambda: hand.all_in(seat)  # noqa: E731
                else:
                    engine_kind = _ENGINE_ACTIONS.get(kind)
                    if engine_kind is None:
                        raise InvalidArgument("FIELD_REQUIRED", "an action is needed", {"field": "action"})
                    to = amount if engine_kind in (ActionKind.BET, ActionKind.RAISE) and amount else None
                    action = Action(seat, engine_kind, to)
                    entry = {"seat": seat, "action": engine_kind.value, "to": to}
                    apply = lambda: hand.act(action)  # noqa: E731
                was_turn = hand.actor_seat == seat
                mark = len(hand.events)
                events = apply()
            except IllegalActionError as error:
                raise engine_refusal(error) from error
            # Durable before anyone hears of it: a shard that takes over replays the log.
            await self._log.append(self.room.room_id, live.config.hand_id, [entry])
            live.hand = hand
            waited = self._now() - self._turn[1] if was_turn and self._turn is not None else None
            if was_turn:
                if self._turn is not None:
                    # Fair play (rules 17): how long the decision took (at least 1: 0 means not measured).
                    live.decision_ms[mark] = max(1, round((self._now() - self._turn[1]) * 1000))
                self._charge_time_bank(seat, timed_out=False)
                live.acted.add(seat)
            table_metrics.action_accepted(str(entry["action"]), waited)
            hand_trace.action(self.table_id, seat, str(entry["action"]))
            self._start_turn()
            messages = self._publish(events)
            own = messages.get(seat)
            response = table_pb2.ActResponse()
            if own:
                response.event.CopyFrom(own[0])
            return response

        return await self._answers.once((player_id, "Act", request_id), (hand_id, kind, amount), run)

    async def set_player_seed(
        self, player_id: str, request_id: str, seed: bytes
    ) -> table_pb2.SetPlayerSeedResponse:
        self._require_open()

        async def run() -> table_pb2.SetPlayerSeedResponse:
            seat = self._seat_of(player_id)
            if seat is None:
                raise FailedPrecondition("NOT_SEATED", "you have no seat at this table")
            pending = self._next
            if pending is None:
                raise FailedPrecondition("ENTROPY_CLOSED", "no hand is open for client seeds now")
            hand_id = pending.commitment.hand_id
            await self._fairness.add_entropy(hand_id, public_seat(seat), player_id, seed)
            pending.seeds[seat] = seed
            return table_pb2.SetPlayerSeedResponse(hand_id=hand_id)

        return await self._answers.once((player_id, "SetPlayerSeed", request_id), (seed,), run)

    async def sit_out(self, player_id: str, request_id: str, back_in: bool, wait: bool) -> int:
        self._require_open()

        async def run() -> int:
            seat = self._seat_of(player_id)
            if seat is None:
                raise FailedPrecondition("NOT_SEATED", "you have no seat at this table")
            player = self._players[seat]
            if player.leaving:
                return int(table_pb2.SEAT_STATUS_SITTING_OUT)
            try:
                if back_in:
                    player.entry = Entry.WAIT_FOR_BIG_BLIND if wait else Entry.POST_NOW
                    player.presence.sit_in()
                else:
                    # The sit-out limit (POKER_TABLE_SIT_OUT_SECONDS) runs from the first SitOut.
                    player.presence.sit_out(self._now())
                self._sync_seat(seat)
            except SeatingError as error:
                raise engine_refusal(error) from error
            self._publish_notice("PLAYER_SAT_IN" if back_in else "PLAYER_SAT_OUT", player_id, seat=seat)
            return self._status(seat)

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
            self._chat.admit(player_id, self.table_id, time.time())
            message = table_pb2.ChatMessage(player_id=player_id, text=text, sticker_id=sticker)
            sent = self._broadcast({None: {"chat": message}}, seat=seat)
            return table_pb2.SendChatResponse(event=sent)

        return await self._answers.once((player_id, "SendChat", request_id), (text, sticker), run)

    def figures(self, shard_id: str) -> TableFigures:
        """The table's public figures for the lobby (no card, public seat numbers from 1)."""
        now = time.time()
        pots = [pot for _, pot in list(self._recent)[-50:]]
        taken = tuple(
            SeatFigures(
                seat=public_seat(seat),
                display_name=player.player_id,
                stack=seated.stack if (seated := self._seating.player_at(seat)) is not None else 0,
                sitting_out=seated is None or seated.sitting_out,
            )
            for seat, player in sorted(self._players.items())
        )
        return TableFigures(
            table_id=self.table_id,
            room_id=self.room.room_id,
            shard_id=shard_id,
            seats=self.room.seats,
            taken_seats=taken,
            hand_in_progress=self._stage in (Stage.PLAYING, Stage.SETTLING),
            average_pot=sum(pots) // len(pots) if pots else 0,
            hands_per_hour=sum(1 for ended, _ in self._recent if now - ended <= 3600),
        )

    async def snapshot(self, player_id: str) -> table_pb2.TableView:
        seat = self._seat_of(player_id)
        state = self._state()
        return self._waiting_view(state) if seat is None else table_view(state, seat)

    def _waiting_view(self, state: TableState) -> table_pb2.TableView:
        """What a caller without a seat sees on WatchTable and GetTableSnapshot: the table, who sits
        where with the stacks of the last settled hand, the phase and the hand's commitment; nothing
        of a hand's play. Whoever has no seat is a spectator, and spectators see the play only through
        SpectateTable, the delay late (rules 14)."""
        view = table_view(state, None)
        for name in ("street", "to_act_seat", "board", "pots", "legal_actions", "awards"):
            view.ClearField(name)
        for seat_view in view.seats:
            settled = self._seating.player_at(seat_view.seat - 1) if seat_view.seat > 0 else None
            if settled is not None:
                seat_view.stack = settled.stack
            for name in ("bet_this_round", "folded", "all_in", "hole_cards", "time_bank_seconds"):
                seat_view.ClearField(name)  # type: ignore[arg-type]
        return view

    def _update_waiting(self, state: TableState) -> None:
        """Send the waiting view to every watcher without a seat whose view it changes."""
        waiting = [w for w in self._watchers if self._seat_of(w.player_id) is None]
        if not waiting:
            return
        view = self._waiting_view(state)
        timeless = table_pb2.TableView()
        timeless.CopyFrom(view)
        timeless.ClearField("as_of")
        key = timeless.SerializeToString(deterministic=True)
        for watcher in waiting:
            if watcher.waiting != key:
                watcher.waiting = key
                self._put_latest(watcher, table_pb2.WatchTableResponse(view=view))

    def _put_latest(self, watcher: Watcher, update: table_pb2.WatchTableResponse) -> None:
        offer(watcher, update, lambda: update)

    async def watch(self, player_id: str) -> Watcher:
        """A WatchTable stream: the full view first; for a seated player the stream is presence
        (a new one within the seat reserve reconnects, and the others see the status change)."""
        open_streams = sum(1 for w in self._watchers if w.player_id == player_id)
        if open_streams >= self._t.max_streams_per_player:
            # A client reconnecting in a loop without closing its streams must not fill the table.
            raise ResourceExhausted(
                "WATCH_STREAMS_EXCEEDED",
                f"at most {self._t.max_streams_per_player} WatchTable streams per player at a table; "
                "close one first",
                {"max_streams_per_player": str(self._t.max_streams_per_player)},
            )
        watcher = Watcher(player_id, self._t.watch_queue_size)
        self._stream_opened(player_id)
        first = table_pb2.WatchTableResponse(view=await self.snapshot(player_id))
        watcher.queue.put_nowait(first)
        self._watchers.add(watcher)
        table_metrics.stream_opened("watcher")
        return watcher

    def unwatch(self, watcher: Watcher) -> None:
        """The stream ended (called outside the actor): the actor takes note on its next turn."""
        if watcher not in self._watchers:
            return
        self._watchers.discard(watcher)
        table_metrics.stream_closed("watcher")
        self._closed_streams.append(watcher.player_id)
        with contextlib.suppress(asyncio.QueueFull):
            # Wake the actor; when the queue is full it is awake anyway.
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            # Nobody awaits it: a refusal (a closed or fenced table) is read here, never logged as lost.
            future.add_done_callback(lambda f: f.cancelled() or f.exception())
            self._queue.put_nowait((_nothing, future))

    async def spectate(self, player_id: str) -> Spectator:
        """A SpectateTable stream: the public view `spectator_delay_seconds` late (rules 14), starting
        from a snapshot that is itself that old. Whoever the caller is, they get the public view."""
        if len(self._spectators) >= self._t.max_spectators:
            raise ResourceExhausted(
                "SPECTATORS_FULL",
                f"this table has its {self._t.max_spectators} spectators; try again later",
                {"max_spectators": str(self._t.max_spectators)},
            )
        self._release_feed()
        spectator = Spectator(player_id, self._t.watch_queue_size)
        snapshot = self._delayed_snapshot()
        if snapshot is not None:
            spectator.queue.put_nowait(snapshot)
        self._spectators.add(spectator)
        table_metrics.stream_opened("spectator")
        return spectator

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
        if spectator in self._spectators:
            table_metrics.stream_closed("spectator")
        self._spectators.discard(spectator)

    @property
    def spectator_count(self) -> int:
        return len(self._spectators)

    # ------------------------------------------------------------------ closing an extra table

    def empty_for(self) -> float:
        """Seconds this table has been empty and idle (no seat, no watcher or spectator, no hand); 0 if
        it is not."""
        empty = (
            not self._players
            and not self._watchers
            and not self._spectators
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

    # ------------------------------------------------------------------ views and broadcast

    def _status(self, seat: int) -> int:
        player = self._players.get(seat)
        if player is not None and player.presence.disconnected and not player.leaving:
            return int(table_pb2.SEAT_STATUS_DISCONNECTED)
        seated = self._seating.player_at(seat)
        if seated is None or seated.sitting_out:
            return int(table_pb2.SEAT_STATUS_SITTING_OUT)
        live = self._live
        if live is not None and seat not in live.sessions:
            return int(table_pb2.SEAT_STATUS_WAITING)
        return int(table_pb2.SEAT_STATUS_ACTIVE)

    def _phase(self) -> int:
        if self._paused or self._stage is Stage.RECOVERING:
            return int(table_pb2.TABLE_PHASE_PAUSED)
        if self._stage in (Stage.PLAYING, Stage.SETTLING):
            return int(table_pb2.TABLE_PHASE_HAND_IN_PROGRESS)
        if self._no_new_hands():
            return int(table_pb2.TABLE_PHASE_PAUSED)
        if self._stage is Stage.COUNTDOWN or self._seating.plan_next_hand() is not None:
            return int(table_pb2.TABLE_PHASE_BETWEEN_HANDS)
        return int(table_pb2.TABLE_PHASE_WAITING_FOR_PLAYERS)

    def _state(self, *, as_of_offset: float = 0.0) -> TableState:
        live = self._live
        # During the countdown the view is the next hand's (its commitment, no card yet); the last
        # hand's cards and board are no longer shown, its awards are until the next hand starts.
        shown = live or (self._last if self._next is None else None)
        hand = shown.hand if shown is not None else None
        running = live is not None and not live.hand.is_over
        seats = []
        # Who played the shown hand at each seat: a player who sat down after it is not "in" it
        # (their seat number must never pick up the previous occupant's cards).
        dealt = {s.seat: s.player_id for s in shown.config.seats} if shown is not None else {}
        for seat, player in sorted(self._players.items()):
            seated = self._seating.player_at(seat)
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
                    status=self._status(seat),
                    stack=stack,
                    bet=hand.bets.get(seat, 0) if running and hand is not None else 0,
                    folded=bool(in_hand and hand is not None and not hand.in_hand(seat)),
                    all_in=bool(
                        running and in_hand and hand is not None and hand.in_hand(seat) and stack == 0
                    ),
                    in_hand=bool(in_hand),
                    time_bank_seconds=player.time_bank,
                )
            )
        last_hand = hand if hand is not None else (self._last.hand if self._last is not None else None)
        result: HandEnded | None = last_hand.result if last_hand is not None else None
        awards: tuple[PotAwarded, ...] = result.pots if result is not None else ()
        pending = self._next
        if pending is not None and not running:
            hand_id, commitment = pending.commitment.hand_id, pending.commitment.commitment
        elif shown is not None:
            hand_id, commitment = shown.config.hand_id, shown.commitment
        else:
            hand_id, commitment = "", ""
        legal = hand.legal_actions() if running and hand is not None else None
        return TableState(
            table_id=self.table_id,
            room=self.room,
            phase=self._phase(),
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
            deadline=self._deadline_wall(),
            as_of=time.time() + as_of_offset,
        )

    def _recipients(self) -> dict[Watcher, int | None]:
        return {w: self._seat_of(w.player_id) for w in self._watchers}

    def _publish(self, events: Sequence[Event]) -> dict[int, list[table_pb2.TableEvent]]:
        """Send each engine event to every watcher, redacted for them; returns each seat's messages."""
        by_seat: dict[int, list[table_pb2.TableEvent]] = {}
        if not events:
            return by_seat
        state = self._state()
        recipients = self._recipients()
        seats_wanted = {seat for seat in recipients.values() if seat is not None} | set(self._players)
        views: dict[int | None, table_pb2.TableView] = {}
        for raw in events:
            self._sequence += 1
            now = time.time()
            per_seat: dict[int | None, table_pb2.TableEvent] = {}
            for seat in (*seats_wanted, None):
                (redacted,) = redact_for([raw], seat)
                where, body = event_body(redacted, seat)
                message = table_pb2.TableEvent(sequence=self._sequence, seat=where, **body)  # type: ignore[arg-type]
                message.time.FromNanoseconds(int(now * 1e9))
                per_seat[seat] = message
                if seat is not None:
                    by_seat.setdefault(seat, []).append(message)
            for watcher, seat in recipients.items():
                if seat is None:
                    continue  # no seat, no live play: the waiting view below
                if seat not in views:
                    views[seat] = table_view(state, seat)
                self._deliver(watcher, per_seat[seat], views[seat], state)
            self._feed_push(per_seat[None], state)
        self._update_waiting(state)
        return by_seat

    def _publish_notice(self, code: str, text: str, *, seat: int | None = None) -> None:
        self._broadcast({None: {"notice": notice(code, text)}}, seat=seat)

    def _broadcast(self, body: dict[None, dict[str, Any]], *, seat: int | None) -> table_pb2.TableEvent:
        """A table event that is the same for everybody (notices, chat)."""
        self._sequence += 1
        message = table_pb2.TableEvent(
            sequence=self._sequence, seat=public_seat(seat) if seat is not None else 0, **body[None]
        )
        message.time.FromNanoseconds(int(time.time() * 1e9))
        state = self._state()
        if self._watchers:
            views: dict[int | None, table_pb2.TableView] = {}
            for watcher, recipient in self._recipients().items():
                if recipient is None:
                    continue  # chat and notices reach those without a seat through SpectateTable
                if recipient not in views:
                    views[recipient] = table_view(state, recipient)
                self._deliver(watcher, message, views[recipient], state)
            self._update_waiting(state)
        self._feed_push(message, state)
        return message

    def _deliver(
        self, watcher: Watcher, event: table_pb2.TableEvent, view: table_pb2.TableView, state: TableState
    ) -> None:
        def now() -> table_pb2.WatchTableResponse:
            # A slow client: the table as it is now, instead of what it did not read.
            seat = self._seat_of(watcher.player_id)
            return table_pb2.WatchTableResponse(
                view=self._waiting_view(state) if seat is None else table_view(state, seat)
            )

        offer(watcher, table_pb2.WatchTableResponse(event=event, view=view), now)


async def _nothing() -> None:
    """A command that only wakes the actor (its `_advance` does the work)."""


_ENGINE_ACTIONS: dict[int, ActionKind] = {
    table_pb2.ACTION_KIND_FOLD: ActionKind.FOLD,
    table_pb2.ACTION_KIND_CHECK: ActionKind.CHECK,
    table_pb2.ACTION_KIND_CALL: ActionKind.CALL,
    table_pb2.ACTION_KIND_BET: ActionKind.BET,
    table_pb2.ACTION_KIND_RAISE: ActionKind.RAISE,
}
