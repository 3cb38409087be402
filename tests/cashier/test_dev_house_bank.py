"""`make run`'s development house bank funding (libs/service_runtime/dev_house_bank.py) against a real
cashier: funded once per data folder, and a later start says the bank's balance as it is then, not
the balance the first funding left (the cashier's saved answer to the same request id)."""

from __future__ import annotations

from poker.cashier.v1 import cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import STAFF_ROLES
from service_runtime.dev_house_bank import DEVELOPMENT_BANK_CHIPS, fund_development_house_bank
from service_runtime.testing import auth_metadata, fund_house, running_server
from services.cashier.application import Cashier
from services.cashier.assembly import ACCESS, cashier_service

ADMIN = auth_metadata("operator", *STAFF_ROLES)


async def test_a_later_start_says_the_banks_balance_as_it_is_now(sqlite_cashier: Cashier) -> None:
    async with running_server([cashier_service(sqlite_cashier)], ACCESS) as (server, channel):
        address = f"127.0.0.1:{server.port}"
        first = await fund_development_house_bank(address, {})
        assert any(
            "GRAM house bank funded" in line and f"balance {DEVELOPMENT_BANK_CHIPS:,}" in line
            for line in first
        )
        # The bank moves after the funding (an operator adds 7 chips; house rounds would move it too).
        await fund_house(
            cashier_pb2_grpc.CashierServiceStub(channel),
            request_id="operator-top-up",
            pool=common_pb2.CHIP_POOL_GRAM,
            amount=7,
            reason="top-up",
        )
        again = await fund_development_house_bank(address, {})
    gram = next(line for line in again if "GRAM house bank" in line)
    assert "already funded" in gram
    assert f"balance now {DEVELOPMENT_BANK_CHIPS + 7:,}" in gram, again
    mpx = next(line for line in again if "MPX house bank" in line)
    assert f"balance now {DEVELOPMENT_BANK_CHIPS:,}" in mpx, again
