"""The cashier's statement, read over gRPC for ListBalanceChanges (the history service keeps no copy).

Calls `poker.cashier.v1.CashierService/GetStatement` with the history service's own service token
(subject `history`) and the player's id; that is the only cashier RPC the history service needs.
A cashier that cannot be reached is UNAVAILABLE for our caller too, never INTERNAL.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import grpc

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.errors import InvalidArgument, Unavailable

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
            if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                # Only a page token the cashier no longer accepts can get here (ours are signed).
                raise InvalidArgument(
                    "PAGE_TOKEN_INVALID", "the page token has expired", {"problem": "stale"}
                ) from error
            raise Unavailable("UNAVAILABLE", "the cashier cannot be reached; retry later") from error
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
