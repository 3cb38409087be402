"""Composition of the cashier process: database, migrations, application, servicer, access policy."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from poker.cashier.v1 import cashier_pb2_grpc
from service_runtime.access import (
    EVERY_STAFF_ROLE,
    FINANCE,
    OPERATIONS,
    PLAYERS,
    RISK,
    SUPPORT,
    AccessPolicy,
    services,
)
from service_runtime.auth import ServiceName
from service_runtime.database import close_engine, create_engine
from service_runtime.migrations import upgrade_to_head
from service_runtime.process import Assembly
from service_runtime.server import GrpcService
from services.cashier.application import Cashier
from services.cashier.audit_watch import AuditWatch
from services.cashier.grpc_adapter import SERVICE_NAME, CashierServicer
from services.cashier.money_metrics import MONEY_FLOWS, watch_house_balances
from services.cashier.settings import CashierSettings

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "cashier_alembic_version"
TABLE = services(ServiceName.TABLE)

# Players read only their own chips (the handlers check whose). Only the payments gateway records
# purchases and withdrawals (minting and burning); only table shards move chips between seats and
# the house; history reads statements to show balance changes and sets the operators' holds; the
# audit and the house bank are finance's; support reads a player's money to answer them, risk to
# weigh a case, operations a table's seats and house accounts.
ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        "GetBalances": PLAYERS | SUPPORT | RISK | FINANCE | TABLE,
        "GetStatement": PLAYERS | SUPPORT | RISK | FINANCE | services(ServiceName.HISTORY),
        "Withdraw": services(ServiceName.PAYMENTS),
        "Purchase": services(ServiceName.PAYMENTS),
        "CreateTransfers": TABLE,
        "LookupTransfers": TABLE | SUPPORT | FINANCE | services(ServiceName.PAYMENTS),
        "OpenSeatSession": TABLE,
        "SettleHand": TABLE,
        "CashOutSeatSession": TABLE,
        "GetSeatSession": TABLE | SUPPORT | FINANCE | OPERATIONS,
        "ListOpenSeatSessions": TABLE | SUPPORT | FINANCE | OPERATIONS,
        "AuditConservation": FINANCE,
        # Funding the house takes two people of finance: one asks, another decides (four-eyes).
        "RequestHouseFunding": FINANCE,
        "DecideHouseFunding": FINANCE,
        "ListHouseFunding": FINANCE,
        "GetHouseBalances": TABLE | FINANCE | OPERATIONS,
        # The back office's dashboard (every staff role): hands settled and rake per pool, aggregates.
        "GetPlayFigures": EVERY_STAFF_ROLE,
        # The payouts screen: the withdrawals applied, player by player, which finance reconciles.
        "ListWithdrawals": FINANCE,
        # Holds (rules 17) are set by the operators through history, which audits them.
        "SetPlayerHold": services(ServiceName.HISTORY),
        # Limits a player sets on themself (responsible gaming): only the player sets their own (the
        # handler takes the player from the token); the staff who read players' money read them.
        "SetSelfLimit": PLAYERS,
        "SetSessionReminder": PLAYERS,
        "StartBreak": PLAYERS,
        "GetSelfLimits": PLAYERS | SUPPORT | RISK | FINANCE,
    },
)


def migrate(url: str) -> None:
    """Bring the cashier schema at `url` to the newest revision (synchronous)."""
    upgrade_to_head(url, MIGRATIONS_DIR, VERSION_TABLE)


def cashier_service(cashier: Cashier) -> GrpcService:
    servicer = CashierServicer(cashier)
    return GrpcService(
        SERVICE_NAME, lambda server: cashier_pb2_grpc.add_CashierServiceServicer_to_server(servicer, server)
    )


async def assemble(settings: CashierSettings) -> Assembly:
    url = settings.resolved_database_url()
    await asyncio.to_thread(migrate, url)
    engine = create_engine(url, pool_size=settings.database_pool_size)
    cashier = Cashier(
        engine,
        stars_purchases_enabled=settings.stars_purchases_enabled,
        stars_lock=timedelta(days=settings.stars_lock_days),
        flows=MONEY_FLOWS,
    )
    forget_house_balances = watch_house_balances(cashier, asyncio.get_running_loop())
    watch = AuditWatch(cashier, settings.audit_interval_seconds) if settings.audit_interval_seconds else None
    if watch is not None:
        watch.start()

    async def close() -> None:
        forget_house_balances()
        if watch is not None:
            await watch.stop()
        await close_engine(engine)

    return Assembly(services=[cashier_service(cashier)], access=ACCESS, close=close)
