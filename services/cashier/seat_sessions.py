"""Seat-session use cases, the table service's side of the cashier: buy-in, settlement, cash-out.

A seat account is created with its session and only these use cases move it; listing the open
sessions of a table lets a shard rebuild every stack after a restart or takeover.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from service_runtime.errors import AlreadyExists, DomainError, FailedPrecondition, InvalidArgument, NotFound
from services.cashier import storage
from services.cashier.coalescing import Answer, Coalescer
from services.cashier.holds import STOPS_SEATS, refuse_if_held
from services.cashier.ledger import (
    BALANCE_OVERFLOW,
    HOUSE_OWNER,
    INSUFFICIENT_FUNDS,
    MAX_SESSION_ID_LENGTH,
    Account,
    AccountKind,
    Pool,
    TransferKind,
    TransferRecord,
    TransferRequest,
    check_amount,
    check_player_id,
    check_text,
    plan_transfers,
    rake_account_id,
    seat_account_id,
    wallet_account_id,
)
from services.cashier.money_flow import FlowObserver, settlement_flows
from services.cashier.responsible_gaming import refuse_buy_in_beyond_self_limits
from services.cashier.settlement import (
    SETTLEMENT_FIELDS,
    HandResult,
    settlement_transfer_id,
    settlement_transfers,
)
from services.cashier.storage import SeatSessionRow
from services.cashier.unit_of_work import MIN_EXTRA_BATCH, TRANSACTIONS_IN_FLIGHT, UnitOfWork, utc_now


@dataclass(frozen=True)
class SeatSessionView:
    session: SeatSessionRow
    stack: int


@dataclass(frozen=True)
class SettlementView:
    hand: HandResult
    transfers: list[TransferRecord]
    stacks_after: list[tuple[str, int]]
    settled_at: datetime


MAX_SETTLEMENTS_PER_TRANSACTION = 64
# Seats of one table (or boxes of a house game) are numbered from 0; no table has a hundred.
MAX_SEAT_INDEX = 99


@dataclass
class _Decision:
    """One hand's part of a settlement transaction: its answer or error, and what it writes."""

    result: tuple[SettlementView, bool] | None = None
    error: DomainError | None = None
    records: list[TransferRecord] = field(default_factory=list)
    changed: dict[str, Account] = field(default_factory=dict)
    row: storage.SettlementRow | None = None


class SeatSessionUseCases(UnitOfWork):
    """Seat sessions and settlements; a seat is an account that only these use cases move."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        clock: Callable[[], datetime] = utc_now,
        flows: FlowObserver | None = None,
    ) -> None:
        super().__init__(engine, clock=clock, flows=flows)
        self._settlements: Coalescer[HandResult, tuple[SettlementView, bool]] = Coalescer(
            self._settle_hands,
            limit=MAX_SETTLEMENTS_PER_TRANSACTION,
            key=lambda hand: hand.hand_id,
            concurrency=TRANSACTIONS_IN_FLIGHT,
            min_extra_batch=MIN_EXTRA_BATCH,
        )

    @staticmethod
    async def _session_view(conn: AsyncConnection, session: SeatSessionRow) -> SeatSessionView:
        account = (await storage.read_accounts(conn, [session.account_id]))[session.account_id]
        return SeatSessionView(session, account.balance)

    async def open_seat_session(
        self,
        *,
        session_id: str,
        player_id: str,
        table_id: str,
        seat_index: int,
        pool: Pool | None,
        buy_in_amount: int,
        min_buy_in: int,
        max_buy_in: int,
    ) -> tuple[SeatSessionView, bool]:
        """Buy a player in; returns the session and whether it already existed with these fields."""
        check_text(session_id, "session_id", MAX_SESSION_ID_LENGTH)
        check_player_id(player_id)
        check_text(table_id, "table_id")
        if not 0 <= seat_index <= MAX_SEAT_INDEX:
            raise InvalidArgument("FIELD_INVALID", "seat_index must be 0 to 99", {"field": "seat_index"})
        if pool is None:
            raise InvalidArgument("POOL_INVALID", "pool is required", {"field": "pool"})
        check_amount(buy_in_amount, "buy_in_amount")
        check_amount(min_buy_in, "min_buy_in")
        check_amount(max_buy_in, "max_buy_in")
        if min_buy_in > max_buy_in:
            raise InvalidArgument("FIELD_INVALID", "min_buy_in exceeds max_buy_in", {"field": "min_buy_in"})
        if not min_buy_in <= buy_in_amount <= max_buy_in:
            raise FailedPrecondition(
                "BUY_IN_OUT_OF_RANGE",
                "the buy-in is outside the room's limits",
                {"min_buy_in": str(min_buy_in), "max_buy_in": str(max_buy_in)},
            )
        wallet_id = wallet_account_id(pool, player_id)
        seat = Account(seat_account_id(session_id), player_id, pool, AccountKind.TABLE_SEAT)
        rake = Account(rake_account_id(pool, table_id), HOUSE_OWNER, pool, AccountKind.HOUSE_RAKE)
        wanted = {
            "player_id": player_id,
            "table_id": table_id,
            "seat_index": seat_index,
            "pool": pool,
            "buy_in_amount": buy_in_amount,
            "min_buy_in": min_buy_in,
            "max_buy_in": max_buy_in,
        }

        async def work(conn: AsyncConnection) -> tuple[SeatSessionView, bool]:
            now = self._clock()
            # The wallet lock serialises everything that seats this player, whichever table asks.
            locked = await storage.lock_accounts(conn, [wallet_id])
            earlier = await storage.seat_session(conn, session_id)
            if earlier is not None:
                for field, value in wanted.items():
                    if getattr(earlier, field) != value:
                        raise AlreadyExists(
                            "IDEMPOTENCY_CONFLICT",
                            "the session id was used with different fields",
                            {"field": field},
                        )
                if not earlier.open:
                    raise FailedPrecondition(
                        "SEAT_SESSION_CLOSED",
                        "this seat session was opened and has closed",
                        {"session_id": session_id},
                    )
                return await self._session_view(conn, earlier), True
            # Only a full hold stops seats; a withdrawals hold lets the player play on.
            await refuse_if_held(
                conn, player_id, "PLAYER_ON_HOLD", "no new seats until an operator releases them", STOPS_SEATS
            )
            # The player's own breaks and loss limits (responsible gaming).
            await refuse_buy_in_beyond_self_limits(conn, player_id, pool, buy_in_amount, now)
            other = await storage.open_seat_session_of_player(conn, player_id)
            if other is not None:
                raise FailedPrecondition(
                    "SEAT_SESSION_ALREADY_OPEN",
                    "the player already has an open seat",
                    {"session_id": other.session_id, "table_id": other.table_id},
                )
            wallet = locked.get(wallet_id)
            if wallet is None or wallet.balance < buy_in_amount:
                raise FailedPrecondition("INSUFFICIENT_FUNDS", "the wallet cannot cover the buy-in", {})
            await storage.create_account_if_missing(conn, seat, now)
            await storage.create_account_if_missing(conn, rake, now)  # the table's, once
            row = SeatSessionRow(
                session_id=session_id,
                player_id=player_id,
                table_id=table_id,
                seat_index=seat_index,
                pool=pool,
                account_id=seat.account_id,
                open=True,
                buy_in_amount=buy_in_amount,
                min_buy_in=min_buy_in,
                max_buy_in=max_buy_in,
                cash_out_amount=0,
                opened_at=now,
                closed_at=None,
            )
            await storage.insert_seat_session(conn, row)
            buy_in = TransferRequest(
                transfer_id=f"buyin:{session_id}",
                debit_account_id=wallet_id,
                credit_account_id=seat.account_id,
                pool=pool,
                amount=buy_in_amount,
                kind=TransferKind.BUY_IN,
                reference=session_id,
                table_id=table_id,
            )
            plan = plan_transfers(
                [buy_in], linked=True, accounts={**locked, seat.account_id: seat}, existing={}, now=now
            )
            if plan.failed:
                # Only an overflow can get here; raising rolls the session back too.
                raise FailedPrecondition(plan.outcomes[0].reason, "the buy-in cannot be applied", {})
            await storage.append_transfers(conn, plan.new_records)
            await storage.save_accounts(conn, plan.changed_accounts.values())
            return SeatSessionView(row, buy_in_amount), False

        return await self._transaction(work)

    async def cash_out(self, session_id: str) -> tuple[SeatSessionView, bool]:
        """Close a session and return its stack to the wallet; a closed session is returned as is."""
        check_text(session_id, "session_id", MAX_SESSION_ID_LENGTH)

        async def work(conn: AsyncConnection) -> tuple[SeatSessionView, bool]:
            now = self._clock()
            session = await storage.seat_session(conn, session_id)
            if session is None:
                raise NotFound(
                    "SEAT_SESSION_NOT_FOUND", "no seat session with this id", {"field": "session_id"}
                )
            wallet_id = wallet_account_id(session.pool, session.player_id)
            locked = await storage.lock_accounts(conn, [session.account_id, wallet_id])
            seat = locked[session.account_id]
            if seat.closed:
                closed = await storage.seat_session(conn, session_id)
                assert closed is not None
                return SeatSessionView(closed, 0), True
            left = seat.balance
            changed: dict[str, Account] = {}
            if left > 0:
                request = TransferRequest(
                    transfer_id=f"cashout:{session_id}",
                    debit_account_id=seat.account_id,
                    credit_account_id=wallet_id,
                    pool=session.pool,
                    amount=left,
                    kind=TransferKind.CASH_OUT,
                    reference=session_id,
                    table_id=session.table_id,
                )
                plan = plan_transfers([request], linked=True, accounts=locked, existing={}, now=now)
                if plan.failed:
                    raise FailedPrecondition(plan.outcomes[0].reason, "the cash-out cannot be applied", {})
                await storage.append_transfers(conn, plan.new_records)
                changed = dict(plan.changed_accounts)
            changed[seat.account_id] = dataclasses.replace(changed.get(seat.account_id, seat), closed=True)
            await storage.save_accounts(conn, changed.values())
            await storage.close_seat_session(conn, session_id, left, now)
            closed = await storage.seat_session(conn, session_id)
            assert closed is not None
            return SeatSessionView(closed, 0), False

        return await self._transaction(work)

    async def seat_session(self, session_id: str) -> SeatSessionView:
        check_text(session_id, "session_id", MAX_SESSION_ID_LENGTH)

        async def work(conn: AsyncConnection) -> SeatSessionView:
            session = await storage.seat_session(conn, session_id)
            if session is None:
                raise NotFound(
                    "SEAT_SESSION_NOT_FOUND", "no seat session with this id", {"field": "session_id"}
                )
            return await self._session_view(conn, session)

        return await self._snapshot(work)

    async def open_seat_sessions(self, table_id: str) -> list[SeatSessionView]:
        check_text(table_id, "table_id")

        async def work(conn: AsyncConnection) -> list[SeatSessionView]:
            sessions = await storage.open_seat_sessions_of_table(conn, table_id)
            found = await storage.read_accounts(conn, [s.account_id for s in sessions])
            return [SeatSessionView(s, found[s.account_id].balance) for s in sessions]

        return await self._snapshot(work)

    # Hand settlement -------------------------------------------------------------------------------

    async def settle_hand(self, hand: HandResult) -> tuple[SettlementView, bool]:
        """Apply one hand as a linked batch; the hand id makes retries and takeovers safe.

        Hands of different tables arriving together share one transaction (see `coalescing.py`);
        each is still all or nothing on its own.
        """
        return await self._settlements.submit(hand)

    async def _settle_hands(
        self, hands: Sequence[HandResult]
    ) -> Sequence[Answer[tuple[SettlementView, bool]]]:
        decisions = await self._transaction(
            functools.partial(self._settle_batch, hands=hands), committed=self._settled
        )
        return [Answer(result=d.result, error=d.error) for d in decisions]

    def _settled(self, decisions: Sequence[_Decision]) -> None:
        """Report the hands this transaction settled (not the retries it answered, nor refusals)."""
        flows = []
        for decision in decisions:
            if decision.result is not None and not decision.result[1]:
                flows += settlement_flows(decision.result[0].hand)
        if flows:
            self._flows.applied(flows)

    async def _settle_batch(self, conn: AsyncConnection, hands: Sequence[HandResult]) -> list[_Decision]:
        """Settle several hands in one transaction: one lock-and-load, one write, one commit."""
        now = self._clock()
        batches = [(hand, settlement_transfers(hand)) for hand in hands]
        account_ids: set[str] = set()
        for hand, requests in batches:
            account_ids |= {seat_account_id(r.session_id) for r in hand.seat_results}
            account_ids |= {r.debit_account_id for r in requests} | {r.credit_account_id for r in requests}
        loaded = await storage.lock_and_load(
            conn,
            account_ids,
            session_ids=[r.session_id for hand in hands for r in hand.seat_results],
            hand_ids=[hand.hand_id for hand in hands],
        )
        accounts = dict(loaded.accounts)
        decisions: list[_Decision] = []
        records: list[TransferRecord] = []
        changed: dict[str, Account] = {}
        rows: list[storage.SettlementRow] = []
        for hand, requests in batches:
            try:
                decision = await self._decide_settlement(conn, hand, requests, accounts, loaded, now)
            except DomainError as error:
                decisions.append(_Decision(error=error))
                continue
            decisions.append(decision)
            records += decision.records
            changed.update(decision.changed)
            accounts.update(decision.changed)
            if decision.row is not None:
                rows.append(decision.row)
        await storage.write_changes(conn, records, changed.values(), rows, commit=True)
        return decisions

    async def _decide_settlement(
        self,
        conn: AsyncConnection,
        hand: HandResult,
        requests: list[TransferRequest],
        accounts: dict[str, Account],
        loaded: storage.Loaded,
        now: datetime,
    ) -> _Decision:
        """What one hand does, given the accounts as the hands before it in the batch left them."""
        seat_results_key = hand.seat_results_key()
        wanted = {
            "table_id": hand.table_id,
            "pool": hand.pool,
            "seat_results": seat_results_key,
            "rake": hand.rake,
            "house_bank_amount": hand.house_bank_amount,
        }
        earlier = loaded.settlements.get(hand.hand_id)
        if earlier is not None:
            for field in SETTLEMENT_FIELDS:
                if getattr(earlier, field) != wanted[field]:
                    raise AlreadyExists(
                        "IDEMPOTENCY_CONFLICT",
                        "the hand id was settled with different fields",
                        {"field": field},
                    )
            if earlier.failure_reason is not None:
                return _Decision(error=self._settlement_error(earlier))
            ids = [settlement_transfer_id(hand.hand_id, i) for i in range(earlier.transfer_count)]
            recorded = await storage.recorded_transfers(conn, ids)
            settled = [recorded[i] for i in ids]
            return _Decision(
                result=(self._settlement_view(hand, settled, accounts, earlier.created_at), True)
            )
        for result in hand.seat_results:
            session = loaded.sessions.get(result.session_id)
            if session is None:
                raise NotFound(
                    "SEAT_SESSION_NOT_FOUND",
                    "no seat session with this id",
                    {"session_id": result.session_id},
                )
            if session.table_id != hand.table_id or session.pool is not hand.pool:
                raise InvalidArgument(
                    "SEAT_SESSION_TABLE_MISMATCH",
                    "the seat session belongs to another table or pool",
                    {"session_id": result.session_id},
                )
        seat_ids = [seat_account_id(r.session_id) for r in hand.seat_results]
        closed = next((seat_id for seat_id in seat_ids if accounts[seat_id].closed), None)
        failure: tuple[str, str] | None = None
        records: list[TransferRecord] = []
        changed: dict[str, Account] = {}
        if closed is not None:
            failure = ("ACCOUNT_CLOSED", closed)
        elif requests:
            plan = plan_transfers(requests, linked=True, accounts=accounts, existing={}, now=now)
            culprit = next((o for o in plan.outcomes if o.reason not in ("", "LINKED_TRANSFER_FAILED")), None)
            if culprit is not None:
                request = next(r for r in requests if r.transfer_id == culprit.transfer_id)
                failure = (culprit.reason, request.debit_account_id)
            else:
                records, changed = plan.new_records, plan.changed_accounts
        row = storage.SettlementRow(
            hand_id=hand.hand_id,
            table_id=hand.table_id,
            pool=hand.pool,
            seat_results=seat_results_key,
            rake=hand.rake,
            house_bank_amount=hand.house_bank_amount,
            transfer_count=len(records),
            failure_reason=failure[0] if failure else None,
            failure_account_id=failure[1] if failure else None,
            created_at=now,
        )
        if failure is not None:
            return _Decision(error=self._settlement_error(row), row=row)
        view = self._settlement_view(hand, records, {**accounts, **changed}, now)
        return _Decision(result=(view, False), records=records, changed=changed, row=row)

    @staticmethod
    def _settlement_error(row: storage.SettlementRow) -> FailedPrecondition:
        account = row.failure_account_id or ""
        metadata = {"account_id": account}
        if account.startswith("seat:"):
            metadata["session_id"] = account.removeprefix("seat:")
        if row.failure_reason == "ACCOUNT_CLOSED":
            return FailedPrecondition(
                "SEAT_SESSION_CLOSED", "the hand touches a closed seat session", metadata
            )
        if row.failure_reason == INSUFFICIENT_FUNDS:
            return FailedPrecondition(INSUFFICIENT_FUNDS, "the hand would overdraw an account", metadata)
        return FailedPrecondition(
            row.failure_reason or BALANCE_OVERFLOW, "the hand cannot be settled", metadata
        )

    @staticmethod
    def _empty_settlement(hand: HandResult, at: datetime) -> SettlementView:
        return SettlementView(hand, [], [], at)

    @staticmethod
    def _settlement_view(
        hand: HandResult, records: list[TransferRecord], accounts: dict[str, Account], at: datetime
    ) -> SettlementView:
        stacks: dict[str, int] = {}
        for record in records:
            if record.request.debit_account_id.startswith("seat:") and record.debit_balance_after is not None:
                stacks[record.request.debit_account_id] = record.debit_balance_after
            if (
                record.request.credit_account_id.startswith("seat:")
                and record.credit_balance_after is not None
            ):
                stacks[record.request.credit_account_id] = record.credit_balance_after
        after = []
        for result in hand.seat_results:
            seat_id = seat_account_id(result.session_id)
            after.append((result.session_id, stacks.get(seat_id, accounts[seat_id].balance)))
        return SettlementView(hand, records, after, at)
