"""Composition of the cashier process: database, migrations, application, servicer, access policy."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from poker.cashier.v1 import cashier_pb2_grpc
from service_runtime.access import ADMIN_ONLY, PLAYERS_AND_ADMINS, AccessPolicy, services
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
TABLE_OR_ADMIN = TABLE | ADMIN_ONLY

# Players read only their own chips (the handlers check whose). Only the payments gateway records
# purchases and withdrawals (minting and burning); only table shards move chips between seats and
# the house; history reads statements to show balance changes and sets the operators' holds; the
# audit is the operator's.
ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        "GetBalances": PLAYERS_AND_ADMINS | TABLE,
        "GetStatement": PLAYERS_AND_ADMINS | services(ServiceName.HISTORY),
        "Withdraw": services(ServiceName.PAYMENTS),
        "Purchase": services(ServiceName.PAYMENTS),
        "CreateTransfers": TABLE,
        "LookupTransfers": TABLE_OR_ADMIN | services(ServiceName.PAYMENTS),
        "OpenSeatSession": TABLE,
        "SettleHand": TABLE,
        "CashOutSeatSession": TABLE,
        "GetSeatSession": TABLE_OR_ADMIN,
        "ListOpenSeatSessions": TABLE_OR_ADMIN,
        "AuditConservation": ADMIN_ONLY,
        "FundHouseAccount": ADMIN_ONLY,
        "GetHouseBalances": TABLE_OR_ADMIN,
        # Holds (rules 17) are set by the operators through history, which audits them.
        "SetPlayerHold": services(ServiceName.HISTORY),
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
