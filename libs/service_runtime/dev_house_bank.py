"""`make run` funds the development house bank, as an operator would (issue 25 item 14).

House games pay from the pool's house bank, which starts empty, so every bet of a fresh `make run`
was refused `HOUSE_BANK_CANNOT_COVER`. Once every service is SERVING the launcher makes the
operator's audited funding, asked by one member of finance and approved by another (four-eyes:
`RequestHouseFunding` then `DecideHouseFunding`, two development staff tokens), one request per
pool, each recorded as the transfer `funding:make-run-house-bank-<POOL>` of kind HOUSE_FUNDING (minted from the
pool's house-funding mint, so conservation holds and the cashier's audit shows it). The request id is
fixed, so running again on the same data folder funds nothing twice (the cashier answers the first
approval). Never in production: there the operator funds the bank (docs/play.md, docs/cashier.md).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import grpc

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import Role, TokenKeys, mint_token
from service_runtime.clients import create_channel
from service_runtime.house_funding_client import fund_by_two
from service_runtime.mint_token import MintSettings
from service_runtime.settings import load_settings

# 100,000 GRAM and 10,000,000 MPX worth of chips: more than any development session pays out.
DEVELOPMENT_BANK_CHIPS = 100_000_000
POOLS = {"GRAM": common_pb2.CHIP_POOL_GRAM, "MPX": common_pb2.CHIP_POOL_MPX}


def request_id(pool: str) -> str:
    return f"make-run-house-bank-{pool}"


async def fund_development_house_bank(cashier_address: str, environ: Mapping[str, str]) -> list[str]:
    """Fund each pool's house bank once (idempotent by request id); the lines to print."""
    if environ.get("POKER_ENVIRONMENT", "development") == "production":
        return ["cluster: production: the house bank is finance's to fund, by two people (docs/cashier.md)"]
    keys = TokenKeys.from_settings(load_settings(MintSettings).auth_keys)
    now = int(time.time())
    asker = mint_token(keys, "make-run-finance-1", [Role.FINANCE], now=now, ttl_seconds=300)
    approver = mint_token(keys, "make-run-finance-2", [Role.FINANCE], now=now, ttl_seconds=300)
    lines = []
    async with (
        create_channel(cashier_address, token=lambda: asker) as asking,
        create_channel(cashier_address, token=lambda: approver) as approving,
    ):
        cashier = cashier_pb2_grpc.CashierServiceStub(asking)
        for name, pool in POOLS.items():
            try:
                reply = await fund_by_two(
                    cashier,
                    cashier_pb2_grpc.CashierServiceStub(approving),
                    request_id=request_id(name),
                    pool=pool,
                    amount=DEVELOPMENT_BANK_CHIPS,
                    reason="make run: development house bank",
                )
            except grpc.aio.AioRpcError as error:
                lines.append(
                    f"cluster: the {name} house bank was not funded: {error.code().name} {error.details()}"
                )
                continue
            if reply.existing:
                # The cashier answers a repeated funding with its first answer, whose balance is the
                # one that funding left: say the bank's balance as it is now.
                now = await cashier.GetHouseBalances(cashier_pb2.GetHouseBalancesRequest(pool=pool))
                balance = f"balance now {now.bank_balance:,}"
            else:
                balance = f"balance {reply.balance_after:,}"
            how = "already funded" if reply.existing else "funded"
            lines.append(
                f"cluster: {name} house bank {how} by the approved funding {reply.transfer.transfer_id} "
                f"({DEVELOPMENT_BANK_CHIPS:,} chips; {balance})"
            )
    return lines
