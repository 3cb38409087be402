"""Four-eyes on funding the house (issue 38): one member of finance asks, another decides.

Putting chips into a pool's house bank or jackpot mints them; taking them out burns them. Nobody
does either alone: `request_funding` records who asked for what and why, and moves nothing;
`decide_funding` by another staff member approves it (the transfer `funding:<request_id>` between
the pool's house-funding mint and the account, committed with the decision) or rejects it. Each is
idempotent by its own id (the request's, the decision's), binding every field; the asker's own
decision is refused (FOUR_EYES_REQUIRED) and the database refuses it again (a CHECK). A refusal on
funds (defunding more than the account holds) leaves the request pending.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from service_runtime.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from service_runtime.four_eyes import staff_person
from services.cashier import storage
from services.cashier.ledger import (
    HOUSE_FUNDING_SOURCE,
    MAX_TRANSFER_ID_LENGTH,
    AccountKind,
    Pool,
    TransferKind,
    TransferOutcome,
    TransferRecord,
    TransferRequest,
    TransferStatus,
    bank_account_id,
    check_amount,
    check_text,
    funding_transfer_id,
    jackpot_account_id,
    mint_account_id,
)
from services.cashier.money_flow import funding_flows
from services.cashier.pages import page_position
from services.cashier.pages import page_token as page_token_of
from services.cashier.storage import FundingState, HouseFundingRow
from services.cashier.unit_of_work import UnitOfWork

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50


def funding_transfer(
    request_id: str, pool: Pool | None, account: AccountKind | None, amount: int, reason: str
) -> TransferRequest:
    """The transfer a funding of `amount` (signed) of a house account is, every field checked."""
    check_text(request_id, "request_id", MAX_TRANSFER_ID_LENGTH)
    if pool is None:
        raise InvalidArgument("POOL_INVALID", "pool is required", {"field": "pool"})
    if account is None:
        raise InvalidArgument("FIELD_REQUIRED", "account is required", {"field": "account"})
    if account not in (AccountKind.HOUSE_BANK, AccountKind.JACKPOT):
        raise InvalidArgument(
            "FIELD_INVALID", "account must be the house bank or the jackpot", {"field": "account"}
        )
    if amount == 0:
        raise InvalidArgument("AMOUNT_INVALID", "amount must not be 0", {"field": "amount"})
    check_amount(abs(amount))
    check_text(reason, "reason")
    house = bank_account_id(pool) if account is AccountKind.HOUSE_BANK else jackpot_account_id(pool)
    mint = mint_account_id(HOUSE_FUNDING_SOURCE, pool)
    return TransferRequest(
        transfer_id=funding_transfer_id(request_id),
        debit_account_id=mint if amount > 0 else house,
        credit_account_id=house if amount > 0 else mint,
        pool=pool,
        amount=abs(amount),
        kind=TransferKind.HOUSE_FUNDING,
        reference=reason,
    )


def _conflict(field: str) -> AlreadyExists:
    return AlreadyExists("IDEMPOTENCY_CONFLICT", "the id was used with different fields", {"field": field})


def _page_scope(state: FundingState | None) -> str:
    return "ALL" if state is None else state.value


def _page_after(page_token: str, state: FundingState | None) -> int | None:
    """The position a page token continues from (services/cashier/pages.py)."""
    return page_position(page_token, _page_scope(state))


class HouseFundingUseCases(UnitOfWork):
    async def request_funding(
        self,
        *,
        asker: str,
        request_id: str,
        pool: Pool | None,
        account: AccountKind | None,
        amount: int,
        reason: str,
    ) -> tuple[HouseFundingRow, bool]:
        """Record the request (nothing moves); (the request, whether this id was recorded before)."""
        transfer = funding_transfer(request_id, pool, account, amount, reason)
        staff_person(asker)
        assert pool is not None
        assert account is not None

        async def work(conn: AsyncConnection) -> tuple[HouseFundingRow, bool]:
            earlier = await storage.house_funding_by_request(conn, request_id)
            if earlier is not None:
                for field, recorded, given in (
                    ("pool", earlier.pool, pool),
                    ("account", earlier.account, account),
                    ("amount", earlier.amount, amount),
                    ("reason", earlier.reason, reason),
                    ("request_id", earlier.requested_by, asker),  # someone else's id
                ):
                    if recorded != given:
                        raise _conflict(field)
                return earlier, True
            # An id a direct funding (before four-eyes) already used: its transfer id is taken.
            if await storage.recorded_transfers(conn, [transfer.transfer_id]):
                raise _conflict("request_id")
            row = await storage.insert_house_funding(
                conn,
                request_id=request_id,
                pool=pool,
                account=account,
                amount=amount,
                reason=reason,
                requested_by=asker,
                requested_at=self._clock(),
            )
            return row, False

        return await self._transaction(work)

    async def decide_funding(
        self, *, decider: str, decision_id: str, request_id: str, approve: bool, reason: str
    ) -> tuple[HouseFundingRow, TransferRecord | None, bool, int]:
        """Approve (apply the transfer) or reject a pending request; (the request as decided, the
        transfer of an approval, whether this decision id was applied before, the account's balance
        after the transfer)."""
        check_text(decision_id, "decision_id", MAX_TRANSFER_ID_LENGTH)
        check_text(request_id, "request_id", MAX_TRANSFER_ID_LENGTH)
        check_text(reason, "reason")
        staff_person(decider)
        wanted = FundingState.APPROVED if approve else FundingState.REJECTED

        async def work(conn: AsyncConnection) -> tuple[HouseFundingRow, TransferRecord | None, bool, int]:
            row = await storage.house_funding_by_request(conn, request_id, lock=True)
            earlier = await storage.house_funding_by_decision(conn, decision_id)
            if earlier is not None:
                for field, recorded, given in (
                    ("request_id", earlier.request_id, request_id),
                    ("approve", earlier.state, wanted),
                    ("reason", earlier.decision_reason, reason),
                    ("decision_id", earlier.decided_by, decider),  # someone else's id
                ):
                    if recorded != given:
                        raise _conflict(field)
                applied, applied_after = await _applied(conn, earlier)
                return earlier, applied, True, applied_after
            if row is None:
                raise NotFound(
                    "FUNDING_REQUEST_NOT_FOUND", "no such funding request", {"request_id": request_id}
                )
            if staff_person(row.requested_by) == staff_person(decider):
                raise PermissionDenied(
                    "FOUR_EYES_REQUIRED",
                    "you asked for this funding: another member of finance must decide it",
                    {"request_id": request_id},
                )
            if row.state is not FundingState.PENDING:
                raise FailedPrecondition(
                    "FUNDING_ALREADY_DECIDED",
                    "the funding request was already decided",
                    {"request_id": request_id, "state": row.state.value},
                )
            record: TransferRecord | None = None
            after = 0
            if approve:
                transfer = funding_transfer(row.request_id, row.pool, row.account, row.amount, row.reason)
                (outcome,) = await self._apply(conn, [transfer], linked=False)
                if outcome.status is TransferStatus.FAILED:
                    raise FailedPrecondition(outcome.reason, "the house account cannot be funded so", {})
                if outcome.status is not TransferStatus.CREATED or outcome.record is None:
                    raise _conflict("request_id")  # the transfer id is someone else's (guarded at request)
                record = outcome.record
                after = _balance_after(record, row.amount)
            decided = await storage.decide_house_funding(
                conn,
                request_id=request_id,
                state=wanted,
                decision_id=decision_id,
                decided_by=decider,
                decided_at=self._clock(),
                decision_reason=reason,
            )
            return decided, record, False, after

        def committed(answer: tuple[HouseFundingRow, TransferRecord | None, bool, int]) -> None:
            _, record, existing, _ = answer
            if record is not None and not existing:
                self._flows.applied(funding_flows(_created(record)))

        return await self._transaction(work, committed=committed)

    async def list_funding(
        self, state: FundingState | None, *, page_size: int, page_token: str
    ) -> tuple[list[HouseFundingRow], str]:
        """Requests newest first, of one state or all; (the page, the next page's token)."""
        if not 0 <= page_size <= MAX_PAGE_SIZE:
            raise InvalidArgument(
                "FIELD_INVALID", f"page_size is 0 to {MAX_PAGE_SIZE}", {"field": "page_size"}
            )
        size = page_size or DEFAULT_PAGE_SIZE
        before = _page_after(page_token, state)

        async def work(conn: AsyncConnection) -> tuple[list[HouseFundingRow], str]:
            rows = await storage.house_funding_page(conn, state, before_seq=before, limit=size + 1)
            page, more = rows[:size], len(rows) > size
            return page, page_token_of(_page_scope(state), page[-1].seq) if more else ""

        return await self._snapshot(work)


async def _applied(conn: AsyncConnection, row: HouseFundingRow) -> tuple[TransferRecord | None, int]:
    """The transfer an approval applied, and the account's balance right after it."""
    if row.state is not FundingState.APPROVED:
        return None, 0
    transfer_id = funding_transfer_id(row.request_id)
    record = (await storage.recorded_transfers(conn, [transfer_id]))[transfer_id]
    return record, _balance_after(record, row.amount)


def _balance_after(record: TransferRecord, amount: int) -> int:
    after = record.credit_balance_after if amount > 0 else record.debit_balance_after
    return int(after or 0)


def _created(record: TransferRecord) -> TransferOutcome:
    return TransferOutcome(record.request.transfer_id, TransferStatus.CREATED, record)
