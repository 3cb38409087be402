"""The gRPC face of the cashier: translates protobuf to application calls and back, nothing more.

Who may call which RPC is the access policy in `assembly.py`; the handlers that take a player id
also make sure a caller holding only the player role names nobody but themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from typing import Any, TypeVar

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import current_caller
from service_runtime.errors import InvalidArgument, PermissionDenied
from service_runtime.proto_time import to_timestamp
from services.cashier.application import Cashier, audit_balanced
from services.cashier.holds import HoldScope
from services.cashier.ledger import (
    AccountKind,
    Pool,
    TransferKind,
    TransferOutcome,
    TransferRecord,
    TransferRequest,
    TransferStatus,
)
from services.cashier.payments import PaymentSource
from services.cashier.responsible_gaming import SelfLimitsView
from services.cashier.seat_sessions import SeatSessionView
from services.cashier.self_limit_storage import SelfLimitChange
from services.cashier.self_limits import BreakKind, LimitKind
from services.cashier.settlement import SeatResult, normalise_hand_result
from services.cashier.storage import FundingState, HouseFundingRow, WithdrawalRow

SERVICE_NAME = "poker.cashier.v1.CashierService"
T = TypeVar("T")

_POOLS: dict[common_pb2.ChipPool.ValueType, Pool] = {
    common_pb2.CHIP_POOL_GRAM: Pool.GRAM,
    common_pb2.CHIP_POOL_MPX: Pool.MPX,
}
_POOLS_PB: dict[Pool, common_pb2.ChipPool.ValueType] = {pool: value for value, pool in _POOLS.items()}
_TRANSFER_KINDS: dict[cashier_pb2.TransferKind.ValueType, TransferKind] = {
    cashier_pb2.TRANSFER_KIND_PURCHASE: TransferKind.PURCHASE,
    cashier_pb2.TRANSFER_KIND_WITHDRAWAL: TransferKind.WITHDRAWAL,
    cashier_pb2.TRANSFER_KIND_BUY_IN: TransferKind.BUY_IN,
    cashier_pb2.TRANSFER_KIND_CASH_OUT: TransferKind.CASH_OUT,
    cashier_pb2.TRANSFER_KIND_HAND_RESULT: TransferKind.HAND_RESULT,
    cashier_pb2.TRANSFER_KIND_RAKE: TransferKind.RAKE,
    cashier_pb2.TRANSFER_KIND_HOUSE_GAME_RESULT: TransferKind.HOUSE_GAME_RESULT,
    cashier_pb2.TRANSFER_KIND_ADJUSTMENT: TransferKind.ADJUSTMENT,
    cashier_pb2.TRANSFER_KIND_HOUSE_FUNDING: TransferKind.HOUSE_FUNDING,
}
_TRANSFER_KINDS_PB: dict[TransferKind, cashier_pb2.TransferKind.ValueType] = {
    kind: value for value, kind in _TRANSFER_KINDS.items()
}
_ACCOUNT_KINDS_PB = {
    AccountKind.PLAYER_WALLET: cashier_pb2.ACCOUNT_KIND_PLAYER_WALLET,
    AccountKind.TABLE_SEAT: cashier_pb2.ACCOUNT_KIND_TABLE_SEAT,
    AccountKind.HOUSE_RAKE: cashier_pb2.ACCOUNT_KIND_HOUSE_RAKE,
    AccountKind.HOUSE_BANK: cashier_pb2.ACCOUNT_KIND_HOUSE_BANK,
    AccountKind.JACKPOT: cashier_pb2.ACCOUNT_KIND_JACKPOT,
    AccountKind.EXTERNAL_MINT: cashier_pb2.ACCOUNT_KIND_EXTERNAL_MINT,
}
_SOURCES: dict[cashier_pb2.PaymentSource.ValueType, PaymentSource] = {
    cashier_pb2.PAYMENT_SOURCE_GRAM: PaymentSource.GRAM,
    cashier_pb2.PAYMENT_SOURCE_MPX: PaymentSource.MPX,
    cashier_pb2.PAYMENT_SOURCE_TELEGRAM_STARS: PaymentSource.TELEGRAM_STARS,
}
_SOURCES_PB = {source: value for value, source in _SOURCES.items()}
_HOUSE_ACCOUNTS: dict[cashier_pb2.HouseAccount.ValueType, AccountKind] = {
    cashier_pb2.HOUSE_ACCOUNT_BANK: AccountKind.HOUSE_BANK,
    cashier_pb2.HOUSE_ACCOUNT_JACKPOT: AccountKind.JACKPOT,
}
_FUNDING_STATES: dict[cashier_pb2.HouseFundingState.ValueType, FundingState] = {
    cashier_pb2.HOUSE_FUNDING_STATE_PENDING: FundingState.PENDING,
    cashier_pb2.HOUSE_FUNDING_STATE_APPROVED: FundingState.APPROVED,
    cashier_pb2.HOUSE_FUNDING_STATE_REJECTED: FundingState.REJECTED,
}
_FUNDING_STATES_PB = {state: value for value, state in _FUNDING_STATES.items()}
_HOUSE_ACCOUNTS_PB = {kind: value for value, kind in _HOUSE_ACCOUNTS.items()}
# A hold's scope; unspecified is the full hold (every caller before scopes existed sent none).
_HOLD_SCOPES: dict[cashier_pb2.HoldScope.ValueType, HoldScope] = {
    cashier_pb2.HOLD_SCOPE_WITHDRAWALS: HoldScope.WITHDRAWALS,
}
_HOLD_SCOPES_PB = {
    HoldScope.FULL: cashier_pb2.HOLD_SCOPE_UNSPECIFIED,
    HoldScope.WITHDRAWALS: cashier_pb2.HOLD_SCOPE_WITHDRAWALS,
}
_LIMIT_KINDS: dict[cashier_pb2.SelfLimitKind.ValueType, LimitKind] = {
    cashier_pb2.SELF_LIMIT_KIND_PURCHASE_DAILY: LimitKind.PURCHASE_DAILY,
    cashier_pb2.SELF_LIMIT_KIND_PURCHASE_WEEKLY: LimitKind.PURCHASE_WEEKLY,
    cashier_pb2.SELF_LIMIT_KIND_PURCHASE_MONTHLY: LimitKind.PURCHASE_MONTHLY,
    cashier_pb2.SELF_LIMIT_KIND_LOSS_DAILY: LimitKind.LOSS_DAILY,
    cashier_pb2.SELF_LIMIT_KIND_LOSS_WEEKLY: LimitKind.LOSS_WEEKLY,
    cashier_pb2.SELF_LIMIT_KIND_LOSS_MONTHLY: LimitKind.LOSS_MONTHLY,
}
_LIMIT_KINDS_PB = {kind: value for value, kind in _LIMIT_KINDS.items()}
_BREAK_KINDS: dict[cashier_pb2.BreakKind.ValueType, BreakKind] = {
    cashier_pb2.BREAK_KIND_COOLING_OFF: BreakKind.COOLING_OFF,
    cashier_pb2.BREAK_KIND_SELF_EXCLUSION: BreakKind.SELF_EXCLUSION,
}
_BREAK_KINDS_PB = {kind: value for value, kind in _BREAK_KINDS.items()}
_STATUSES_PB = {
    TransferStatus.CREATED: cashier_pb2.TRANSFER_STATUS_CREATED,
    TransferStatus.EXISTS: cashier_pb2.TRANSFER_STATUS_EXISTS,
    TransferStatus.EXISTS_WITH_DIFFERENT_FIELD: cashier_pb2.TRANSFER_STATUS_EXISTS_WITH_DIFFERENT_FIELD,
    TransferStatus.FAILED: cashier_pb2.TRANSFER_STATUS_FAILED,
}


def _withdrawal_pb(row: WithdrawalRow) -> cashier_pb2.Withdrawal:
    # `withdrawal:<SOURCE>:<reference>` and `wallet:<POOL>:<player>` (services/cashier/ledger.py).
    source = PaymentSource(row.transfer_id.split(":", 2)[1])
    return cashier_pb2.Withdrawal(
        transfer_id=row.transfer_id,
        player_id=row.wallet_account_id.split(":", 2)[2],
        pool=_POOLS_PB[row.pool],
        source=_SOURCES_PB[source],
        amount=row.amount,
        payment_reference=row.reference,
        create_time=to_timestamp(row.created_at),
    )


def _funding_pb(row: HouseFundingRow) -> cashier_pb2.HouseFunding:
    funding = cashier_pb2.HouseFunding(
        request_id=row.request_id,
        pool=_POOLS_PB[row.pool],
        account=_HOUSE_ACCOUNTS_PB[row.account],
        amount=row.amount,
        reason=row.reason,
        requested_by=row.requested_by,
        request_time=to_timestamp(row.requested_at),
        state=_FUNDING_STATES_PB[row.state],
        decided_by=row.decided_by,
        decision_reason=row.decision_reason,
        decision_id=row.decision_id,
    )
    decided = to_timestamp(row.decided_at)
    if decided is not None:
        funding.decision_time.CopyFrom(decided)
    return funding


def _pool(value: common_pb2.ChipPool.ValueType) -> Pool | None:
    """The pool, None when unspecified; an unknown number is POOL_INVALID."""
    if value and value not in _POOLS:
        raise InvalidArgument("POOL_INVALID", "unknown pool", {"field": "pool"})
    return _POOLS.get(value)


def _known(value: int, known: Mapping[Any, T], field: str, index: int | None = None) -> T | None:
    """An enum member, None when unspecified (the application says FIELD_REQUIRED); an unknown
    number (sent by a newer or careless client) is FIELD_INVALID."""
    if value and value not in known:
        metadata = {"field": field} if index is None else {"field": field, "index": str(index)}
        raise InvalidArgument("FIELD_INVALID", f"unknown {field} {value}", metadata)
    return known.get(value)


def _player_scope(requested: str) -> str:
    """The player a request is about: a bare player may only name themselves (or nobody)."""
    caller = current_caller()
    if caller.service is not None or caller.is_staff:
        # A service the access policy let through (payments, table, history) acts for a named player.
        if not requested:
            raise InvalidArgument("FIELD_REQUIRED", "player_id is required", {"field": "player_id"})
        return requested
    if requested and requested != caller.subject:
        raise PermissionDenied("NOT_YOUR_RESOURCE", "players may only see and move their own chips")
    return caller.subject


def _own_player() -> str:
    """The calling player: a self-set limit is set by the player themself, never for someone else."""
    return current_caller().subject


def _self_limits_pb(view: SelfLimitsView) -> cashier_pb2.GetSelfLimitsResponse:
    response = cashier_pb2.GetSelfLimitsResponse(
        player_id=view.player_id,
        limits=[
            cashier_pb2.SelfLimit(
                pool=_POOLS_PB[limit.pool],
                kind=_LIMIT_KINDS_PB[limit.state.kind],
                amount=limit.state.amount,
                used=limit.used,
                remaining=limit.remaining,
                pending_amount=limit.state.pending_amount or 0,
                pending_time=to_timestamp(limit.state.pending_at),
            )
            for limit in view.limits
        ],
        session_reminder_minutes=view.reminder_minutes,
        read_time=to_timestamp(view.read_at),
    )
    if view.brk is not None:
        response.active_break.CopyFrom(
            cashier_pb2.SelfBreak(
                kind=_BREAK_KINDS_PB[view.brk.kind],
                start_time=to_timestamp(view.brk.started_at),
                end_time=to_timestamp(view.brk.until),
            )
        )
    return response


def transfer_pb(record: TransferRecord) -> cashier_pb2.Transfer:
    request = record.request
    return cashier_pb2.Transfer(
        transfer_id=request.transfer_id,
        debit_account_id=request.debit_account_id,
        credit_account_id=request.credit_account_id,
        pool=_POOLS_PB[request.pool] if request.pool else common_pb2.CHIP_POOL_UNSPECIFIED,
        amount=request.amount,
        kind=_TRANSFER_KINDS_PB[request.kind] if request.kind else cashier_pb2.TRANSFER_KIND_UNSPECIFIED,
        reference=request.reference,
        table_id=request.table_id,
        create_time=to_timestamp(record.created_at),
    )


def _transfer_request(message: cashier_pb2.Transfer, index: int) -> TransferRequest:
    return TransferRequest(
        transfer_id=message.transfer_id,
        debit_account_id=message.debit_account_id,
        credit_account_id=message.credit_account_id,
        # An unknown pool stays None here: the batch's own validation says POOL_INVALID with its index.
        pool=_POOLS.get(message.pool),
        amount=message.amount,
        kind=_known(message.kind, _TRANSFER_KINDS, "kind", index),
        reference=message.reference,
        table_id=message.table_id,
    )


def _result_pb(outcome: TransferOutcome) -> cashier_pb2.TransferResult:
    result = cashier_pb2.TransferResult(
        transfer_id=outcome.transfer_id,
        status=_STATUSES_PB[outcome.status],
        field=outcome.field,
        reason=outcome.reason,
    )
    if outcome.record is not None and outcome.status in (TransferStatus.CREATED, TransferStatus.EXISTS):
        result.transfer.CopyFrom(transfer_pb(outcome.record))
    return result


def seat_session_pb(view: SeatSessionView) -> cashier_pb2.SeatSession:
    session = view.session
    return cashier_pb2.SeatSession(
        session_id=session.session_id,
        player_id=session.player_id,
        table_id=session.table_id,
        seat_index=session.seat_index,
        pool=_POOLS_PB[session.pool],
        account_id=session.account_id,
        state=cashier_pb2.SEAT_SESSION_STATE_OPEN if session.open else cashier_pb2.SEAT_SESSION_STATE_CLOSED,
        buy_in_amount=session.buy_in_amount,
        stack=view.stack,
        cash_out_amount=session.cash_out_amount,
        open_time=to_timestamp(session.opened_at),
        close_time=to_timestamp(session.closed_at),
    )


class CashierServicer(cashier_pb2_grpc.CashierServiceServicer):
    """One thin handler per RPC over the application."""

    def __init__(self, cashier: Cashier) -> None:
        self._cashier = cashier

    async def GetBalances(  # noqa: N802 - the generated servicer names methods after the RPCs
        self, request: cashier_pb2.GetBalancesRequest, context: Any
    ) -> cashier_pb2.GetBalancesResponse:
        player_id = _player_scope(request.player_id)
        wallets, session = await self._cashier.balances(player_id)
        response = cashier_pb2.GetBalancesResponse(
            player_id=player_id,
            wallets=[
                cashier_pb2.WalletBalance(
                    pool=_POOLS_PB[w.pool],
                    balance=w.balance,
                    locked_amount=w.locked_amount,
                    next_unlock_time=to_timestamp(w.next_unlock_time),
                )
                for w in wallets
            ],
        )
        if session is not None:
            response.open_seat_session.CopyFrom(seat_session_pb(session))
        return response

    async def Purchase(  # noqa: N802
        self, request: cashier_pb2.PurchaseRequest, context: Any
    ) -> cashier_pb2.PurchaseResponse:
        result = await self._cashier.purchase(
            payment_reference=request.payment_reference,
            player_id=request.player_id,
            source=_known(request.source, _SOURCES, "source"),
            amount_minor=request.amount_minor,
        )
        return cashier_pb2.PurchaseResponse(
            transfer=transfer_pb(result.record),
            existing=result.existing,
            unlock_time=to_timestamp(result.unlock_time),
        )

    async def Withdraw(  # noqa: N802
        self, request: cashier_pb2.WithdrawRequest, context: Any
    ) -> cashier_pb2.WithdrawResponse:
        player_id = _player_scope(request.player_id)
        result = await self._cashier.withdraw(
            payment_reference=request.payment_reference,
            player_id=player_id,
            source=_known(request.source, _SOURCES, "source"),
            amount_minor=request.amount_minor,
        )
        return cashier_pb2.WithdrawResponse(transfer=transfer_pb(result.record), existing=result.existing)

    async def CreateTransfers(  # noqa: N802
        self, request: cashier_pb2.CreateTransfersRequest, context: Any
    ) -> cashier_pb2.CreateTransfersResponse:
        outcomes = await self._cashier.create_transfers(
            [_transfer_request(t, i) for i, t in enumerate(request.transfers)],
            linked=request.linked,
            round_in_play=request.round_in_play,
        )
        return cashier_pb2.CreateTransfersResponse(results=[_result_pb(o) for o in outcomes])

    async def LookupTransfers(  # noqa: N802
        self, request: cashier_pb2.LookupTransfersRequest, context: Any
    ) -> cashier_pb2.LookupTransfersResponse:
        records = await self._cashier.lookup_transfers(list(request.transfer_ids))
        results = []
        for record in records:
            result = cashier_pb2.TransferResult(
                transfer_id=record.request.transfer_id, transfer=transfer_pb(record)
            )
            if record.applied:
                result.status = cashier_pb2.TRANSFER_STATUS_EXISTS
            else:
                result.status = cashier_pb2.TRANSFER_STATUS_FAILED
                result.reason = record.failure_reason or ""
            results.append(result)
        return cashier_pb2.LookupTransfersResponse(results=results)

    async def OpenSeatSession(  # noqa: N802
        self, request: cashier_pb2.OpenSeatSessionRequest, context: Any
    ) -> cashier_pb2.OpenSeatSessionResponse:
        view, existing = await self._cashier.open_seat_session(
            session_id=request.session_id,
            player_id=request.player_id,
            table_id=request.table_id,
            seat_index=request.seat_index,
            pool=_pool(request.pool),
            buy_in_amount=request.buy_in_amount,
            min_buy_in=request.min_buy_in,
            max_buy_in=request.max_buy_in,
        )
        return cashier_pb2.OpenSeatSessionResponse(seat_session=seat_session_pb(view), existing=existing)

    async def SettleHand(  # noqa: N802
        self, request: cashier_pb2.SettleHandRequest, context: Any
    ) -> cashier_pb2.SettleHandResponse:
        hand = normalise_hand_result(
            request.hand_id,
            request.table_id,
            _pool(request.pool),
            [SeatResult(r.session_id, r.net_amount) for r in request.seat_results],
            request.rake,
            request.house_bank_amount,
        )
        view, existing = await self._cashier.settle_hand(hand)
        settlement = cashier_pb2.Settlement(
            hand_id=hand.hand_id,
            table_id=hand.table_id,
            pool=_POOLS_PB[hand.pool],
            transfers=[transfer_pb(r) for r in view.transfers],
            stacks_after=[
                cashier_pb2.SeatResult(session_id=s, net_amount=stack) for s, stack in view.stacks_after
            ],
            settle_time=to_timestamp(view.settled_at),
        )
        return cashier_pb2.SettleHandResponse(settlement=settlement, existing=existing)

    async def CashOutSeatSession(  # noqa: N802
        self, request: cashier_pb2.CashOutSeatSessionRequest, context: Any
    ) -> cashier_pb2.CashOutSeatSessionResponse:
        view, existing = await self._cashier.cash_out(request.session_id)
        return cashier_pb2.CashOutSeatSessionResponse(seat_session=seat_session_pb(view), existing=existing)

    async def GetSeatSession(  # noqa: N802
        self, request: cashier_pb2.GetSeatSessionRequest, context: Any
    ) -> cashier_pb2.GetSeatSessionResponse:
        view = await self._cashier.seat_session(request.session_id)
        return cashier_pb2.GetSeatSessionResponse(seat_session=seat_session_pb(view))

    async def ListOpenSeatSessions(  # noqa: N802
        self, request: cashier_pb2.ListOpenSeatSessionsRequest, context: Any
    ) -> cashier_pb2.ListOpenSeatSessionsResponse:
        views = await self._cashier.open_seat_sessions(request.table_id)
        return cashier_pb2.ListOpenSeatSessionsResponse(seat_sessions=[seat_session_pb(v) for v in views])

    async def GetStatement(  # noqa: N802
        self, request: cashier_pb2.GetStatementRequest, context: Any
    ) -> cashier_pb2.GetStatementResponse:
        player_id = _player_scope(request.player_id)
        lines, token = await self._cashier.statement(
            player_id,
            pool=_pool(request.pool),
            page_size=request.page.page_size,
            page_token=request.page.page_token,
        )
        entries = []
        for line in lines:
            transfer = line.record.request
            entries.append(
                cashier_pb2.StatementEntry(
                    transfer_id=transfer.transfer_id,
                    account_id=line.account.account_id,
                    account_kind=_ACCOUNT_KINDS_PB[line.account.kind],
                    pool=_POOLS_PB[line.account.pool],
                    amount=line.amount,
                    balance_after=line.balance_after,
                    kind=_TRANSFER_KINDS_PB[transfer.kind]
                    if transfer.kind
                    else cashier_pb2.TRANSFER_KIND_UNSPECIFIED,
                    reference=transfer.reference,
                    table_id=transfer.table_id,
                    create_time=to_timestamp(line.record.created_at),
                )
            )
        return cashier_pb2.GetStatementResponse(
            entries=entries, page=common_pb2.PageResponse(next_page_token=token)
        )

    async def AuditConservation(  # noqa: N802
        self, request: cashier_pb2.AuditConservationRequest, context: Any
    ) -> cashier_pb2.AuditConservationResponse:
        figures, at = await self._cashier.audit()
        pools = [
            cashier_pb2.PoolAudit(
                pool=_POOLS_PB[f.pool],
                minted=f.minted,
                burned=f.burned,
                accounts_total=f.accounts_total,
                # Lifetime turnover has no bound: exact decimal text, never an overflowing int64.
                journal_total=str(f.journal_total),
                debits_posted=str(f.debits_posted),
                credits_posted=str(f.credits_posted),
                negative_accounts=f.negative_accounts,
                account_count=f.account_count,
                balanced=audit_balanced(f),
            )
            for f in figures
        ]
        return cashier_pb2.AuditConservationResponse(
            pools=pools, balanced=all(p.balanced for p in pools), audit_time=to_timestamp(at)
        )

    async def RequestHouseFunding(  # noqa: N802
        self, request: cashier_pb2.RequestHouseFundingRequest, context: Any
    ) -> cashier_pb2.RequestHouseFundingResponse:
        # The asker is the verified caller, never a field of the request.
        row, existing = await self._cashier.request_funding(
            asker=current_caller().subject,
            request_id=request.request_id,
            pool=_pool(request.pool),
            account=_known(request.account, _HOUSE_ACCOUNTS, "account"),
            amount=request.amount,
            reason=request.reason,
        )
        return cashier_pb2.RequestHouseFundingResponse(funding=_funding_pb(row), existing=existing)

    async def DecideHouseFunding(  # noqa: N802
        self, request: cashier_pb2.DecideHouseFundingRequest, context: Any
    ) -> cashier_pb2.DecideHouseFundingResponse:
        row, record, existing, after = await self._cashier.decide_funding(
            decider=current_caller().subject,
            decision_id=request.decision_id,
            request_id=request.request_id,
            approve=request.approve,
            reason=request.reason,
        )
        response = cashier_pb2.DecideHouseFundingResponse(
            funding=_funding_pb(row), existing=existing, balance_after=after
        )
        if record is not None:
            response.transfer.CopyFrom(transfer_pb(record))
        return response

    async def ListHouseFunding(  # noqa: N802
        self, request: cashier_pb2.ListHouseFundingRequest, context: Any
    ) -> cashier_pb2.ListHouseFundingResponse:
        state = _known(request.state, _FUNDING_STATES, "state")
        rows, token = await self._cashier.list_funding(
            state, page_size=request.page.page_size, page_token=request.page.page_token
        )
        return cashier_pb2.ListHouseFundingResponse(
            fundings=[_funding_pb(row) for row in rows], page=common_pb2.PageResponse(next_page_token=token)
        )

    async def GetHouseBalances(  # noqa: N802
        self, request: cashier_pb2.GetHouseBalancesRequest, context: Any
    ) -> cashier_pb2.GetHouseBalancesResponse:
        bank, jackpot, reserved = await self._cashier.house_balances(_pool(request.pool))
        return cashier_pb2.GetHouseBalancesResponse(
            pool=request.pool, bank_balance=bank, jackpot_balance=jackpot, reserved_balance=reserved
        )

    async def GetPlayFigures(  # noqa: N802
        self, request: cashier_pb2.GetPlayFiguresRequest, context: Any
    ) -> cashier_pb2.GetPlayFiguresResponse:
        if not request.HasField("since"):
            raise InvalidArgument("FIELD_REQUIRED", "since is required", {"field": "since"})
        try:
            since = request.since.ToDatetime(tzinfo=UTC)
        except (ValueError, OverflowError) as error:
            raise InvalidArgument("FIELD_INVALID", "since is not a time", {"field": "since"}) from error
        figures, read_at = await self._cashier.play_figures(since)
        return cashier_pb2.GetPlayFiguresResponse(
            pools=[
                cashier_pb2.PoolPlayFigures(
                    pool=_POOLS_PB[pool],
                    hands_settled=f.hands_settled,
                    rake=f.rake,
                    purchases=f.purchases,
                    chips_purchased=f.chips_purchased,
                    withdrawals=f.withdrawals,
                    chips_withdrawn=f.chips_withdrawn,
                )
                for pool, f in figures.items()
            ],
            since=request.since,
            read_time=to_timestamp(read_at),
        )

    async def ListWithdrawals(  # noqa: N802
        self, request: cashier_pb2.ListWithdrawalsRequest, context: Any
    ) -> cashier_pb2.ListWithdrawalsResponse:
        pool = _POOLS.get(request.pool) if request.pool else None
        if request.pool and pool is None:
            raise InvalidArgument("POOL_INVALID", "pool is GRAM or MPX", {"field": "pool"})
        since = None
        if request.HasField("since"):
            try:
                since = request.since.ToDatetime(tzinfo=UTC)
            except (ValueError, OverflowError) as error:
                raise InvalidArgument("FIELD_INVALID", "since is not a time", {"field": "since"}) from error
        rows, token = await self._cashier.list_withdrawals(
            pool, since, page_size=request.page.page_size, page_token=request.page.page_token
        )
        return cashier_pb2.ListWithdrawalsResponse(
            withdrawals=[_withdrawal_pb(row) for row in rows],
            page=common_pb2.PageResponse(next_page_token=token),
        )

    async def SetPlayerHold(  # noqa: N802
        self, request: cashier_pb2.SetPlayerHoldRequest, context: Any
    ) -> cashier_pb2.SetPlayerHoldResponse:
        change, existing = await self._cashier.set_player_hold(
            request_id=request.request_id,
            player_id=request.player_id,
            held=request.held,
            reason=request.reason,
            scope=_known(request.scope, _HOLD_SCOPES, "scope") or HoldScope.FULL,
        )
        return cashier_pb2.SetPlayerHoldResponse(
            player_id=change.player_id,
            held=change.held,
            reason=change.reason,
            change_time=to_timestamp(change.changed_at),
            existing=existing,
            scope=_HOLD_SCOPES_PB[HoldScope(change.scope)],
        )

    async def SetSelfLimit(  # noqa: N802
        self, request: cashier_pb2.SetSelfLimitRequest, context: Any
    ) -> cashier_pb2.SetSelfLimitResponse:
        change, existing = await self._cashier.set_self_limit(
            player_id=_own_player(),
            request_id=request.request_id,
            pool=_pool(request.pool),
            kind=_known(request.kind, _LIMIT_KINDS, "kind"),
            amount=request.amount,
        )
        return cashier_pb2.SetSelfLimitResponse(
            pool=_POOLS_PB[Pool(change.pool)],
            kind=_LIMIT_KINDS_PB[LimitKind(change.kind)],
            amount=change.requested,
            previous_amount=int(change.old_value),
            effective_time=to_timestamp(change.effective_at),
            change_time=to_timestamp(change.changed_at),
            existing=existing,
        )

    async def SetSessionReminder(  # noqa: N802
        self, request: cashier_pb2.SetSessionReminderRequest, context: Any
    ) -> cashier_pb2.SetSessionReminderResponse:
        change, existing = await self._cashier.set_session_reminder(
            player_id=_own_player(), request_id=request.request_id, minutes=request.minutes
        )
        return cashier_pb2.SetSessionReminderResponse(
            minutes=change.requested,
            previous_minutes=int(change.old_value),
            change_time=to_timestamp(change.changed_at),
            existing=existing,
        )

    async def StartBreak(  # noqa: N802
        self, request: cashier_pb2.StartBreakRequest, context: Any
    ) -> cashier_pb2.StartBreakResponse:
        change, existing = await self._cashier.start_break(
            player_id=_own_player(),
            request_id=request.request_id,
            kind=_known(request.kind, _BREAK_KINDS, "kind"),
            days=request.days,
        )
        return _break_pb(change, existing)

    async def GetSelfLimits(  # noqa: N802
        self, request: cashier_pb2.GetSelfLimitsRequest, context: Any
    ) -> cashier_pb2.GetSelfLimitsResponse:
        return _self_limits_pb(await self._cashier.self_limits(_player_scope(request.player_id)))


def _break_pb(change: SelfLimitChange, existing: bool) -> cashier_pb2.StartBreakResponse:
    assert change.ends_at is not None
    return cashier_pb2.StartBreakResponse(
        kind=_BREAK_KINDS_PB[BreakKind(change.kind)],
        start_time=to_timestamp(change.changed_at),
        end_time=to_timestamp(change.ends_at),
        existing=existing,
    )
