"""The gateway's own Connect service: sign-in, token renewal, sign-out and the purchase flow."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import grpc
import structlog

from poker.gateway.v1 import gateway_pb2
from services.gateway import connect_errors
from services.gateway.front_door import FrontDoor
from services.gateway.purchases import PurchaseFlow, check_request
from services.gateway.revocations import SessionRevocations
from services.gateway.sessions import Sessions

log = structlog.get_logger("gateway.sessions")


class GatewayApi:
    def __init__(
        self,
        door: FrontDoor,
        sessions: Sessions,
        purchases: PurchaseFlow,
        revocations: SessionRevocations,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._door = door
        self._sessions = sessions
        self._revocations = revocations
        self._purchases = purchases
        self._clock = clock

    async def get_sign_in_options(
        self, request: gateway_pb2.GetSignInOptionsRequest, ctx: Any
    ) -> gateway_pb2.GetSignInOptionsResponse:
        return self._sessions.options()

    async def sign_in(self, request: gateway_pb2.SignInRequest, ctx: Any) -> gateway_pb2.SignInResponse:
        call = self._door.call_of(ctx)
        session = await self._sessions.sign_in(request, call.client, now=int(self._clock()))
        log.info("signed in", player=session.player_id, method=request.WhichOneof("method"))
        return gateway_pb2.SignInResponse(session=session)

    async def renew_token(
        self, request: gateway_pb2.RenewTokenRequest, ctx: Any
    ) -> gateway_pb2.RenewTokenResponse:
        call = self._door.call_of(ctx)
        session = self._sessions.renew(call.player, request, call.client, now=int(self._clock()))
        return gateway_pb2.RenewTokenResponse(session=session)

    async def sign_out(self, request: gateway_pb2.SignOutRequest, ctx: Any) -> gateway_pb2.SignOutResponse:
        caller = self._door.call_of(ctx).player
        await self._sessions.sign_out(caller, self._revocations, now=int(self._clock()))
        log.info("signed out", player=caller.subject)
        return gateway_pb2.SignOutResponse()

    async def list_purchase_options(
        self, request: gateway_pb2.ListPurchaseOptionsRequest, ctx: Any
    ) -> gateway_pb2.ListPurchaseOptionsResponse:
        player = self._door.call_of(ctx).player.subject
        return gateway_pb2.ListPurchaseOptionsResponse(options=self._purchases.options(player))

    async def start_purchase(
        self, request: gateway_pb2.StartPurchaseRequest, ctx: Any
    ) -> gateway_pb2.StartPurchaseResponse:
        player = self._door.call_of(ctx).player.subject
        check_request(request)
        try:
            reply = await self._purchases.start(player, request)
        except grpc.aio.AioRpcError as error:
            raise connect_errors.from_backend(error) from None
        log.info("purchase", player=player, outcome=reply.WhichOneof("outcome"))
        return reply
