"""The cashier's use cases: each is one short transaction, retried on serialization failures.

This layer validates requests, locks what a use case touches through the storage adapter, asks the
pure ledger what happens, writes it, and raises typed domain errors. It knows nothing of gRPC.
Failures the ledger records (funds, closed accounts) are committed first and raised afterwards, so a
retry with the same id fails the same way.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import dataclasses
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import psycopg
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from service_runtime.errors import AlreadyExists, FailedPrecondition, InvalidArgument, NotFound
from services.cashier import storage
from services.cashier.ledger import (
    BALANCE_OVERFLOW,
    INSUFFICIENT_FUNDS,
    MAX_TEXT_LENGTH,
    Account,
    AccountKind,
    Pool,
    TransferKind,
    TransferOutcome,
    TransferRecord,
    TransferRequest,
    TransferStatus,
    check_amount,
    mint_account_id,
    plan_transfers,
    seat_account_id,
    validate_batch,
    wallet_account_id,
)
from services.cashier.payments import RATES, PaymentSource, check_withdrawable, chips_for, locked_amount
from services.cashier.settlement import (
    SETTLEMENT_FIELDS,
    HandResult,
    settlement_transfer_id,
    settlement_transfers,
)
from services.cashier.storage import PoolFigures, SeatSessionRow

T = TypeVar("T")

# PostgreSQL states worth retrying the whole transaction for: serialization failure, deadlock, and
# a unique violation from a concurrent insert of the same key (the retry then sees the winner's row).
_RETRYABLE_SQLSTATES = frozenset({"40001", "40P01", "23505"})
MAX_ATTEMPTS = 8
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500


def utc_now() -> datetime:
    return datetime.now(UTC)


def _text(value: str, field: str, limit: int = MAX_TEXT_LENGTH) -> None:
    if not value:
        raise InvalidArgument("FIELD_REQUIRED", f"{field} is required", {"field": field})
    if len(value) > limit or not value.isascii() or not value.isprintable():
        raise InvalidArgument(
            "FIELD_INVALID", f"{field} must be 1 to {limit} printable ASCII characters", {"field": field}
        )


@dataclass(frozen=True)
class PaymentResult:
    record: TransferRecord
    existing: bool
    unlock_time: datetime | None = None


@dataclass(frozen=True)
class WalletView:
    pool: Pool
    balance: int
    locked_amount: int
    next_unlock_time: datetime | None


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


@dataclass(frozen=True)
class StatementLine:
    record: TransferRecord
    account: Account
    amount: int
    balance_after: int


def _encode_token(seq: int, skip: int) -> str:
    return base64.urlsafe_b64encode(f"statement:{seq}:{skip}".encode()).decode()


def _decode_token(token: str) -> tuple[int, int]:
    try:
        label, seq, skip = base64.urlsafe_b64decode(token.encode()).decode().split(":")
        if label != "statement":
            raise ValueError(label)
        return int(seq), int(skip)
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise InvalidArgument(
            "PAGE_TOKEN_INVALID", "the page token was not issued by GetStatement", {"field": "page_token"}
        ) from exc


class Cashier:
    """The application service; one per process, sharing the engine's connection pool."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        clock: Callable[[], datetime] = utc_now,
        stars_purchases_enabled: bool = False,
        stars_lock: timedelta = timedelta(days=21),
    ) -> None:
        self._engine = engine
        self._clock = clock
        self._stars_enabled = stars_purchases_enabled
        self._stars_lock = stars_lock
        # SQLite (the embedded default) has one writer at a time; queueing here avoids busy errors.
        self._write_lock = asyncio.Lock() if engine.dialect.name == "sqlite" else None

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    # Transactions ----------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _serialised(self) -> AsyncIterator[None]:
        if self._write_lock is None:
            yield
            return
        async with self._write_lock:
            yield

    async def _transaction(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """Run `work` in one transaction, retrying it whole on serialization failures and deadlocks."""
        for attempt in range(MAX_ATTEMPTS):
            try:
                async with self._serialised(), self._engine.begin() as conn:
                    return await work(conn)
            except (DBAPIError, psycopg.Error) as exc:
                # The hot statements run on the driver directly, so its errors arrive unwrapped too.
                sqlstate = getattr(exc.orig if isinstance(exc, DBAPIError) else exc, "sqlstate", None)
                if sqlstate not in _RETRYABLE_SQLSTATES or attempt == MAX_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(random.uniform(0, 0.002 * 2**attempt))
        raise AssertionError("unreachable")

    async def _snapshot(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """Run read-only `work` against one consistent snapshot (REPEATABLE READ on PostgreSQL)."""
        async with self._engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                await conn.execution_options(isolation_level="REPEATABLE READ")
            async with conn.begin():
                return await work(conn)

    # Transfers -------------------------------------------------------------------------------------

    async def create_transfers(
        self, requests: Sequence[TransferRequest], *, linked: bool
    ) -> list[TransferOutcome]:
        """Apply a batch; malformed batches raise and record nothing, outcomes say the rest."""
        validate_batch(requests)
        return await self._transaction(lambda conn: self._apply(conn, requests, linked=linked))

    async def _apply(
        self,
        conn: AsyncConnection,
        requests: Sequence[TransferRequest],
        *,
        linked: bool,
        extra_accounts: Sequence[Account] = (),
    ) -> list[TransferOutcome]:
        ids = {r.debit_account_id for r in requests} | {r.credit_account_id for r in requests}
        loaded = await storage.lock_and_load(conn, ids, (r.transfer_id for r in requests))
        locked = loaded.accounts
        for account in extra_accounts:
            locked.setdefault(account.account_id, account)
        plan = plan_transfers(
            requests, linked=linked, accounts=locked, existing=loaded.transfers, now=self._clock()
        )
        await storage.write_changes(conn, plan.new_records, plan.changed_accounts.values())
        return plan.outcomes

    async def lookup_transfers(self, transfer_ids: Sequence[str]) -> list[TransferRecord]:
        if not transfer_ids:
            raise InvalidArgument("FIELD_REQUIRED", "transfer_ids is required", {"field": "transfer_ids"})
        if len(transfer_ids) > 1000:
            raise InvalidArgument("FIELD_INVALID", "at most 1,000 ids per lookup", {"field": "transfer_ids"})
        async with self._engine.connect() as conn:
            found = await storage.recorded_transfers(conn, transfer_ids)
        return [found[i] for i in dict.fromkeys(transfer_ids) if i in found]

    # Purchases and withdrawals -------------------------------------------------------------------

    async def purchase(
        self, *, payment_reference: str, player_id: str, source: PaymentSource | None, amount_minor: int
    ) -> PaymentResult:
        """Credit chips bought outside; idempotent by (source, payment reference)."""
        _text(payment_reference, "payment_reference")
        _text(player_id, "player_id")
        if source is None:
            raise InvalidArgument("FIELD_REQUIRED", "source is required", {"field": "source"})
        if source is PaymentSource.TELEGRAM_STARS and not self._stars_enabled:
            raise FailedPrecondition(
                "PAYMENT_SOURCE_DISABLED",
                "Telegram Stars purchases are switched off",
                {"source": source.value},
            )
        chips = chips_for(source, amount_minor)
        pool = RATES[source].pool
        wallet = Account(wallet_account_id(pool, player_id), player_id, pool, AccountKind.PLAYER_WALLET)
        request = TransferRequest(
            transfer_id=f"purchase:{source.value}:{payment_reference}",
            debit_account_id=mint_account_id(source.value, pool),
            credit_account_id=wallet.account_id,
            pool=pool,
            amount=chips,
            kind=TransferKind.PURCHASE,
            reference=payment_reference,
        )

        async def work(conn: AsyncConnection) -> TransferOutcome:
            await storage.create_account_if_missing(conn, wallet, self._clock())
            (outcome,) = await self._apply(conn, [request], linked=False)
            if outcome.status is TransferStatus.CREATED and source is PaymentSource.TELEGRAM_STARS:
                assert outcome.record is not None
                unlocks_at = outcome.record.created_at + self._stars_lock
                await storage.insert_stars_lot(conn, request.transfer_id, player_id, chips, unlocks_at)
            return outcome

        outcome = await self._transaction(work)
        record = self._payment_outcome(outcome)
        unlock = record.created_at + self._stars_lock if source is PaymentSource.TELEGRAM_STARS else None
        return PaymentResult(record, outcome.status is TransferStatus.EXISTS, unlock)

    @staticmethod
    def _payment_outcome(outcome: TransferOutcome) -> TransferRecord:
        if outcome.status is TransferStatus.EXISTS_WITH_DIFFERENT_FIELD:
            field = {
                "credit_account_id": "player_id",
                "debit_account_id": "player_id",
                "amount": "amount_minor",
            }.get(outcome.field, outcome.field)
            raise AlreadyExists(
                "IDEMPOTENCY_CONFLICT",
                "the payment reference was used with different fields",
                {"field": field},
            )
        if outcome.status is TransferStatus.FAILED:
            raise FailedPrecondition(outcome.reason, "the payment cannot be applied", {})
        assert outcome.record is not None
        return outcome.record

    async def withdraw(
        self, *, payment_reference: str, player_id: str, source: PaymentSource | None, amount_minor: int
    ) -> PaymentResult:
        """Debit chips paid out; idempotent by (source, payment reference); Stars chips stay locked."""
        _text(payment_reference, "payment_reference")
        _text(player_id, "player_id")
        if source is None:
            raise InvalidArgument("FIELD_REQUIRED", "source is required", {"field": "source"})
        if not RATES[source].withdrawable:
            raise InvalidArgument(
                "POOL_INVALID", "chips cannot be withdrawn as Telegram Stars", {"field": "source"}
            )
        chips = chips_for(source, amount_minor)
        pool = RATES[source].pool
        wallet = Account(wallet_account_id(pool, player_id), player_id, pool, AccountKind.PLAYER_WALLET)
        request = TransferRequest(
            transfer_id=f"withdrawal:{source.value}:{payment_reference}",
            debit_account_id=wallet.account_id,
            credit_account_id=mint_account_id(source.value, pool),
            pool=pool,
            amount=chips,
            kind=TransferKind.WITHDRAWAL,
            reference=payment_reference,
        )

        async def work(conn: AsyncConnection) -> TransferOutcome:
            now = self._clock()
            await storage.create_account_if_missing(conn, wallet, now)
            loaded = await storage.lock_and_load(
                conn, [request.debit_account_id, request.credit_account_id], [request.transfer_id]
            )
            locked, recorded = loaded.accounts, loaded.transfers
            if not recorded and pool is Pool.GRAM:
                balance = locked[wallet.account_id].balance
                lots = await storage.locked_stars_lots(conn, player_id, now)
                check_withdrawable(chips, balance, lots, now)
            plan = plan_transfers([request], linked=False, accounts=locked, existing=recorded, now=now)
            await storage.write_changes(conn, plan.new_records, plan.changed_accounts.values())
            return plan.outcomes[0]

        outcome = await self._transaction(work)
        record = self._payment_outcome(outcome)
        return PaymentResult(record, outcome.status is TransferStatus.EXISTS)

    async def balances(self, player_id: str) -> tuple[list[WalletView], SeatSessionView | None]:
        _text(player_id, "player_id")

        async def work(conn: AsyncConnection) -> tuple[list[WalletView], SeatSessionView | None]:
            now = self._clock()
            found = await storage.read_accounts(conn, [wallet_account_id(p, player_id) for p in Pool])
            lots = await storage.locked_stars_lots(conn, player_id, now)
            wallets = []
            for pool in Pool:
                account = found.get(wallet_account_id(pool, player_id))
                balance = account.balance if account else 0
                pool_lots = lots if pool is Pool.GRAM else []
                locked = locked_amount(balance, pool_lots, now)
                next_unlock = min((lot.unlocks_at for lot in pool_lots), default=None) if locked else None
                wallets.append(WalletView(pool, balance, locked, next_unlock))
            session = await storage.open_seat_session_of_player(conn, player_id)
            view = await self._session_view(conn, session) if session else None
            return wallets, view

        return await self._snapshot(work)

    # Seat sessions ---------------------------------------------------------------------------------

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
        _text(session_id, "session_id", 100)
        _text(player_id, "player_id")
        _text(table_id, "table_id")
        if seat_index < 0:
            raise InvalidArgument("FIELD_INVALID", "seat_index must be 0 or more", {"field": "seat_index"})
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
        _text(session_id, "session_id", 100)

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
        _text(session_id, "session_id", 100)

        async def work(conn: AsyncConnection) -> SeatSessionView:
            session = await storage.seat_session(conn, session_id)
            if session is None:
                raise NotFound(
                    "SEAT_SESSION_NOT_FOUND", "no seat session with this id", {"field": "session_id"}
                )
            return await self._session_view(conn, session)

        return await self._snapshot(work)

    async def open_seat_sessions(self, table_id: str) -> list[SeatSessionView]:
        _text(table_id, "table_id")

        async def work(conn: AsyncConnection) -> list[SeatSessionView]:
            sessions = await storage.open_seat_sessions_of_table(conn, table_id)
            found = await storage.read_accounts(conn, [s.account_id for s in sessions])
            return [SeatSessionView(s, found[s.account_id].balance) for s in sessions]

        return await self._snapshot(work)

    # Hand settlement -------------------------------------------------------------------------------

    async def settle_hand(self, hand: HandResult) -> tuple[SettlementView, bool]:
        """Apply one hand as a linked batch; the hand id makes retries and takeovers safe."""
        requests = settlement_transfers(hand)
        seat_ids = [seat_account_id(r.session_id) for r in hand.seat_results]
        wanted = {
            "table_id": hand.table_id,
            "pool": hand.pool,
            "seat_results": hand.seat_results_key(),
            "rake": hand.rake,
            "house_bank_amount": hand.house_bank_amount,
        }

        async def work(conn: AsyncConnection) -> tuple[SettlementView, bool, storage.SettlementRow | None]:
            now = self._clock()
            account_ids = (
                set(seat_ids)
                | {r.debit_account_id for r in requests}
                | {r.credit_account_id for r in requests}
            )
            loaded = await storage.lock_and_load(
                conn, account_ids, session_ids=[r.session_id for r in hand.seat_results], hand_id=hand.hand_id
            )
            locked, earlier, sessions = loaded.accounts, loaded.settlement, loaded.sessions
            if earlier is not None:
                for field in SETTLEMENT_FIELDS:
                    if getattr(earlier, field) != wanted[field]:
                        raise AlreadyExists(
                            "IDEMPOTENCY_CONFLICT",
                            "the hand id was settled with different fields",
                            {"field": field},
                        )
                if earlier.failure_reason is not None:
                    return self._empty_settlement(hand, earlier.created_at), True, earlier
                ids = [settlement_transfer_id(hand.hand_id, i) for i in range(earlier.transfer_count)]
                recorded = await storage.recorded_transfers(conn, ids)
                settled = [recorded[i] for i in ids]
                return self._settlement_view(hand, settled, locked, earlier.created_at), True, None
            for result in hand.seat_results:
                session = sessions.get(result.session_id)
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
            closed = next((seat_id for seat_id in seat_ids if locked[seat_id].closed), None)
            failure: tuple[str, str] | None = None
            records: list[TransferRecord] = []
            changed: dict[str, Account] = {}
            if closed is not None:
                failure = ("ACCOUNT_CLOSED", closed)
            elif requests:
                plan = plan_transfers(requests, linked=True, accounts=locked, existing={}, now=now)
                culprit = next(
                    (o for o in plan.outcomes if o.reason not in ("", "LINKED_TRANSFER_FAILED")), None
                )
                if culprit is not None:
                    request = next(r for r in requests if r.transfer_id == culprit.transfer_id)
                    failure = (culprit.reason, request.debit_account_id)
                else:
                    records = plan.new_records
                    changed = plan.changed_accounts
                    locked = {**locked, **changed}
            row = storage.SettlementRow(
                hand_id=hand.hand_id,
                table_id=hand.table_id,
                pool=hand.pool,
                seat_results=hand.seat_results_key(),
                rake=hand.rake,
                house_bank_amount=hand.house_bank_amount,
                transfer_count=len(records),
                failure_reason=failure[0] if failure else None,
                failure_account_id=failure[1] if failure else None,
                created_at=now,
            )
            await storage.write_changes(conn, records, changed.values(), row)
            if failure is not None:
                return self._empty_settlement(hand, now), False, row
            return self._settlement_view(hand, records, locked, now), False, None

        view, existing, failed = await self._transaction(work)
        if failed is not None:
            raise self._settlement_error(failed)
        return view, existing

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

    # Statement and audit ---------------------------------------------------------------------------

    async def statement(
        self, player_id: str, *, pool: Pool | None, page_size: int, page_token: str
    ) -> tuple[list[StatementLine], str]:
        """A page of the player's balance changes, newest first, and the token of the next page."""
        _text(player_id, "player_id")
        if page_size < 0:
            raise InvalidArgument("FIELD_INVALID", "page_size must not be negative", {"field": "page_size"})
        size = min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        start_seq, skip = _decode_token(page_token) if page_token else (None, 0)

        async def work(conn: AsyncConnection) -> tuple[list[StatementLine], str]:
            owned = {a.account_id: a for a in await storage.accounts_of_owner(conn, player_id)}
            if pool is not None:
                owned = {k: a for k, a in owned.items() if a.pool is pool}
            if not owned:
                return [], ""
            rows = await storage.transfers_touching(
                conn, list(owned), before_seq=start_seq, limit=size + 2 + skip
            )
            lines: list[tuple[int, int, StatementLine]] = []
            for seq, record in rows:
                position = 0
                for side in ("credit", "debit"):
                    account_id = getattr(record.request, f"{side}_account_id")
                    account = owned.get(account_id)
                    if account is None:
                        continue
                    amount = record.request.amount if side == "credit" else -record.request.amount
                    after = getattr(record, f"{side}_balance_after")
                    lines.append((seq, position, StatementLine(record, account, amount, int(after))))
                    position += 1
            if start_seq is not None:
                lines = [line for line in lines if not (line[0] == start_seq and line[1] < skip)]
            page, rest = lines[:size], lines[size:]
            token = _encode_token(rest[0][0], rest[0][1]) if rest else ""
            return [line[2] for line in page], token

        return await self._snapshot(work)

    async def audit(self) -> tuple[list[PoolFigures], datetime]:
        """Conservation figures of every pool from one consistent snapshot."""

        async def work(conn: AsyncConnection) -> tuple[list[PoolFigures], datetime]:
            return await storage.pool_figures(conn), self._clock()

        return await self._snapshot(work)


def audit_balanced(figures: PoolFigures) -> bool:
    """The conservation rule of one pool: what players and the house hold is what was minted net."""
    return (
        figures.accounts_total == figures.minted - figures.burned
        and figures.journal_total == figures.debits_posted == figures.credits_posted
        and figures.negative_accounts == 0
    )
