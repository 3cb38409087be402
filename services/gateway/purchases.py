"""Buying chips through the gateway: the operator's payments flow behind one interface.

The gateway never mints chips. Chips are credited only by `CashierService.Purchase`, which only the
payments identity (`service:payments`) may call, once a payment is made. A `PurchaseFlow` is how the
gateway hands a player's wish to buy to whoever takes the payment:

- `DevelopmentPurchases` (outside production only): plays the payments service for test players and
  records the purchase at once with a payments token minted from the development key, as
  `poker-play` does in development.
- `NoPurchases` (production default): every option says why it is not available.
- An operator's flow, `POKER_GATEWAY_PURCHASE_FLOW=package.module:factory`: `factory(settings)`
  returns a `PurchaseFlow` that asks the operator's payments service for a payment link (for
  Telegram Stars, an invoice link from the Bot API's `createInvoiceLink`, which the page opens in a
  new window: it loads no Telegram script, so not with `Telegram.WebApp.openInvoice`); the payments
  service records the purchase at the cashier with its own token when Telegram reports the payment
  (docs/gateway.md).

Telegram Stars are "not available yet" by the rules (the cashier refuses them by default), so no flow
offers them until the operator switches them on.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.gateway.v1 import gateway_pb2
from service_runtime.errors import FailedPrecondition, InvalidArgument

_REQUEST_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
STARS_NOT_AVAILABLE = "Telegram Stars are not available yet"
# A development purchase buys at most this many chips at once.
DEVELOPMENT_MAX_CHIPS = 1_000_000
# Minor units per chip of each pool's development source (protos/poker/cashier/v1, PaymentSource).
_DEVELOPMENT_SOURCE: dict[int, tuple[int, int]] = {
    common_pb2.CHIP_POOL_GRAM: (cashier_pb2.PAYMENT_SOURCE_GRAM, 10**6),
    common_pb2.CHIP_POOL_MPX: (cashier_pb2.PAYMENT_SOURCE_MPX, 10**8),
}


class PurchaseFlow(Protocol):
    def options(self, player_id: str) -> Sequence[gateway_pb2.PurchaseOption]:
        """The ways `player_id` can buy chips now, and those not available with why."""

    async def start(
        self, player_id: str, request: gateway_pb2.StartPurchaseRequest
    ) -> gateway_pb2.StartPurchaseResponse:
        """Start a checked purchase (`check_request` has passed): credit it, or return a payment link."""


def check_request(request: gateway_pb2.StartPurchaseRequest) -> None:
    if not request.request_id:
        raise InvalidArgument("FIELD_REQUIRED", "request_id is required", {"field": "request_id"})
    if not _REQUEST_ID.fullmatch(request.request_id):
        raise InvalidArgument(
            "FIELD_INVALID", "request_id is 1 to 64 letters, digits, `_` or `-`", {"field": "request_id"}
        )
    if request.pool not in (common_pb2.CHIP_POOL_GRAM, common_pb2.CHIP_POOL_MPX):
        raise InvalidArgument("POOL_INVALID", "pool is GRAM or MPX", {"field": "pool"})
    if request.method not in gateway_pb2.PurchaseMethod.values() or request.method == 0:
        raise InvalidArgument("FIELD_INVALID", "method is not a purchase method", {"field": "method"})
    if request.chips <= 0:
        raise InvalidArgument("AMOUNT_INVALID", "chips must be positive", {"field": "chips"})


def _stars_option(text: str = STARS_NOT_AVAILABLE) -> gateway_pb2.PurchaseOption:
    return gateway_pb2.PurchaseOption(
        method=gateway_pb2.PURCHASE_METHOD_TELEGRAM_STARS,
        pool=common_pb2.CHIP_POOL_GRAM,
        available=False,
        unavailable_text=text,
        text="Telegram Stars",
    )


class NoPurchases:
    def options(self, player_id: str) -> Sequence[gateway_pb2.PurchaseOption]:
        return [_stars_option()]

    async def start(
        self, player_id: str, request: gateway_pb2.StartPurchaseRequest
    ) -> gateway_pb2.StartPurchaseResponse:
        if request.method == gateway_pb2.PURCHASE_METHOD_TELEGRAM_STARS:
            raise FailedPrecondition("PAYMENT_SOURCE_DISABLED", STARS_NOT_AVAILABLE)
        raise FailedPrecondition("PURCHASES_NOT_CONFIGURED", "chips cannot be bought at this gateway")


class DevelopmentPurchases:
    """Records purchases as the payments service would: development only (the settings refuse it in
    production, and production refuses the development key its token is minted with)."""

    def __init__(
        self, cashier: Callable[[], cashier_pb2_grpc.CashierServiceStub], payments_token: Callable[[], str]
    ) -> None:
        self._cashier = cashier
        self._token = payments_token

    def options(self, player_id: str) -> Sequence[gateway_pb2.PurchaseOption]:
        return [
            gateway_pb2.PurchaseOption(
                method=gateway_pb2.PURCHASE_METHOD_DEVELOPMENT,
                pool=pool,
                available=True,
                min_chips=1,
                max_chips=DEVELOPMENT_MAX_CHIPS,
                text=f"Development chips ({name}), no payment",
            )
            for pool, name in ((common_pb2.CHIP_POOL_GRAM, "GRAM"), (common_pb2.CHIP_POOL_MPX, "MPX"))
        ] + [_stars_option()]

    async def start(
        self, player_id: str, request: gateway_pb2.StartPurchaseRequest
    ) -> gateway_pb2.StartPurchaseResponse:
        if request.method == gateway_pb2.PURCHASE_METHOD_TELEGRAM_STARS:
            raise FailedPrecondition("PAYMENT_SOURCE_DISABLED", STARS_NOT_AVAILABLE)
        if request.method != gateway_pb2.PURCHASE_METHOD_DEVELOPMENT:
            raise FailedPrecondition("PAYMENT_SOURCE_DISABLED", "only development chips are sold here")
        if request.chips > DEVELOPMENT_MAX_CHIPS:
            raise InvalidArgument(
                "AMOUNT_INVALID", f"at most {DEVELOPMENT_MAX_CHIPS} chips at once", {"field": "chips"}
            )
        source, minor = _DEVELOPMENT_SOURCE[request.pool]
        reply = await self._cashier().Purchase(
            cashier_pb2.PurchaseRequest(
                payment_reference=f"gw-dev:{player_id}:{request.request_id}",
                player_id=player_id,
                source=source,  # type: ignore[arg-type]
                amount_minor=request.chips * minor,
            ),
            metadata=(("authorization", f"Bearer {self._token()}"),),
        )
        return gateway_pb2.StartPurchaseResponse(
            credited=common_pb2.Chips(pool=request.pool, amount=reply.transfer.amount)
        )


def load_flow(path: str, settings: Any) -> PurchaseFlow:
    """The operator's flow from `package.module:factory`, called with the gateway's settings."""
    module_name, _, attribute = path.partition(":")
    factory = getattr(importlib.import_module(module_name), attribute)
    flow: PurchaseFlow = factory(settings)
    return flow
