"""Funding a house account the only way the cashier allows: asked by one member of finance, approved
by another (four-eyes, issue 38). For the development tools (`make run`'s house bank) and tests; an
operator's staff do the same through the back office, each as themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2

Metadata = Sequence[tuple[str, str]]
APPROVAL_REASON = "second pair of eyes: approved"


def decision_id(request_id: str) -> str:
    """The approval's id for a request (its own idempotency key: an approval retried applies once)."""
    return f"approve:{request_id}"[:128]


async def fund_by_two(
    asker: cashier_pb2_grpc.CashierServiceStub,
    approver: cashier_pb2_grpc.CashierServiceStub,
    *,
    request_id: str,
    pool: common_pb2.ChipPool.ValueType,
    amount: int,
    reason: str,
    account: cashier_pb2.HouseAccount.ValueType = cashier_pb2.HOUSE_ACCOUNT_BANK,
    asker_metadata: Metadata | None = None,
    approver_metadata: Metadata | None = None,
    rpc_deadline: float | None = None,
) -> cashier_pb2.DecideHouseFundingResponse:
    """Ask (through `asker`) and approve (through `approver`, another person); the approval's answer.
    Idempotent end to end: run again, it answers the first approval and moves nothing."""
    await asker.RequestHouseFunding(
        cashier_pb2.RequestHouseFundingRequest(
            request_id=request_id, pool=pool, account=account, amount=amount, reason=reason
        ),
        metadata=asker_metadata,
        timeout=rpc_deadline,
    )
    return await approver.DecideHouseFunding(  # type: ignore[no-any-return]
        cashier_pb2.DecideHouseFundingRequest(
            decision_id=decision_id(request_id), request_id=request_id, approve=True, reason=APPROVAL_REASON
        ),
        metadata=approver_metadata,
        timeout=rpc_deadline,
    )
