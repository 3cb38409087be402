"""A house-game table (Casino Hold'em, Russian Poker): each player's rounds against the dealer, paid
by the pool's house bank.

The table is the adapter around `house_round.LiveRound` (pure): it takes the stakes through the
cashier, the deck from fairness, the decisions from players and the clock, and sends the settlement
to the cashier, the reveal to fairness and the record to history. Rounds of different players are
independent (each its own deck and fairness chain) and run side by side; one player's commands run
one at a time (a lock per player), so no two commands ever change one round at once.

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
import contextlib
import functools
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from house_games import (
    Account,
    BoxWager,
    HouseGameError,
    IllegalDecisionError,
    InvalidWagerError,
    RoundSettlement,
)
from poker.common.v1 import common_pb2
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
from services.table.actor import AfterHand, Watcher, offer
from services.table.dependencies import (
    Commitment,
    FairnessClient,
    HouseCashier,
    HouseTransfer,
    house_account,
    wallet_account,
)
from services.table.house_round import (
    BoxBet,
    Decision,
    HouseGame,
    HouseRoom,
    LiveRound,
    PlannedTransfer,
    TakenDecision,
    check_bets,
    fairness_chain,
    initial_stake,
    largest_payout,
    paid_back,
)
from services.table.house_views import round_record, round_view, table_view
from services.table.idempotency import AnswerMemory
from services.table.remote import is_unavailable
from services.table.views import notice

T = TypeVar("T")
log = get_logger("table.house")

BALANCE_REFRESH_SECONDS = 1.0
_INVALID_DECISION_REASONS = frozenset({"BAD_EXCHANGE_CARDS", "INSURANCE_OUT_OF_RANGE"})


class Journal(Protocol):
    def append(self, entry: dict[str, Any]) -> None: ...

    def open_rounds(self) -> dict[str, dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class HouseTimings:
    decision_seconds: float = 20.0
    retry_initial_seconds: float = 0.2
    retry_max_seconds: float = 5.0
    watch_queue_size: int = 64
    bank_minimum: int = 0


class HouseExposure:
    """What the open rounds of this shard may still need from each pool's house bank (their largest
    payouts), so that rounds running side by side are covered together, not each on its own."""

    def __init__(self) -> None:
        self.reserved: dict[int, int] = {}

    def reserve(self, pool: int, amount: int) -> None:
        self.reserved[pool] = self.reserved.get(pool, 0) + amount
        table_metrics.house_reserved(pool, self.reserved[pool])

    def release(self, pool: int, amount: int) -> None:
        self.reserved[pool] = self.reserved.get(pool, 0) - amount
        table_metrics.house_reserved(pool, self.reserved[pool])


@dataclass
class RoundRun:
    live: LiveRound
    chain: str
    commitment: str
    started_at: float
    cover: int
    state: str = "PLAYING"  # PLAYING, SETTLING, COMPLETE, VOIDED
    deadline: float | None = None  # wall clock
    timer: asyncio.TimerHandle | None = None
    settlement: RoundSettlement | None = None
    paid_out: int = 0
    notes: list[str] = field(default_factory=list)
    retry: asyncio.Task[None] | None = None
    refusals: int = 0  # a refused stake id stays refused: the next attempt needs a new id

    @property
    def round_id(self) -> str:
        return self.live.round_id


def house_room_error(error: HouseGameError) -> DomainError:
    """The library's refusal as the table answers it (reasons pass through)."""
    if isinstance(error, InvalidWagerError) or error.reason in _INVALID_DECISION_REASONS:
        return InvalidArgument(error.reason, str(error))
    if error.reason == "UNKNOWN_BOX":
        return NotFound(error.reason, str(error), {"field": "box"})
    # A deck run out is the round's state, not the request's (the catalogue's FAILED_PRECONDITION).
    if isinstance(error, IllegalDecisionError) or error.reason == "DECK_EXHAUSTED":
        return FailedPrecondition(error.reason, str(error))
    return InvalidArgument(error.reason, str(error))


class HouseTable:
    def __init__(
        self,
        table_id: str,
        room: HouseRoom,
        *,
        cashier: HouseCashier,
        fairness: FairnessClient,
        journal: Journal,
        exposure: HouseExposure,
        after_round: Callable[[AfterHand], None],
        timings: HouseTimings,
        maintenance: Callable[[str], MaintenanceSwitches] = lambda room_id: MaintenanceSwitches(),
        admit: Callable[[str], Awaitable[HouseRoom]] | None = None,
    ) -> None:
        self.table_id = table_id
        self.room = room
        # The lobby's seat check before a round's stakes, returning the room as of now (issue 23).
        self._admit = admit
        self._cashier = cashier
        self._fairness = fairness
        self._journal = journal
        self._exposure = exposure
        self._after_round = after_round
        self._t = timings
        self._maintenance = maintenance
        self._rounds: dict[str, RoundRun] = {}
        self._pending: dict[str, Commitment] = {}
        # Attempts of a PlaceHouseBets request id that failed after its stakes may have moved: those
        # rounds are refunded, so a retry of the request opens a new round (a new fairness hand).
        self._attempts: dict[tuple[str, str], int] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._answers = AnswerMemory()
        self._watchers: set[Watcher] = set()
        self._background: set[asyncio.Task[None]] = set()
        self._bank = 0
        self._jackpot = 0
        self._balances_at = -1e18
        self._sequence = 0
        self._closed = False
        self.rounds_settled = 0
        self.rounds_voided = 0

    # ------------------------------------------------------------------ lifecycle (the shard's view)

    fenced = False

    def start(self) -> None:
        return None

    async def stop(self) -> None:
        self._closed = True
        for run in self._rounds.values():
            if run.timer is not None:
                run.timer.cancel()
        for task in list(self._background):
            await cancel_and_wait(task)

    async def call(self, command: Callable[[], Awaitable[T]]) -> T:
        if self._closed:
            raise Unavailable("UNAVAILABLE", "the table is closed")
        return await command()

    def knows_player(self, player: str) -> bool:
        """A round (running or finished) or a committed next round of this player here."""
        return player in self._rounds or player in self._pending

    def open_rounds(self) -> int:
        return sum(1 for run in self._rounds.values() if run.state in ("PLAYING", "SETTLING"))

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

    # ------------------------------------------------------------------ balances

    async def _read_balances(self) -> tuple[int, int]:
        bank, jackpot = await self._cashier.house_balances(self.room.pool)
        table_metrics.house_balances_read(self.room.pool, bank, jackpot)
        self._bank, self._jackpot = bank, jackpot
        self._balances_at = time.monotonic()
        return bank, jackpot

    async def _fresh_balances(self) -> None:
        """For views: re-read at most every second; a cashier outage keeps the last figures."""
        if time.monotonic() - self._balances_at < BALANCE_REFRESH_SECONDS:
            return
        with contextlib.suppress(DomainError):
            await self._read_balances()

    def _paused_reason(self) -> str:
        if self._maintenance(self.room.room_id).no_new_hands:
            return "MAINTENANCE_NO_NEW_HANDS"
        if self._balances_at > -1e18 and self._bank < self._t.bank_minimum:
            return "HOUSE_BANK_PAUSED"
        return ""

    # ------------------------------------------------------------------ commands

    async def set_player_seed(
        self, player: str, request_id: str, seed: bytes
    ) -> table_pb2.SetPlayerSeedResponse:
        """Commit the caller's next round now (if not yet) and add their client seed to it."""

        async def run() -> table_pb2.SetPlayerSeedResponse:
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
            return table_pb2.SetPlayerSeedResponse(hand_id=pending.hand_id)

        async with self._lock(player):
            return await self._answers.once((player, "SetPlayerSeed", request_id), (seed,), run)

    async def place_bets(
        self, player: str, request_id: str, bets: Sequence[BoxBet]
    ) -> table_pb2.PlaceHouseBetsResponse:
        async def run() -> table_pb2.PlaceHouseBetsResponse:
            if self._maintenance(self.room.room_id).no_new_hands:
                raise FailedPrecondition("MAINTENANCE_NO_NEW_HANDS", "no new rounds during maintenance")
            current = self._rounds.get(player)
            if current is not None and current.state in ("PLAYING", "SETTLING"):
                raise FailedPrecondition("ROUND_IN_PROGRESS", "your round at this table is still running")
            if self._admit is not None:
                self.room = await self._admit(player)
            try:
                wagers = check_bets(self.room, player, bets)
            except HouseGameError as error:
                raise house_room_error(error) from error
            return await self._open_round(player, request_id, wagers)

        async with self._lock(player):
            return await self._answers.once((player, "PlaceHouseBets", request_id), tuple(bets), run)

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
        free = bank - self._exposure.reserved.get(room.pool, 0)
        if free < cover:
            raise FailedPrecondition(
                "HOUSE_BANK_CANNOT_COVER",
                "the house bank cannot cover the largest payout of this round now",
                {"needed": str(cover), "available": str(max(free, 0))},
            )
        self._exposure.reserve(room.pool, cover)
        opened = False
        try:
            chain = fairness_chain(self.table_id, player)
            commitment = self._pending.pop(player, None)
            if commitment is None:
                attempt = self._attempts.get((player, request_id), 0)
                commitment = await self._fairness.commit(
                    f"house:{self.table_id}:{_digest(player, 'bets', request_id)}:{attempt}",
                    chain,
                    private_to=player,
                )
            round_id = commitment.hand_id
            entry = {
                "type": "open",
                "round_id": round_id,
                "table_id": self.table_id,
                "player": player,
                "chain": chain,
                "commitment": commitment.commitment,
                "jackpot_before": jackpot,
                "started_at": time.time(),
                "cover": cover,
                "wagers": [[w.box, w.ante, w.dark, w.bonus] for w in wagers],
            }
            self._journal.append(entry)
            opened = True
            stakes = [
                HouseTransfer(
                    f"hgr:{round_id}:in:{w.box}",
                    wallet_account(room.pool, player),
                    house_account(room.pool, "bank"),
                    initial_stake(w),
                    f"{round_id}:box{w.box}",
                )
                for w in wagers
            ]
            try:
                await self._cashier.transfer(room.pool, self.table_id, stakes)
            except NotFound as error:
                if error.reason != "ACCOUNT_NOT_FOUND":
                    raise
                # A player who never bought chips has no wallet yet: nothing to stake from.
                raise FailedPrecondition(
                    "INSUFFICIENT_FUNDS", "the wallet cannot pay these stakes"
                ) from error
            deck = await self._fairness.seal(round_id)
            self._journal.append({"type": "dealt", "round_id": round_id})
        except DomainError as error:
            self._exposure.release(room.pool, cover)
            if opened:
                self._attempts[(player, request_id)] = self._attempts.get((player, request_id), 0) + 1
                if is_unavailable(error):
                    # The stakes may or may not have been taken: make it certain, then give them back.
                    self._spawn(self._refund(entry))
                else:
                    self._journal.append({"type": "closed", "round_id": entry["round_id"], "how": "refused"})
                    self._spawn(self._reveal_void(str(entry["round_id"])))
            raise
        live = LiveRound(room.game, round_id, player, wagers, deck, room, jackpot_before=jackpot)
        run = RoundRun(live, chain, commitment.commitment, float(str(entry["started_at"])), cover)
        self._rounds[player] = run
        if not live.complete:
            self._arm(player, run)
        self._publish(player, "ROUND_STARTED", f"round {round_id} dealt")
        if live.complete:
            # Dark boxes only, and the dealer has a game: nothing to decide.
            await self._settle(player, run)
        response = table_pb2.PlaceHouseBetsResponse(round_id=round_id, round=round_view(run))
        response.staked.pool = room.pool  # type: ignore[assignment]
        response.staked.amount = sum(live.staked.values())
        return response

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
            current = self._rounds.get(player)
            if current is None:
                raise FailedPrecondition("NO_ROUND_IN_PROGRESS", "you have no round at this table")
            if current.round_id != round_id or current.state != "PLAYING":
                raise FailedPrecondition("HAND_IS_OVER", "that round is not your running round")
            try:
                taken = current.live.prepare(box, decision, card_indexes, amount)
            except HouseGameError as error:
                raise house_room_error(error) from error
            await self._take(player, current, taken)
            return table_pb2.MakeHouseDecisionResponse(round=round_view(current))

        fingerprint = (round_id, box, decision, card_indexes, amount)
        async with self._lock(player):
            return await self._answers.once((player, "MakeHouseDecision", request_id), fingerprint, run)

    async def _take(self, player: str, run: RoundRun, taken: TakenDecision) -> None:
        live = run.live
        # Derived from the round's state: a retry after an outage sends the same id (applied once);
        # after a refusal (funds) the count moves on so that a retry after a top-up can succeed.
        transfer_id = (
            f"hgr:{run.round_id}:b{taken.box}:{len(live.decisions)}:{run.refusals}:{taken.decision.value}"
        )
        self._journal.append(
            {
                "type": "decision",
                "round_id": run.round_id,
                "decision": {**taken.to_json(), "transfer": transfer_id},
            }
        )
        if taken.cost:
            stake = HouseTransfer(
                transfer_id,
                wallet_account(self.room.pool, player),
                house_account(self.room.pool, "bank"),
                taken.cost,
                f"{run.round_id}:box{taken.box}:{taken.decision.value}",
            )
            try:
                await self._cashier.transfer(self.room.pool, self.table_id, [stake])
            except DomainError as error:
                if not is_unavailable(error):
                    run.refusals += 1
                raise
        live.apply(taken)
        if taken.timed_out:
            run.notes.append(f"TIMEOUT box {taken.box} {taken.decision.value}")
        self._publish(player, "HOUSE_DECISION", f"box {taken.box}: {taken.decision.value}")
        if live.complete:
            await self._settle(player, run)
        else:
            self._arm(player, run)

    # ------------------------------------------------------------------ the clock

    def _arm(self, player: str, run: RoundRun) -> None:
        if run.timer is not None:
            run.timer.cancel()
        if self._closed or run.state != "PLAYING":
            run.deadline = None
            return
        run.deadline = time.time() + self._t.decision_seconds
        loop = asyncio.get_running_loop()
        round_id = run.round_id
        run.timer = loop.call_later(
            self._t.decision_seconds, lambda: self._spawn(self._expire(player, round_id))
        )

    async def _expire(self, player: str, round_id: str) -> None:
        async with self._lock(player):
            run = self._rounds.get(player)
            if run is None or run.round_id != round_id or run.state != "PLAYING":
                return
            for box in run.live.due_boxes():
                if run.state != "PLAYING":
                    break
                await self._take(player, run, run.live.default_decision(box))

    # ------------------------------------------------------------------ settlement

    async def _settle(self, player: str, run: RoundRun) -> None:
        if run.timer is not None:
            run.timer.cancel()
        run.deadline = None
        run.state = "SETTLING"
        if run.settlement is None:
            run.settlement = run.live.settle()
        transfers = run.live.settlement_transfers(run.settlement)
        try:
            await self._cashier.transfer(
                self.room.pool, self.table_id, self._house_transfers(player, transfers)
            )
        except DomainError as error:
            # Paid in: the settlement waits for the cashier and is sent again with the same ids.
            log.warning(
                "round settlement not acknowledged; retrying", round_id=run.round_id, reason=error.reason
            )
            if run.retry is None or run.retry.done():
                self._spawn(self._retry_settlement(player, run))
            return
        self._complete(player, run, paid_back(transfers))

    async def _retry_settlement(self, player: str, run: RoundRun) -> None:
        backoff = self._t.retry_initial_seconds
        while run.state == "SETTLING" and not self._closed:
            await asyncio.sleep(backoff)
            backoff = min(self._t.retry_max_seconds, backoff * 2)
            async with self._lock(player):
                if run.state != "SETTLING":
                    return
                assert run.settlement is not None
                transfers = run.live.settlement_transfers(run.settlement)
                try:
                    await self._cashier.transfer(
                        self.room.pool, self.table_id, self._house_transfers(player, transfers)
                    )
                except DomainError as error:
                    log.warning("round settlement retry failed", round_id=run.round_id, reason=error.reason)
                    continue
                self._complete(player, run, paid_back(transfers))

    def _house_transfers(self, player: str, planned: list[PlannedTransfer]) -> list[HouseTransfer]:
        wallet = wallet_account(self.room.pool, player)
        out = []
        for p in planned:
            house = house_account(self.room.pool, p.house_account)
            debit, credit = (house, wallet) if p.to_player else (wallet, house)
            out.append(HouseTransfer(p.transfer_id, debit, credit, p.amount, p.reference))
        return out

    def _complete(self, player: str, run: RoundRun, paid_out: int) -> None:
        run.state = "COMPLETE"
        run.paid_out = paid_out
        if run.settlement is not None:
            # The views show the jackpot with this round's contributions and shares at once; the next
            # view asked for reads the cashier's own figure again (other tables share the jackpot).
            self._jackpot += run.settlement.delta(Account.JACKPOT)
            self._balances_at = time.monotonic() - BALANCE_REFRESH_SECONDS
        self._journal.append({"type": "closed", "round_id": run.round_id, "how": "settled"})
        self._exposure.release(self.room.pool, run.cover)
        self.rounds_settled += 1
        table_metrics.house_round_ended(self.room.game.name.lower(), "settled")
        self._after_round(AfterHand(run.round_id, round_record(self.table_id, self.room, player, run)))
        self._publish(player, "ROUND_SETTLED", f"round {run.round_id} settled")

    # ------------------------------------------------------------------ refunds and restarts

    async def _refund(self, entry: dict[str, Any]) -> None:
        """A round never dealt: send its stake batch again (applied at most once, by its ids), give
        back whatever it took, and reveal the hand as voided. Retried until the cashier answers."""
        round_id = str(entry["round_id"])
        player = str(entry["player"])
        wagers = _wagers(entry, player)
        pool = self.room.pool
        wallet, bank = wallet_account(pool, player), house_account(pool, "bank")
        stakes = [
            HouseTransfer(
                f"hgr:{round_id}:in:{w.box}", wallet, bank, initial_stake(w), f"{round_id}:box{w.box}"
            )
            for w in wagers
        ]
        refunds = [
            HouseTransfer(f"hgr:{round_id}:void:{w.box}", bank, wallet, initial_stake(w), f"{round_id}:void")
            for w in wagers
        ]
        backoff = self._t.retry_initial_seconds
        while not self._closed:
            try:
                try:
                    await self._cashier.transfer(pool, self.table_id, stakes)
                    taken = True
                except (FailedPrecondition, NotFound):
                    taken = False  # refused (funds): nothing was taken, now or ever
                if taken:
                    await self._cashier.transfer(pool, self.table_id, refunds)
                break
            except DomainError as error:
                log.warning("round refund waits for the cashier", round_id=round_id, reason=error.reason)
                await asyncio.sleep(backoff)
                backoff = min(self._t.retry_max_seconds, backoff * 2)
        if self._closed:
            return
        self._journal.append({"type": "closed", "round_id": round_id, "how": "voided"})
        self.rounds_voided += 1
        table_metrics.house_round_ended(self.room.game.name.lower(), "voided")
        await self._reveal_void(round_id)

    async def _reveal_void(self, round_id: str) -> None:
        backoff = self._t.retry_initial_seconds
        while not self._closed:
            try:
                await self._fairness.reveal(round_id, voided=True)
                return
            except DomainError as error:
                if not is_unavailable(error):
                    log.warning("voided round not revealed", round_id=round_id, reason=error.reason)
                    return
                await asyncio.sleep(backoff)
                backoff = min(self._t.retry_max_seconds, backoff * 2)

    async def resume(self, entry: dict[str, Any]) -> None:
        """A round the journal holds open after a restart: resume it if it was dealt, else refund it."""
        if not entry.get("dealt"):
            await self._refund(entry)
            return
        # The player's commands wait until the round is back (no second round opens beside it).
        async with self._lock(str(entry["player"])):
            await self._resume_dealt(entry)

    async def _resume_dealt(self, entry: dict[str, Any]) -> None:
        round_id, player = str(entry["round_id"]), str(entry["player"])
        wagers = _wagers(entry, player)
        backoff = self._t.retry_initial_seconds
        while True:
            try:
                deck = await self._fairness.seal(round_id)
                logged = [TakenDecision.from_json(d) for d in entry.get("decisions", [])]
                paid = await self._cashier.applied([str(d["transfer"]) for d in entry.get("decisions", [])])
                break
            except DomainError as error:
                if self._closed or not is_unavailable(error):
                    log.error("round not resumed", round_id=round_id, reason=error.reason)
                    return
                await asyncio.sleep(backoff)
                backoff = min(self._t.retry_max_seconds, backoff * 2)
        raw = entry.get("decisions", [])
        # A paid decision counts only if its stake reached the house bank (else it never took effect).
        kept = [d for d, r in zip(logged, raw, strict=True) if not d.cost or paid.get(str(r["transfer"]))]
        live = LiveRound(
            self.room.game,
            round_id,
            player,
            wagers,
            deck,
            self.room,
            jackpot_before=int(entry["jackpot_before"]),
        )
        for taken in kept:
            try:
                live.apply(taken)  # the library checks it first; a refused one changes nothing
            except HouseGameError as error:
                # Logged but superseded (an outage made the player choose again): it never took effect.
                log.warning("logged decision not replayed", round_id=round_id, reason=error.reason)
        cover = int(entry["cover"])
        self._exposure.reserve(self.room.pool, cover)
        run = RoundRun(live, str(entry["chain"]), str(entry["commitment"]), float(entry["started_at"]), cover)
        run.notes.append("RESUMED after a shard restart")
        self._rounds[player] = run
        if live.complete:
            await self._settle(player, run)
        else:
            self._arm(player, run)
        log.info("house round resumed", round_id=round_id, decisions=len(kept))

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
        return table_view(
            self.table_id,
            self.room,
            self._rounds.get(player),
            jackpot=self._jackpot,
            paused_reason=self._paused_reason(),
            next_round=(pending.hand_id, pending.commitment) if pending is not None else None,
        )

    def unwatch(self, watcher: Watcher) -> None:
        if watcher in self._watchers:
            table_metrics.stream_closed("watcher")
        self._watchers.discard(watcher)

    def _publish(self, player: str, code: str, text: str) -> None:
        """A notice to the player's own watchers with their view after it (rounds are private)."""
        self._sequence += 1
        event = table_pb2.TableEvent(sequence=self._sequence, notice=notice(code, text))
        event.time.FromNanoseconds(int(time.time() * 1e9))
        view: table_pb2.TableView | None = None
        for watcher in list(self._watchers):
            if watcher.player_id != player:
                continue
            if view is None:
                view = self._view(player)
            # A slow client gets the view alone instead of what it did not read.
            offer(
                watcher,
                table_pb2.WatchTableResponse(event=event, view=view),
                functools.partial(table_pb2.WatchTableResponse, view=view),
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
