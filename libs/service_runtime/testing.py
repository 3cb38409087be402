"""Helpers for tests and benchmarks: real servers on port 0, tokens, throwaway databases.

Lives in the runtime (not in tests/) because the benchmarks under tests/bench and every service's
tests use the same helpers; nothing in production imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence

import grpc
import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.access import AccessPolicy
from service_runtime.auth import Role, ServiceName, TokenKeys, mint_token
from service_runtime.clients import reason_of as reason_of  # the tests read reasons with it
from service_runtime.house_funding_client import fund_by_two
from service_runtime.interceptors import DEFAULT_LIMITS, Limits
from service_runtime.server import GrpcService, RunningServer, create_server
from service_runtime.service_settings import DEV_KEY_ID, DEV_SIGNING_KEY
from service_runtime.tls import TlsFiles, channel_credentials

DEV_KEYS = TokenKeys(keys={DEV_KEY_ID: DEV_SIGNING_KEY.encode()}, signing_key_id=DEV_KEY_ID)


def token_for(
    subject: str, *roles: Role | str, ttl_seconds: int = 3 * 3600, keys: TokenKeys = DEV_KEYS
) -> str:
    # Test modules mint tokens when they load; they must outlive the slowest whole-suite run.
    return mint_token(keys, subject, roles or (Role.PLAYER,), now=int(time.time()), ttl_seconds=ttl_seconds)


def auth_metadata(subject: str, *roles: Role | str) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying a freshly minted development token."""
    return (("authorization", f"Bearer {token_for(subject, *roles)}"),)


# Two different members of finance: funding the house takes one who asks and another who approves.
FINANCE_ASKER = "finance-asker"
FINANCE_APPROVER = "finance-approver"


async def fund_house(
    stub: cashier_pb2_grpc.CashierServiceStub,
    *,
    request_id: str,
    pool: common_pb2.ChipPool.ValueType,
    amount: int,
    reason: str = "test funding",
    account: cashier_pb2.HouseAccount.ValueType = cashier_pb2.HOUSE_ACCOUNT_BANK,
    rpc_deadline: float | None = None,
) -> cashier_pb2.DecideHouseFundingResponse:
    """Fund a house account as finance does: one member asks, another approves (fresh tokens)."""
    return await fund_by_two(
        stub,
        stub,
        request_id=request_id,
        pool=pool,
        amount=amount,
        reason=reason,
        account=account,
        asker_metadata=auth_metadata(FINANCE_ASKER, Role.FINANCE),
        approver_metadata=auth_metadata(FINANCE_APPROVER, Role.FINANCE),
        rpc_deadline=rpc_deadline,
    )


def fund_house_now(
    cashier_address: str,
    *,
    request_id: str,
    pool: common_pb2.ChipPool.ValueType,
    amount: int,
    reason: str = "test funding",
    account: cashier_pb2.HouseAccount.ValueType = cashier_pb2.HOUSE_ACCOUNT_BANK,
) -> cashier_pb2.DecideHouseFundingResponse:
    """`fund_house` from synchronous code (plaintext loopback): its own event loop and channel."""

    async def run() -> cashier_pb2.DecideHouseFundingResponse:
        async with grpc.aio.insecure_channel(cashier_address) as channel:
            return await fund_house(
                cashier_pb2_grpc.CashierServiceStub(channel),
                request_id=request_id,
                pool=pool,
                amount=amount,
                reason=reason,
                account=account,
                rpc_deadline=10,
            )

    return asyncio.run(run())


def service_metadata(service: ServiceName) -> tuple[tuple[str, str], ...]:
    """Call metadata of a service token: the token's subject names the calling service."""
    return auth_metadata(service.value, Role.SERVICE)


@contextlib.asynccontextmanager
async def running_server(
    services: Sequence[GrpcService],
    access: AccessPolicy,
    *,
    keys: TokenKeys = DEV_KEYS,
    extra_handlers: Sequence[grpc.GenericRpcHandler] = (),
    limits: Limits = DEFAULT_LIMITS,
    tls: TlsFiles | None = None,
    tls_check_seconds: float = 30.0,
) -> AsyncIterator[tuple[RunningServer, grpc.aio.Channel]]:
    """A started server on 127.0.0.1:0 and a channel to it; stopped and closed afterwards.

    With `tls` the server is mutual TLS and the channel presents the same certificate."""
    running, port = await create_server(
        "127.0.0.1:0",
        services=services,
        access=access,
        token_keys=keys,
        extra_handlers=extra_handlers,
        limits=limits,
        tls=tls,
        tls_check_seconds=tls_check_seconds,
    )
    await running.start()
    target = f"127.0.0.1:{port}"
    channel = (
        grpc.aio.insecure_channel(target)
        if tls is None
        else grpc.aio.secure_channel(target, channel_credentials(tls.read()))
    )
    try:
        yield running, channel
    finally:
        await channel.close()
        await running.stop(grace_seconds=0.5)


def _admin_conninfo(server_url: str) -> str:
    url = make_url(server_url).set(drivername="postgresql", database="postgres")
    return url.render_as_string(hide_password=False)


@contextlib.contextmanager
def throwaway_postgres_database(server_url: str, prefix: str = "poker_test") -> Iterator[str]:
    """Create a uniquely named database on the server, yield its async URL, drop it afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_admin_conninfo(server_url), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        url = make_url(server_url).set(drivername="postgresql+psycopg", database=name)
        yield url.render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_admin_conninfo(server_url), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
