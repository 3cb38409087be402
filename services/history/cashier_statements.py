"""The cashier's statement, read over gRPC for ListBalanceChanges (the history service keeps no copy).

Calls `poker.cashier.v1.CashierService/GetStatement` with the history service's own service token
(subject `history`) and the player's id. What the cashier answered is what our caller hears
(`cashier_error`, docs/history.md "Balance changes"), with metadata `dependency: cashier`:

- the cashier's own answers (NOT_FOUND, FAILED_PRECONDITION, INVALID_ARGUMENT, ...) keep their code
  and reason, so a refusal is never passed off as an unreachable cashier;
- a PERMISSION_DENIED or UNAUTHENTICATED is the cashier refusing the history service's own token, a
  configuration fault: logged as an error, and UNAVAILABLE `UNAVAILABLE` with `cashier_status` for
  the caller (as the table does with its own refused credentials), never the caller's credential;
- an overloaded cashier is RESOURCE_EXHAUSTED `SERVER_OVERLOADED` (retry with backoff), whether it
  shed the call itself (RESOURCE_EXHAUSTED, after the channel's retries) or did not answer within
  history's deadline (DEADLINE_EXCEEDED: a cashier that is up but behind; one that is down fails
  fast, and a frozen one is cut by the channel's keepalive, both UNAVAILABLE);
- a cashier that cannot be reached (UNAVAILABLE, CANCELLED) is UNAVAILABLE `UNAVAILABLE`, and so is a
  status without a catalogue reason (INTERNAL, UNKNOWN: a cashier failing), which metadata
  `cashier_status` names. Never INTERNAL.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import grpc

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.clients import error_metadata_of, reason_of
from service_runtime.errors import (
    Aborted,
    AlreadyExists,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
    Unimplemented,
)
from service_runtime.structured_logging import get_logger

log = get_logger("history.cashier")

DEPENDENCY = {"dependency": "cashier"}
# The cashier's answers that keep their code (with the cashier's catalogue reason).
_KEPT: dict[grpc.StatusCode, type[DomainError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.ABORTED: Aborted,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.UNIMPLEMENTED: Unimplemented,
}
# Overload: the cashier shed the call, or did not answer within history's deadline.
_OVERLOADED = (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.DEADLINE_EXCEEDED)
_UNREACHABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)

_REASONS = {
    cashier_pb2.TRANSFER_KIND_PURCHASE: "PURCHASE",
    cashier_pb2.TRANSFER_KIND_WITHDRAWAL: "WITHDRAWAL",
    cashier_pb2.TRANSFER_KIND_BUY_IN: "BUY_IN",
    cashier_pb2.TRANSFER_KIND_CASH_OUT: "CASH_OUT",
    cashier_pb2.TRANSFER_KIND_HAND_RESULT: "HAND_RESULT",
    cashier_pb2.TRANSFER_KIND_RAKE: "RAKE",
    cashier_pb2.TRANSFER_KIND_HOUSE_GAME_RESULT: "HOUSE_GAME_RESULT",
    cashier_pb2.TRANSFER_KIND_ADJUSTMENT: "ADJUSTMENT",
}


@dataclass(frozen=True)
class StatementLine:
    transfer_id: str
    time: datetime
    pool: common_pb2.ChipPool.ValueType
    change: int
    balance_after: int
    reason: str
    reference: str
    account_id: str
    table_id: str


class CashierStatements:
    """Pages of a player's cashier statement over a channel the caller owns."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._stub = cashier_pb2_grpc.CashierServiceStub(channel)

    async def page(
        self, player_id: str, pool: common_pb2.ChipPool.ValueType, page_size: int, page_token: str
    ) -> tuple[list[StatementLine], str]:
        request = cashier_pb2.GetStatementRequest(
            player_id=player_id,
            pool=pool,
            page=common_pb2.PageRequest(page_size=page_size, page_token=page_token),
        )
        try:
            response = await self._stub.GetStatement(request)
        except grpc.aio.AioRpcError as error:
            raise cashier_error(error) from error
        lines = [
            StatementLine(
                transfer_id=entry.transfer_id,
                time=entry.create_time.ToDatetime(tzinfo=UTC),
                pool=entry.pool,
                change=entry.amount,
                balance_after=entry.balance_after,
                reason=_REASONS.get(entry.kind, "UNKNOWN"),
                reference=entry.reference,
                account_id=entry.account_id,
                table_id=entry.table_id,
            )
            for entry in response.entries
        ]
        return lines, response.page.next_page_token


def cashier_error(error: grpc.aio.AioRpcError) -> DomainError:
    """What a failed GetStatement is for history's caller (see the module docstring)."""
    code, reason = error.code(), reason_of(error)
    if code in _OVERLOADED:
        return ResourceExhausted(
            "SERVER_OVERLOADED",
            "the cashier is overloaded and did not answer in time; retry with backoff",
            {**DEPENDENCY, "cashier_status": code.name},
        )
    if code in _UNREACHABLE:
        return Unavailable("UNAVAILABLE", "the cashier cannot be reached; retry later", dict(DEPENDENCY))
    if code == grpc.StatusCode.INVALID_ARGUMENT and reason in ("", "PAGE_TOKEN_INVALID"):
        # Our tokens are signed, so this is a cashier page token it no longer takes: page again.
        return InvalidArgument(
            "PAGE_TOKEN_INVALID", "the page token has expired", {**DEPENDENCY, "problem": "stale"}
        )
    kind = _KEPT.get(code)
    if kind is None or not reason or reason.upper() != reason:
        # A cashier failing (INTERNAL, UNKNOWN, DATA_LOSS) or a status without a catalogue reason.
        log.warning("the cashier failed a statement", status=code.name, reason=reason)
        return Unavailable(
            "UNAVAILABLE",
            f"the cashier failed ({code.name}); retry later",
            {**DEPENDENCY, "cashier_status": code.name},
        )
    if code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED):
        # The cashier refused the history service's own token: the platform's configuration, never
        # the caller's credential (passed on as TOKEN_EXPIRED, a page would sign its player out).
        log.error("the cashier refused the history service's statement call", status=code.name, reason=reason)
        return Unavailable(
            "UNAVAILABLE",
            "the cashier refused the history service's own call; retry later",
            {**DEPENDENCY, "cashier_status": code.name},
        )
    said = error.details() or reason
    metadata = {**error_metadata_of(error), **DEPENDENCY}
    return kind(reason, f"the cashier answered: {said}", metadata)
