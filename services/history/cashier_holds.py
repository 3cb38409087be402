"""Holds (rules 17), kept by the cashier and set over gRPC by HoldPlayer / ReleasePlayer (full holds)
and by the automatic holds of strong cases and ResolveCase (withdrawals holds).

Calls `poker.cashier.v1.CashierService/SetPlayerHold` with the history service's own token (the
only service the cashier lets set a hold). The cashier's refusals keep their reason (a player
already on hold, not on hold, a conflicting retry); a cashier that cannot be reached is UNAVAILABLE.
"""

from __future__ import annotations

from datetime import UTC

import grpc

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from service_runtime.clients import reason_of
from service_runtime.errors import AlreadyExists, FailedPrecondition, InvalidArgument, Unavailable
from services.history.holds import Hold

__all__ = ["CashierHolds", "Hold"]


class CashierHolds:
    """Holds over a channel the caller owns."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._stub = cashier_pb2_grpc.CashierServiceStub(channel)

    async def set_hold(
        self, request_id: str, player_id: str, held: bool, reason: str, *, withdrawals_only: bool = False
    ) -> Hold:
        """A full hold (seats and withdrawals), or with `withdrawals_only` a withdrawals hold."""
        request = cashier_pb2.SetPlayerHoldRequest(
            request_id=request_id,
            player_id=player_id,
            held=held,
            reason=reason,
            scope=cashier_pb2.HOLD_SCOPE_WITHDRAWALS
            if withdrawals_only
            else cashier_pb2.HOLD_SCOPE_UNSPECIFIED,
        )
        try:
            response = await self._stub.SetPlayerHold(request)
        except grpc.aio.AioRpcError as error:
            code, why = error.code(), reason_of(error)
            if code == grpc.StatusCode.FAILED_PRECONDITION and why:
                raise FailedPrecondition(why, error.details() or why, {"player_id": player_id}) from error
            if code == grpc.StatusCode.ALREADY_EXISTS and why:
                raise AlreadyExists(why, "the request id was used with different fields", {}) from error
            if code == grpc.StatusCode.INVALID_ARGUMENT and why:
                raise InvalidArgument(why, error.details() or why, {"field": "player_id"}) from error
            raise Unavailable("UNAVAILABLE", "the cashier cannot be reached; retry later") from error
        return Hold(
            response.player_id,
            response.held,
            response.reason,
            response.change_time.ToDatetime(tzinfo=UTC),
            response.existing,
        )
