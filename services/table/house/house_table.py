"""A house-game table (Casino Hold'em, Russian Poker): each player's rounds against the dealer, paid
by the pool's house bank.

The table is the shell around the rounds' pure core (`house_core.py`, docs/house-games.md "The round
core"): it feeds the core PlaceHouseBets (after the room's and the house bank's checks and the
fairness commitment), MakeHouseDecision, the clock's ticks and every outgoing call's answer; it
appends each step's journal entries before it answers the player or publishes a notice; then it
runs the step's effects (stakes, seal, decision stakes, settlement, refunds, reveals, records, the
cover's release), and whatever call failed is sent again from `house_core.outstanding` (the same
ids: applied once). Rounds of different players are independent (each its own deck and fairness
chain) and run side by side; one player's commands and their rounds' calls run one at a time (a
lock per player), and the core's state changes one step at a time (one lock per table).

A round, start to end (docs/house-games.md, "The table service"):
1. PlaceHouseBets: the rules' and the room's checks; the house bank read (below its threshold:
   HOUSE_BANK_PAUSED; unable to cover the round's largest payout beside the open rounds:
   HOUSE_BANK_CANNOT_COVER); the fairness commitment (the one SetPlayerSeed opened, or a new one);
   the journal's `open`; the stakes wallet -> house bank as one linked batch `hgr:<round>:in:<box>`;
   the seal (the deck); the journal's `dealt`. Only then is a card shown.
2. MakeHouseDecision: the rules' check, the journal's `decision`, the extra stake
   `hgr:<round>:b<box>:<n>:<decision>` wallet -> house bank, then the decision takes effect. A box
   that does not decide within `decision_seconds` takes the rules' default (fold where allowed,
   else take the ante), noted in the view and the record.
3. When every box has decided: the library's settlement becomes one linked batch (house bank ->
   wallet `hgr:<round>:out:<box>`, jackpot -> wallet `hgr:<round>:jp:<box>`, the jackpot's part of
   a lost bonus wallet -> jackpot `hgr:<round>:jc:<box>`), retried with the same ids until the
   cashier acknowledges it; then the journal's `closed`, the reveal and the record.
A round whose stakes may have been taken but that was never dealt (cashier or fairness down half
way, a shard killed) is refunded: the stake batch is sent again (same ids: applied at most once),
then returned with `hgr:<round>:void:<box>`, and the hand is revealed as voided. A dealt round is
resumed after a restart, never refunded.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import functools
import hashlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from house_games import (
    Account,
    BoxWager,
    HouseGameError,
)
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from service_runtime.errors import (
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Unavailable,
)
from service_runtime.structured_logging import get_logger
from service_runtime.table_directory import MaintenanceSwitches
from service_runtime.tasks import cancel_and_wait
from services.table import metrics as table_metrics
from services.table.cash.hand_record import seen_positions
from services.table.cash.settlement import AfterHand
from services.table.cash.views import notice
from services.table.house import house_core as core
from services.table.house.house_core import house_room_error
from services.table.house.house_round import (
    BoxBet,
    Decision,
    HouseGame,
    HouseRoom,
    PlannedTransfer,
    check_bets,
    fairness_chain,
    largest_payout,
    paid_back,
)
from services.table.house.house_views import RoundRun, round_record, round_view, run_of, table_view
from services.table.idempotency import AnswerMemory
from services.table.log.record_outbox import MemoryOutbox, RecordOutbox
from services.table.ports.clock import WALL_CLOCK, Clock, Timer
from services.table.ports.dependencies import (
    Commitment,
    FairnessClient,
    HouseCashier,
    HouseTransfer,
    house_transfer,
)
from services.table.ports.remote import is_unavailable
from services.table.streams.table_streams import Watcher, offer

T = TypeVar("T")
log = get_logger("table.house")

BALANCE_REFRESH_SECONDS = 1.0
# A PlaceHouseBets request id whose rounds were refunded or refused this many times in a row is not
# looked up further (a client that keeps retrying one id past that starts a new id).
MAX_ATTEMPTS_LOOKED_UP = 16


class Journal(Protocol):
    """services/table/house/house_journal.py: shared and fenced with Redis, a file of the one shard without."""

    async def append(self, room_id: str, table_id: str, token: int, entry: dict[str, Any]) -> None: ...

    async def open_rounds(self, table_id: str) -> dict[str, dict[str, Any]]: ...

    async def open_entries(self, table_id: str) -> list[dict[str, Any]]: ...

    async def tables(self) -> list[str]: ...

    async def last_views(self, table_id: str) -> dict[str, str]: ...


@dataclass(frozen=True, slots=True)
class HouseTimings:
    decision_seconds: float = 20.0
    retry_initial_seconds: float = 0.2
    retry_max_seconds: float = 5.0
    watch_queue_size: int = 64
    bank_minimum: int = 0
    # Added to what was left of a resumed round's decision time (a restart or a takeover).
    handover_grace_seconds: float = 5.0
    # Finished rounds the table remembers (house_core.KEEP_FINISHED_ROUNDS).
    keep_finished_rounds: int = core.KEEP_FINISHED_ROUNDS


class HouseTable:
    def __init__(
        self,
        table_id: str,
        room: HouseRoom,
        *,
        cashier: HouseCashier,
        fairness: FairnessClient,
        journal: Journal,
        after_round: Callable[[AfterHand], None],
        timings: HouseTimings,
        maintenance: Callable[[str], MaintenanceSwitches] = lambda room_id: MaintenanceSwitches(),
        admit: Callable[[str], Awaitable[HouseRoom]] | None = None,
        outbox: RecordOutbox | None = None,
        clock: Clock = WALL_CLOCK,
    ) -> None:
        self.table_id = table_id
        # Every time and timer of this table (ports/clock.py).
        self._clock = clock
        # Settled rounds' records until history has them (services/table/log/record_outbox.py).
        self._outbox: RecordOutbox = outbox or MemoryOutbox()
        self.room = room
        # The lobby's seat check before a round's stakes, returning the room as of now (issue 23).
        self._admit = admit
        self._cashier = cashier
        self._fairness = fairness
        self._journal = journal
        self._after_round = after_round
        self._t = timings
        self._maintenance = maintenance
        # The rounds' core (services/table/house/house_core.py): the shell feeds it, journals its entries,
        # then publishes its notices and runs its effects.
        self._state = core.empty(
            table_id, room, timings.decision_seconds, keep_finished=timings.keep_finished_rounds
        )
        self._core_lock = asyncio.Lock()
        self._shown: dict[str, str] = {}  # player -> their latest dealt round (the view's)
        # player -> their last round's view at the room's previous owner (show_last_views)
        self._last_views: dict[str, table_pb2.HouseRoundView] = {}
        self._records: dict[str, history_pb2.HandRecord] = {}
        self._timer: Timer | None = None
        self._retrying: asyncio.Task[None] | None = None
        self._pending: dict[str, Commitment] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._answers = AnswerMemory()
        self._watchers: set[Watcher] = set()
        self._background: set[asyncio.Task[None]] = set()
        self._commands_running: set[asyncio.Task[Any]] = set()
        self._bank = 0
        self._jackpot = 0
        self._balances_at = -1e18
        # The last read, for the shard's figures while this table is open (metrics.py, scrape time).
        self._bank_read: table_metrics.BankRead | None = None
        self._sequence = 0
        self._closed = False
        self._handing_over = False
        self._commands = 0  # player commands under way (set_player_seed, place_bets, make_decision)
        self.rounds_settled = 0
        self.rounds_voided = 0

    # ------------------------------------------------------------------ lifecycle (the shard's view)

    fenced = False
    # The room's fencing token when the shard opened this table (the shard releases the room with it).
    fencing_token = 0

    def start(self) -> None:
        return None

    def hand_over(self) -> None:
        """No new round from now on (the room moves to another shard); running rounds play out."""
        self._handing_over = True

    def keep(self) -> None:
        """The room stays here after all: new rounds again."""
        self._handing_over = False

    @property
    def between_hands(self) -> bool:
        """No open round (dealt or not yet: its stakes may be taken) and no command under way (a
        round being opened is not in the rounds yet): the table can stop without leaving a round to
        the next owner, who would refund one never dealt. A round whose call failed is sent again
        (`_retry_later`), so a drain waits for it up to its bound."""
        return self.open_rounds() == 0 and self._commands == 0

    @contextlib.contextmanager
    def _command(self) -> Iterator[None]:
        self._commands += 1
        try:
            yield
        finally:
            self._commands -= 1

    async def _command_once(
        self, player: str, method: str, request_id: str, fingerprint: Any, run: Callable[[], Awaitable[T]]
    ) -> T:
        """A player's command, once per request id, one at a time per player; run to its end even
        if its caller goes away (a deadline, a dropped connection): stakes taken are dealt on and a
        decision's stake takes effect, never stopped half way, and the caller's retry gets the
        answer. Only the table's stop cancels it (a round it leaves open is the next owner's)."""

        async def command() -> T:
            with self._command():
                async with self._lock(player):
                    return await self._answers.once((player, method, request_id), fingerprint, run)

        task = asyncio.create_task(command())
        self._commands_running.add(task)
        task.add_done_callback(self._command_ended)
        return await asyncio.shield(task)

    def _command_ended(self, task: asyncio.Task[Any]) -> None:
        self._commands_running.discard(task)
        if not task.cancelled():
            task.exception()  # taken: an answer whose caller went away is nobody's error

    @property
    def bank_read(self) -> table_metrics.BankRead | None:
        """The pool's bank as this table last read it; None before its first read and once it closed
        (a figure of a room this shard no longer serves must not be exported: issue 40)."""
        return None if self._closed else self._bank_read

    async def stop(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
        for task in [*self._background, *self._commands_running]:
            await cancel_and_wait(task)
        # Left open in the journal: whoever opens the table next resumes them; their cover stays
        # reserved in the ledger until they settle or are refunded there.

    def _with_view(self, entry: dict[str, Any], after: core.HouseState) -> dict[str, Any]:
        """A `closed` entry as journaled: with the round's player and the view it ended with, which
        the room's next owner shows that player (house_journal `last_views`)."""
        if entry["type"] != "closed":
            return entry
        round_ = after.rounds.get(str(entry["round_id"]))
        run = None if round_ is None else run_of(self.room, round_)
        if round_ is None or run is None:
            return entry
        view = round_view(run).SerializeToString()
        return {**entry, "player": round_.player, "view": base64.b64encode(view).decode()}

    def show_last_views(self, views: dict[str, str]) -> None:
        """The view of each player's last round closed at this table before it opened here (by the
        room's last owner, or this shard's last life): shown until they play a round here."""
        for player, encoded in views.items():
            try:
                self._last_views[player] = table_pb2.HouseRoundView.FromString(base64.b64decode(encoded))
            except (binascii.Error, ValueError):
                log.warning("a last round view not read", table_id=self.table_id)

    async def _log(self, entry: dict[str, Any]) -> None:
        """Journal a step of a round; a shard that lost the room is fenced (and the table closes)."""
        try:
            await self._journal.append(self.room.room_id, self.table_id, self.fencing_token, entry)
        except FailedPrecondition as error:
            if error.reason == "SHARD_NOT_OWNER":
                self.fenced = True
            raise

    async def call(self, command: Callable[[], Awaitable[T]]) -> T:
        if self._closed:
            raise Unavailable("UNAVAILABLE", "the table is closed")
        return await command()

    @property
    def closed(self) -> bool:
        """Stopped (its room handed over, or the shard stopping) or fenced."""
        return self._closed or self.fenced

    @property
    def has_seat_sessions(self) -> bool:
        return False  # a round's stakes move between wallet and bank: no seat to reopen

    async def quiet_for_handover(self) -> bool:
        return self.between_hands  # rounds run in their own tasks; nothing queued to wait for

    def takes_part(self, player_id: str) -> bool:
        return self.knows_player(player_id)

    def holds_own_stream(self, player_id: str) -> bool:
        # A committed next round alone (SetPlayerSeed, which costs nothing) does not count, or any
        # account could take the seated players' reserve.
        return self.has_round(player_id)

    def knows_player(self, player: str) -> bool:
        """A round (running or finished) or a committed next round of this player here."""
        return player in self._shown or player in self._pending

    def has_round(self, player: str) -> bool:
        """A round of this player here, running or finished: one they staked on (a committed next
        round, which SetPlayerSeed opens without a stake, is not one)."""
        return player in self._shown

    def open_rounds(self) -> int:
        return sum(1 for r in self._state.rounds.values() if r.stage.open)

    def _lock(self, player: str) -> asyncio.Lock:
        lock = self._locks.get(player)
        if lock is None:
            lock = self._locks[player] = asyncio.Lock()
        return lock

    def _spawn(self, work: Awaitable[None]) -> None:
        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("house table background step failed", table_id=self.table_id)

        task = asyncio.create_task(guarded())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------------ feeding the core

    async def _feed(self, given: core.Input) -> core.Step:
        """Feed the core one input: its entries journaled (in order) before anything else, then its
        notices published and its effects returned to run. A refusal raises (nothing happened); a
        journal that fails raises too, with the state as far as the journal has it."""
        async with self._core_lock:
            step = core.feed(self._state, given)
            deck = given.deck if isinstance(given, (core.Sealed, core.Resume)) else None
            try:
                for entry in step.entries:
                    await self._log(self._with_view(entry, step.state))
                    self._state = core.apply_entry(self._state, entry, deck)
                    _say_refunding(entry, self.table_id)
                self._state = step.state
            finally:
                self._after_state()
        for n in step.notices:
            self._publish(n.player, n.code, n.text)
        return step

    def _after_state(self) -> None:
        rounds = self._state.rounds
        for player, round_id in self._state.latest.items():
            if rounds[round_id].deck is not None:
                self._shown[player] = round_id
                self._last_views.pop(player, None)
        # A round the core forgot (the oldest finished ones) is shown no more.
        self._shown = {player: round_id for player, round_id in self._shown.items() if round_id in rounds}
        self._rearm()

    def _rearm(self) -> None:
        """The clock: a Tick at the earliest deadline of a round waiting for a decision."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._closed:
            return
        rounds = (self._state.rounds[round_id] for round_id in self._state.latest.values())
        deadlines = [
            r.deadline
            for r in rounds
            if r.stage is core.Stage.PLAYING and r.pending is None and r.deadline is not None
        ]
        if not deadlines:
            return
        self._timer = self._clock.call_at(min(deadlines), lambda: self._spawn(self._tick()))

    async def _tick(self) -> None:
        try:
            step = await self._feed(core.Tick(self._clock.now()))
        except DomainError as error:
            if self.fenced or self._closed:
                return
            # The journal is away: the defaults are taken again shortly.
            log.warning("round default not taken yet", table_id=self.table_id, reason=error.reason)
            self._timer = self._clock.call_at(
                self._clock.now() + self._t.retry_max_seconds, lambda: self._spawn(self._tick())
            )
            return
        for effect in step.effects:
            self._spawn(self._run_locked(effect))

    def _player_of(self, effect: core.Effect) -> str:
        player = getattr(effect, "player", None)
        if player is not None:
            return str(player)
        return self._state.rounds[effect.round_id].player

    async def _run_locked(self, effect: core.Effect) -> None:
        """An effect run in the background: under its player's lock, if it is still due."""
        async with self._lock(self._player_of(effect)):
            if isinstance(effect, core.Finish) or effect in core.outstanding(self._state):
                await self._run_all([effect])

    async def _run_all(self, effects: Sequence[core.Effect]) -> DomainError | None:
        """Run effects in order (and the ones their answers bring); the first failure of a call is
        returned (the call is retried from `outstanding()` in the background)."""
        failed: DomainError | None = None
        queue = list(effects)
        while queue and not self._closed:
            effect = queue.pop(0)
            try:
                step = await self._run(effect)
            except _Refused:
                continue
            except DomainError as error:
                if self.fenced:
                    raise
                failed = failed or error
                self._retry_later()
                continue
            if step is not None:
                queue.extend(step.effects)
        return failed

    def _retry_later(self) -> None:
        if self._closed or (self._retrying is not None and not self._retrying.done()):
            return

        async def retry() -> None:
            backoff = self._t.retry_initial_seconds
            while not self._closed and not self.fenced:
                await self._clock.sleep(backoff)
                backoff = min(self._t.retry_max_seconds, backoff * 2)
                due = core.outstanding(self._state)
                if not due:
                    return
                failed = False
                for effect in due:
                    async with self._lock(self._player_of(effect)):
                        if effect not in core.outstanding(self._state):
                            continue
                        try:
                            step = await self._run(effect)
                        except _Refused:
                            continue
                        except DomainError as error:
                            if self.fenced:
                                return
                            log.warning("round call waits", round_id=effect.round_id, reason=error.reason)
                            failed = True
                            continue
                        if step is not None and await self._run_all(step.effects) is not None:
                            failed = True
                if not failed and not core.outstanding(self._state):
                    return

        task = asyncio.create_task(retry())
        self._retrying = task
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _run(self, effect: core.Effect) -> core.Step | None:
        """One effect's call, its answer fed to the core; raises a DomainError the call or the
        journal gave when it is to be sent again later."""
        pool = self.room.pool
        if isinstance(effect, core.Stake):
            try:
                await self._cashier.transfer(
                    pool, self.table_id, self._house_transfers(effect.player, effect.transfers)
                )
                outcome = core.Outcome.OK
            except DomainError as error:
                outcome = core.Outcome.UNAVAILABLE if is_unavailable(error) else core.Outcome.REFUSED
                step = await self._feed(core.StakeAnswer(effect.round_id, outcome))
                await self._run_all(step.effects)
                raise _Refused(error) from error
            return await self._feed(core.StakeAnswer(effect.round_id, outcome))
        if isinstance(effect, core.Seal):
            round_ = self._state.rounds[effect.round_id]
            if round_.stage is core.Stage.RESUMING:
                return await self._resume(round_)
            try:
                deck = await self._fairness.seal(effect.round_id)
            except DomainError as error:
                step = await self._feed(core.SealFailed(effect.round_id))
                await self._run_all(step.effects)
                raise _Refused(error) from error
            return await self._feed(core.Sealed(effect.round_id, tuple(deck), self._clock.now()))
        if isinstance(effect, core.Pay):
            try:
                await self._cashier.transfer(
                    pool,
                    self.table_id,
                    self._house_transfers(effect.player, effect.transfers),
                    round_in_play=True,  # a hold or a break lets a dealt round finish
                )
            except DomainError as error:
                if is_unavailable(error):
                    raise
                await self._feed(
                    core.PayAnswer(effect.round_id, effect.transfer.transfer_id, core.Outcome.REFUSED)
                )
                raise _Refused(error) from error
            return await self._feed(
                core.PayAnswer(effect.round_id, effect.transfer.transfer_id, core.Outcome.OK)
            )
        if isinstance(effect, core.Settle):
            await self._cashier.transfer(
                pool,
                self.table_id,
                self._house_transfers(effect.player, effect.transfers),
                round_in_play=True,
            )
            round_ = self._state.rounds[effect.round_id]
            run = run_of(self.room, replace(round_, paid_out=paid_back(list(effect.transfers))))
            assert run is not None
            run.state = "COMPLETE"
            record = round_record(self.table_id, self.room, effect.player, run, now=self._clock.now())
            self._records[effect.round_id] = record
            try:
                # Kept before the round is closed in the journal: whoever opens the table next sends
                # it if this shard dies before history has it (the round, still open, is settled again).
                await self._outbox.keep(self.table_id, effect.round_id, record.SerializeToString())
            except DomainError as error:
                log.warning(
                    "round record not kept in the outbox", round_id=effect.round_id, reason=error.reason
                )
            return await self._feed(core.SettleAnswer(effect.round_id, core.Outcome.OK))
        if isinstance(effect, core.Refund):
            try:
                # Sent as a new round's stakes again: stakes never applied are refused now during a
                # hold or a break (nothing moves) rather than taken and given back.
                await self._cashier.transfer(
                    pool, self.table_id, self._house_transfers(effect.player, effect.stakes)
                )
                taken = True
            except (FailedPrecondition, NotFound):
                taken = False  # refused (funds): nothing was taken, now or ever
            if taken:
                await self._cashier.transfer(
                    pool, self.table_id, self._house_transfers(effect.player, effect.refunds)
                )
            step = await self._feed(core.RefundAnswer(effect.round_id))
            if step.entries:
                self.rounds_voided += 1
                table_metrics.house_round_voided(self.room.game)
            return step
        if isinstance(effect, core.RevealVoid):
            try:
                await self._fairness.reveal(effect.round_id, voided=True)
            except DomainError as error:
                if is_unavailable(error):
                    raise  # sent again (the round stays open until fairness has it)
                log.warning("voided round not revealed", round_id=effect.round_id, reason=error.reason)
            return await self._feed(core.VoidRevealed(effect.round_id))
        assert isinstance(effect, core.Finish)
        self._finish(effect)
        return None

    def _finish(self, effect: core.Finish) -> None:
        round_ = self._state.rounds[effect.round_id]
        run = run_of(self.room, round_)
        assert run is not None
        assert run.settlement is not None
        assert round_.deck is not None
        # The views show the jackpot with this round's contributions and shares at once; the next
        # view asked for reads the cashier's own figure again (other tables share the jackpot).
        self._jackpot += run.settlement.delta(Account.JACKPOT)
        self._balances_at = self._clock.now() - BALANCE_REFRESH_SECONDS
        record = self._records.pop(effect.round_id, None) or round_record(
            self.table_id, self.room, effect.player, run, now=self._clock.now()
        )
        self.rounds_settled += 1
        table_metrics.house_round_settled(
            self.room.game, self.room.pool, wagered=sum(run.live.staked.values()), paid=effect.paid_out
        )
        self._after_round(
            AfterHand(effect.round_id, record, self.table_id, seen=seen_positions(record, round_.deck))
        )

    async def _resume(self, round_: core.Round) -> core.Step:
        """A dealt round rebuilt: its deck sealed again, the decisions' transfers the cashier has."""
        deck = await self._fairness.seal(round_.round_id)
        voids = [t.transfer_id for t in core.refund_transfers(round_.round_id, round_.wagers)]
        paid = await self._cashier.applied([*(d.transfer for d in round_.logged), *voids])
        if any(paid.get(v) for v in voids):
            # Its stakes went back already (a journal written before the core: a `dealt` that reached
            # the journal though the table that wrote it saw the write fail and refunded): that
            # refund is finished, never dealt on.
            return await self._journal_refunding(round_)
        applied = frozenset(t for t, yes in paid.items() if yes)
        step = await self._feed(
            core.Resume(
                round_.round_id, tuple(deck), applied, self._clock.now(), self._t.handover_grace_seconds
            )
        )
        if step.entries:
            table_metrics.house_round_resumed(self.room.game)
            log.info("house round resumed", round_id=round_.round_id, decisions=len(round_.logged))
        return step

    async def _journal_refunding(self, round_: core.Round) -> core.Step:
        # Its refund transfers are in the cashier already (an earlier owner gave the stakes back).
        entry = {"type": "refunding", "round_id": round_.round_id, "why": "refund_applied"}
        async with self._core_lock:
            await self._log(entry)
            self._state = core.apply_entry(self._state, entry)
            _say_refunding(entry, self.table_id)
            self._after_state()
        due = tuple(e for e in core.outstanding(self._state) if e.round_id == round_.round_id)
        return core.Step(self._state, entries=(entry,), effects=due)

    def _house_transfers(self, player: str, planned: Sequence[PlannedTransfer]) -> list[HouseTransfer]:
        return [house_transfer(self.room.pool, player, p) for p in planned]

    # ------------------------------------------------------------------ balances

    async def _read_balances(self) -> tuple[int, int]:
        """The pool's free house bank (the ledger's: what no open round reserved) and jackpot."""
        bank, jackpot, reserved = await self._cashier.house_balances(self.room.pool)
        self._bank_read = table_metrics.BankRead(self.room.pool, bank, jackpot, reserved)
        self._bank, self._jackpot = bank, jackpot
        self._balances_at = self._clock.now()
        return bank, jackpot

    async def _free_bank(self) -> int:
        """The bank's free money now, for a refusal's figures (the last read if the cashier is away)."""
        with contextlib.suppress(DomainError):
            await self._read_balances()
        return self._bank

    async def _fresh_balances(self) -> None:
        """For views: re-read at most every second; a cashier outage keeps the last figures."""
        if self._clock.now() - self._balances_at < BALANCE_REFRESH_SECONDS:
            return
        with contextlib.suppress(DomainError):
            await self._read_balances()

    def _paused_reason(self) -> str:
        if self._maintenance(self.room.room_id).no_new_hands:
            return "MAINTENANCE_NO_NEW_HANDS"
        if self._handing_over:
            return "SHARD_DRAINING"
        if self._balances_at > -1e18 and self._bank < self._t.bank_minimum:
            return "HOUSE_BANK_PAUSED"
        return ""

    # ------------------------------------------------------------------ commands

    async def set_player_seed(
        self, player: str, request_id: str, seed: bytes, seed_hash: str = ""
    ) -> table_pb2.SetPlayerSeedResponse:
        """Commit the caller's next round now (if not yet) and add their client seed to it. A round
        has one player, so the seed comes in one step (docs/fairness.md, the seed flow at a table)."""

        async def run() -> table_pb2.SetPlayerSeedResponse:
            if seed_hash:
                raise InvalidArgument(
                    "FIELD_INVALID",
                    "a house table takes the client seed in one step: send client_seed",
                    {"field": "client_seed_hash"},
                )
            pending = self._pending.get(player)
            if pending is None:
                pending = await self._fairness.commit(
                    f"house:{self.table_id}:{_digest(player, 'seed', request_id)}",
                    fairness_chain(self.table_id, player),
                    private_to=player,
                )
                self._pending[player] = pending
            await self._fairness.add_entropy(pending.hand_id, 1, player, seed)
            self._publish(player, "ROUND_COMMITTED", f"next round {pending.hand_id} committed")
            return table_pb2.SetPlayerSeedResponse(
                hand_id=pending.hand_id,
                seed_phase=table_pb2.SEED_PHASE_ONE_STEP,
            )

        return await self._command_once(player, "SetPlayerSeed", request_id, (seed, seed_hash), run)

    async def place_bets(
        self, player: str, request_id: str, bets: Sequence[BoxBet]
    ) -> table_pb2.PlaceHouseBetsResponse:
        async def run() -> table_pb2.PlaceHouseBetsResponse:
            if self._maintenance(self.room.room_id).no_new_hands:
                raise FailedPrecondition("MAINTENANCE_NO_NEW_HANDS", "no new rounds during maintenance")
            if self._closed:
                raise Unavailable("TABLE_CLOSED", "the table was closed; retry to reach its room's table")
            if self._handing_over:
                # Not remembered (UNAVAILABLE): the retry, routed by the lobby, reaches the new owner.
                raise Unavailable("SHARD_DRAINING", "this table moves to another server; retry")
            current = await self._last_round_done(player)
            if current is not None and current.stage.open:
                shown = run_of(self.room, current)
                if current.request_id == request_id and shown is not None:
                    return self._bets_response(shown)  # the request's round, answered again
                raise FailedPrecondition("ROUND_IN_PROGRESS", "your round at this table is still running")
            if self._admit is not None:
                self.room = await self._admit(player)
            try:
                wagers = check_bets(self.room, player, bets)
            except HouseGameError as error:
                raise house_room_error(error) from error
            return await self._open_round(player, request_id, wagers)

        return await self._command_once(player, "PlaceHouseBets", request_id, tuple(bets), run)

    async def _new_commitment(self, player: str, request_id: str, chain: str) -> Commitment:
        """The fairness hand of the request's next round. Its request id counts the request's rounds
        that did not deal (`attempt`), which this table remembers only for its recent rounds and not
        across a restart (the journal keeps the open rounds): fairness, which remembers every request
        id, answers an earlier round's hand again then. A voided one (refunded, refused) lets the next
        attempt open; one dealt or finished is the request's round, played: it is never opened again
        (its stakes were taken once, its cards are known to the player), whatever the retry."""
        attempt = self._state.attempt(player, request_id)
        for _ in range(MAX_ATTEMPTS_LOOKED_UP):
            commitment = await self._fairness.commit(
                f"house:{self.table_id}:{_digest(player, 'bets', request_id)}:{attempt}",
                chain,
                private_to=player,
            )
            if commitment.fresh:
                return commitment
            if not commitment.voided:
                break
            attempt += 1
        raise FailedPrecondition(
            "ROUND_ALREADY_PLAYED",
            "this request id's round was dealt and has ended; it is in your history",
            {"request_id": request_id},
        )

    async def _open_round(
        self, player: str, request_id: str, wagers: tuple[BoxWager, ...]
    ) -> table_pb2.PlaceHouseBetsResponse:
        room = self.room
        bank, jackpot = await self._read_balances()
        if bank < self._t.bank_minimum:
            raise FailedPrecondition(
                "HOUSE_BANK_PAUSED",
                "the house bank is below its threshold; new rounds wait for the operator",
                {"bank_balance": str(bank), "threshold": str(self._t.bank_minimum)},
            )
        cover = largest_payout(room, wagers)
        if bank < cover:
            # Refused before a commitment is spent. The ledger has the last word (below): a round of
            # another table or shard may reserve the bank between this read and the stakes.
            raise _cannot_cover(cover, bank)
        chain = fairness_chain(self.table_id, player)
        commitment = self._pending.pop(player, None)
        if commitment is None:
            commitment = await self._new_commitment(player, request_id, chain)
        round_id = commitment.hand_id
        self._state = replace(self._state, room=room)
        bets = core.Bets(
            player,
            request_id,
            round_id,
            chain,
            commitment.commitment,
            wagers,
            jackpot,
            cover,
            self._clock.now(),
        )
        step = await self._feed(bets)
        if not step.again:
            effects = list(step.effects)
            while effects:
                effect = effects.pop(0)
                if not isinstance(effect, (core.Stake, core.Seal)):
                    await self._run_all([effect, *effects])
                    break
                try:
                    after = await self._run(effect)
                except _Refused as refused:
                    error = refused.error
                    if isinstance(error, NotFound) and error.reason == "ACCOUNT_NOT_FOUND":
                        # A player who never bought chips has no wallet yet: nothing to stake from.
                        raise FailedPrecondition(
                            "INSUFFICIENT_FUNDS", "the wallet cannot pay these stakes"
                        ) from error
                    if error.metadata.get("transfer_id", "").endswith(":cover"):
                        # The bank's own money was reserved by other rounds meanwhile.
                        raise _cannot_cover(cover, await self._free_bank()) from error
                    raise error from None
                except DomainError:
                    self._retry_later()
                    raise
                if after is not None:
                    effects.extend(after.effects)
        run = run_of(self.room, self._state.rounds[step.round_id])
        if run is None:
            raise Unavailable("UNAVAILABLE", "the round is being opened; retry")
        return self._bets_response(run)

    def _bets_response(self, run: RoundRun) -> table_pb2.PlaceHouseBetsResponse:
        response = table_pb2.PlaceHouseBetsResponse(round_id=run.round_id, round=round_view(run))
        response.staked.pool = self.room.pool  # type: ignore[assignment]
        response.staked.amount = sum(run.live.staked.values())
        return response

    async def _last_round_done(self, player: str) -> core.Round | None:
        """The player's latest round, after the calls an undealt one still waits for (its refund,
        after an outage) were sent again now: a new round opens only once it is over."""
        current = self._state.current(player)
        undealt = (core.Stage.STAKING, core.Stage.DEALING, core.Stage.REFUNDING, core.Stage.VOIDING)
        if current is None or current.stage not in undealt:
            return current
        due = [e for e in core.outstanding(self._state) if e.round_id == current.round_id]
        await self._run_all(due)
        current = self._state.current(player)
        if current is not None and current.stage in undealt:
            raise Unavailable("UNAVAILABLE", "your last round is still being refunded or voided; retry")
        return current

    async def make_decision(
        self,
        player: str,
        request_id: str,
        round_id: str,
        box: int,
        decision: Decision,
        card_indexes: tuple[int, ...],
        amount: int,
    ) -> table_pb2.MakeHouseDecisionResponse:
        async def run() -> table_pb2.MakeHouseDecisionResponse:
            decide = core.Decide(
                player, request_id, round_id, box, decision, tuple(card_indexes), amount, self._clock.now()
            )
            step = await self._feed(decide)
            effects = [] if step.again else list(step.effects)
            for effect in effects:
                if not isinstance(effect, core.Pay):
                    await self._run_all([effect])
                    continue
                try:
                    after = await self._run(effect)
                except _Refused as refused:
                    raise refused.error from None
                except DomainError:
                    self._retry_later()
                    raise
                if after is not None:
                    await self._run_all(after.effects)
            shown = run_of(self.room, self._state.rounds[step.round_id])
            assert shown is not None
            return table_pb2.MakeHouseDecisionResponse(round=round_view(shown))

        fingerprint = (round_id, box, decision, card_indexes, amount)
        return await self._command_once(player, "MakeHouseDecision", request_id, fingerprint, run)

    # ------------------------------------------------------------------ restarts

    async def resume_open(self, entries: list[dict[str, Any]]) -> None:
        """The rounds the journal holds open for this table as it opens (the shard restarted, or took
        the room over from a shard that lost it): their entries as written (`Journal.open_entries`,
        every kind, so the core is exactly as the last owner left it), replayed: each dealt one resumed
        (its deck sealed again, the cashier's applied transfers), each undealt one refunded, in the
        background. A dealt round's player lock is taken now, so their commands wait until the round
        is back (no second round opens beside it, no decision reaches a round not rebuilt)."""
        self._state = core.replay(
            entries,
            table_id=self.table_id,
            room=self.room,
            decision_seconds=self._t.decision_seconds,
            decks={},
            keep_finished=self._t.keep_finished_rounds,
        )
        try:
            step = await self._feed(core.Reopen(self._clock.now()))
            effects = step.effects
        except DomainError as error:
            # Not journaled: the rounds are refunded all the same (the next opener refunds them too).
            log.warning("reopened rounds not journaled", table_id=self.table_id, reason=error.reason)
            self._state = core.feed(self._state, core.Reopen(self._clock.now())).state
            effects = core.outstanding(self._state)
        for effect in effects:
            lock = self._lock(self._player_of(effect))
            if isinstance(effect, core.Seal):
                await lock.acquire()
                self._spawn(self._resume_holding(lock, effect))
            else:
                self._spawn(self._run_locked(effect))

    async def _resume_holding(self, lock: asyncio.Lock, effect: core.Effect) -> None:
        try:
            await self._run_all([effect])
        finally:
            lock.release()

    async def resend_kept_records(self, open_rounds: set[str]) -> None:
        """Records of rounds settled and closed here before (by this shard's last life, or the room's
        last owner) that history never acknowledged: into the after-hand queues again (history stores
        a record once). The rounds still open are settled again and keep their record themselves."""
        for round_id, data in sorted((await self._outbox.kept(self.table_id)).items()):
            if round_id in open_rounds:
                continue
            log.info("settled round's record sent again", table_id=self.table_id, round_id=round_id)
            self._after_round(AfterHand(round_id, history_pb2.HandRecord.FromString(data), self.table_id))

    # ------------------------------------------------------------------ views

    async def snapshot(self, player: str) -> table_pb2.TableView:
        await self._fresh_balances()
        return self._view(player)

    async def watch(self, player: str) -> Watcher:
        await self._fresh_balances()
        watcher = Watcher(player, self._t.watch_queue_size)
        watcher.queue.put_nowait(table_pb2.WatchTableResponse(view=self._view(player)))
        self._watchers.add(watcher)
        table_metrics.stream_opened("watcher")
        return watcher

    def _view(self, player: str) -> table_pb2.TableView:
        pending = self._pending.get(player)
        shown = self._shown.get(player)
        run = None if shown is None else run_of(self.room, self._state.rounds[shown])
        view = table_view(
            self.table_id,
            self.room,
            run,
            jackpot=self._jackpot,
            paused_reason=self._paused_reason(),
            next_round=(pending.hand_id, pending.commitment) if pending is not None else None,
            now=self._clock.now(),
        )
        last = self._last_views.get(player) if run is None else None
        if last is not None:
            view.house.round.CopyFrom(last)
        return view

    def unwatch(self, watcher: Watcher) -> None:
        if watcher in self._watchers:
            table_metrics.stream_closed("watcher")
        self._watchers.discard(watcher)

    def _publish(self, player: str, code: str, text: str) -> None:
        """A notice to the player's own watchers with their view after it (rounds are private)."""
        self._sequence += 1
        event = table_pb2.TableEvent(sequence=self._sequence, notice=notice(code, text))
        event.time.FromNanoseconds(int(self._clock.now() * 1e9))
        view: table_pb2.TableView | None = None
        for watcher in list(self._watchers):
            if watcher.player_id != player:
                continue
            if view is None:
                view = self._view(player)
            # A slow client gets the view alone instead of what it did not read.
            offer(
                watcher,
                table_pb2.WatchTableResponse(events=[event], view=view),
                functools.partial(table_pb2.WatchTableResponse, view=view),
            )


def _say_refunding(entry: dict[str, Any], table_id: str) -> None:
    """A round about to be refunded, with the journal's reason: the operator's (and the e2e runs')
    way to tell a dependency that did not answer from a round a restart or takeover found undealt."""
    if entry.get("type") == "refunding":
        log.warning(
            "house round refunded", table_id=table_id, round_id=entry["round_id"], why=entry.get("why")
        )


class _Refused(Exception):
    """A call refused for good (the cashier's funds, fairness): fed to the core already."""

    def __init__(self, error: DomainError) -> None:
        super().__init__(error.reason)
        self.error = error


def _cannot_cover(needed: int, available: int) -> FailedPrecondition:
    return FailedPrecondition(
        "HOUSE_BANK_CANNOT_COVER",
        "the house bank cannot cover the largest payout of this round now",
        {"needed": str(needed), "available": str(max(available, 0))},
    )


def _digest(player: str, what: str, request_id: str) -> str:
    return hashlib.sha256(f"{player}\0{what}\0{request_id}".encode()).hexdigest()[:24]


def _wagers(entry: dict[str, Any], player: str) -> tuple[BoxWager, ...]:
    return tuple(
        BoxWager(int(box), player, int(ante), dark=bool(dark), bonus=int(bonus))
        for box, ante, dark, bonus in entry["wagers"]
    )


def house_room_from_pb(room: Any) -> HouseRoom | None:
    """The house-game room of a lobby entry (`poker.lobby.v1.Room`); None for cash games."""
    games = {
        common_pb2.GAME_VARIANT_CASINO_HOLDEM: HouseGame.CASINO_HOLDEM,
        common_pb2.GAME_VARIANT_RUSSIAN_POKER: HouseGame.RUSSIAN_POKER,
    }
    game = games.get(room.variant)
    if game is None or room.WhichOneof("stakes") != "antes":
        return None
    antes = room.antes
    return HouseRoom(
        room_id=room.room_id,
        game=game,
        pool=int(room.pool),
        boxes=int(room.seats_per_table),
        min_ante=int(antes.min_ante),
        max_ante=int(antes.max_ante),
        max_payout=int(antes.max_payout),
    )
