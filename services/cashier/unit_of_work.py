"""How every cashier use case touches the database: one short transaction, retried whole.

Serialization failures, deadlocks and unique-key races (two first attempts of one id) roll the
transaction back and run it again; the use case then sees the winner's rows. Read-only use cases
read one consistent snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import psycopg
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from service_runtime.errors import DomainError
from service_runtime.structured_logging import get_logger
from services.cashier import storage
from services.cashier.coalescing import Answer
from services.cashier.ledger import (
    Account,
    TransferOutcome,
    TransferRecord,
    TransferRequest,
    plan_transfers,
)
from services.cashier.money_flow import FlowObserver, IgnoredFlows

T = TypeVar("T")
log = get_logger("cashier")

# PostgreSQL states worth retrying the whole transaction for: serialization failure, deadlock, and
# a unique violation from a concurrent insert of the same key (the retry then sees the winner's row).
_RETRYABLE_SQLSTATES = frozenset({"40001", "40P01", "23505"})
MAX_ATTEMPTS = 8
# Coalesced transactions of one kind that may run at once: while one is in PostgreSQL (locking,
# writing, committing), the next is decided in Python. Two measured best: 128 callers settling
# hands went from about 2,100 to 3,100 hands/s; a third found the machine's two cores busy.
TRANSACTIONS_IN_FLIGHT = 2
# ...but a second one only for at least this many waiting calls: a trickle of calls into a busy
# process (the gRPC server, whose own Python is the bottleneck) is cheaper in one transaction.
# Against opening one for any waiting call, in two back-to-back pairs: gRPC single transfers
# 1,290 / 1,353 -> 1,534 / 1,501 per second, ledger single 8,757 / 8,656 -> 10,085 / 9,461.
MIN_EXTRA_BATCH = 8


def utc_now() -> datetime:
    return datetime.now(UTC)


# Transactions whose callers were cancelled, still running to their end (kept so they are not lost).
_RUNNING_ON: set[asyncio.Future[Any]] = set()


async def run_to_end(step: Coroutine[Any, Any, T]) -> T:
    """Await `step` in a task of its own, so cancelling the caller never cuts it halfway.

    A cut transaction on the embedded default (SQLite, one pooled connection) could leave that
    connection checked out, and every later call of the service waited for it: 4 of 10 runs of 60
    holds whose first tries met a 1-20 ms deadline hung (2026-12-06). The caller's cancellation is
    raised at once; the step finishes in the background (milliseconds: one transaction)."""
    task = asyncio.ensure_future(step)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if not task.done():
            _RUNNING_ON.add(task)
            task.add_done_callback(_finished)
        raise


def _finished(task: asyncio.Future[Any]) -> None:
    _RUNNING_ON.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: its caller is gone, and a failed transaction changed nothing


class UnitOfWork:
    """The database side every use case shares: engine, clock, transactions with retry, and who
    hears of the money each committed transaction moved (`money_flow.py`)."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        clock: Callable[[], datetime] = utc_now,
        flows: FlowObserver | None = None,
    ) -> None:
        self._engine = engine
        self._clock = clock
        self._flows: FlowObserver = IgnoredFlows() if flows is None else flows
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

    async def _transaction(
        self,
        work: Callable[[AsyncConnection], Awaitable[T]],
        *,
        committed: Callable[[T], None] | None = None,
    ) -> T:
        """Run `work` in one transaction, retrying it whole on serialization failures and deadlocks;
        `committed` gets the result of the attempt that committed, once it has.

        Once begun, the transaction is never cut: a caller cancelled meanwhile (its client's deadline
        passed, or it went away) is answered at once, while the transaction commits or rolls back on
        its own and gives its connection back (`run_to_end`). `committed` runs there too, so what a
        transaction applied is reported even when nobody waits for its answer any more (its caller's
        retry finds it recorded and applies nothing)."""
        return await run_to_end(self._attempts(work, committed))

    async def _attempts(
        self, work: Callable[[AsyncConnection], Awaitable[T]], committed: Callable[[T], None] | None
    ) -> T:
        for attempt in range(MAX_ATTEMPTS):
            try:
                async with self._serialised(), self._engine.begin() as conn:
                    result = await work(conn)
            except (DBAPIError, psycopg.Error) as exc:
                # The hot statements run on the driver directly, so its errors arrive unwrapped too.
                sqlstate = getattr(exc.orig if isinstance(exc, DBAPIError) else exc, "sqlstate", None)
                if sqlstate not in _RETRYABLE_SQLSTATES or attempt == MAX_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(random.uniform(0, 0.002 * 2**attempt))
                continue
            if committed is not None:
                try:
                    committed(result)
                except Exception:
                    # The ledger has it: a figure that cannot be counted never fails the operation.
                    log.exception("money figures not counted for a committed transaction")
            return result
        raise AssertionError("unreachable")

    async def _snapshot(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """Run read-only `work` against one consistent snapshot (REPEATABLE READ on PostgreSQL), never
        cut halfway either (`run_to_end`)."""
        return await run_to_end(self._read(work))

    async def _read(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        async with self._engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                await conn.execution_options(isolation_level="REPEATABLE READ")
            async with conn.begin():
                return await work(conn)

    async def _apply(
        self,
        conn: AsyncConnection,
        requests: Sequence[TransferRequest],
        *,
        linked: bool,
        extra_accounts: Sequence[Account] = (),
    ) -> list[TransferOutcome]:
        """Lock, decide and write one batch of transfers in the caller's transaction."""
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

    async def _apply_many(
        self, conn: AsyncConnection, batches: Sequence[TransferBatch]
    ) -> list[Answer[list[TransferOutcome]]]:
        """Several callers' batches in one transaction, each decided on its own, in arrival order.

        Each batch sees the balances and the transfer ids the batches before it left, so two
        callers sending the same id in one transaction get CREATED and EXISTS, as they would apart.
        """
        ids: set[str] = set()
        for batch in batches:
            ids |= {r.debit_account_id for r in batch.requests} | {
                r.credit_account_id for r in batch.requests
            }
        loaded = await storage.lock_and_load(
            conn, ids, (r.transfer_id for batch in batches for r in batch.requests)
        )
        accounts, existing = dict(loaded.accounts), dict(loaded.transfers)
        now = self._clock()
        answers: list[Answer[list[TransferOutcome]]] = []
        records: list[TransferRecord] = []
        changed: dict[str, Account] = {}
        for batch in batches:
            try:
                await self._admit(conn, batch, accounts, existing, now, records)
                plan = plan_transfers(
                    batch.requests,
                    linked=batch.linked,
                    accounts=accounts,
                    existing=existing,
                    now=now,
                    allow_mint_accounts=False,  # CreateTransfers never mints or burns
                )
            except DomainError as error:
                answers.append(Answer(error=error))
                continue
            answers.append(Answer(result=plan.outcomes))
            records += plan.new_records
            existing.update((r.request.transfer_id, r) for r in plan.new_records)
            changed.update(plan.changed_accounts)
            accounts.update(plan.changed_accounts)
        await storage.write_changes(conn, records, changed.values(), commit=True)
        return answers

    async def _admit(
        self,
        conn: AsyncConnection,
        batch: TransferBatch,
        accounts: Mapping[str, Account],
        existing: Mapping[str, TransferRecord],
        now: datetime,
        earlier: Sequence[TransferRecord],
    ) -> None:
        """Raise a DomainError to refuse `batch` before it is planned (nothing of it is recorded); the
        accounts are locked and hold what the batches before it left, `earlier` is what those batches
        recorded (in this transaction, not committed yet). None here: the cashier refuses house-game
        stakes of players on hold, on a break or at a loss limit."""


@dataclass(frozen=True)
class TransferBatch:
    """One caller's CreateTransfers batch, already validated."""

    requests: Sequence[TransferRequest]
    linked: bool
    # A batch of a house-game round already dealt (a decision's stake, the settlement): a hold or a
    # break lets it finish (a new round's stakes, and anything not marked, answer to them).
    round_in_play: bool = False
