"""Composition of the history process: database, migrations, cashier channel, application, servicer."""

from __future__ import annotations

import asyncio

from poker.history.v1 import history_pb2_grpc
from poker_engine.evaluator import strength_of
from service_runtime.access import (
    EVERY_STAFF_ROLE,
    FINANCE,
    PLAYERS,
    RISK,
    STAFF_ADMIN,
    SUPPORT,
    AccessPolicy,
    services,
)
from service_runtime.auth import ServiceName, TokenKeys
from service_runtime.clients import create_channel
from service_runtime.database import close_engine, create_engine, create_session_factory
from service_runtime.process import Assembly
from service_runtime.server import GrpcService
from service_runtime.service_tokens import ServiceTokenSource
from service_runtime.tls import TlsFiles
from services.history.application import HistoryApplication
from services.history.cashier_holds import CashierHolds
from services.history.cashier_statements import CashierStatements
from services.history.grpc_adapter import SERVICE_NAME, HistoryServicer
from services.history.page_tokens import PageTokens
from services.history.settings import HistorySettings
from services.history.storage import migrate

# The subject of the history service's own token when it calls the cashier (GetStatement and
# SetPlayerHold: the operators' holds, the automatic holds and their release).
SERVICE_SUBJECT = ServiceName.HISTORY.value

ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        # Only table shards record hands.
        "RecordHand": services(ServiceName.TABLE),
        # Players read their own hands and statements (the application scopes them to the token's
        # subject); support (answering a player) and risk (weighing a case) read every hand whole,
        # finance the balance changes too; no service needs to read.
        "ListMyHands": PLAYERS | SUPPORT | RISK,
        "GetHand": PLAYERS | SUPPORT | RISK,
        "ListTableHands": PLAYERS | SUPPORT | RISK,
        "ExportHands": PLAYERS | SUPPORT | RISK,
        "ListBalanceChanges": PLAYERS | SUPPORT | RISK | FINANCE,
        # Table shards (suspicious play they see) and the lobby, plus support's and risk's notes.
        # The gateway records the staff's actions through its staff door (audit_writers.py).
        "RecordAuditEvent": services(ServiceName.TABLE, ServiceName.LOBBY, ServiceName.GATEWAY)
        | SUPPORT
        | RISK,
        # The audit trail: every staff job reads it (the staff admin audits the staff).
        "ListAuditEvents": EVERY_STAFF_ROLE,
        # Fair play (rules 17): cases and holds are risk's alone; players never see a flag.
        "ListCases": RISK,
        "GetCase": RISK,
        "HoldPlayer": RISK,
        "ReleasePlayer": RISK,
        # Risk's decision on a strong case's automatic withdrawal holds.
        "ResolveCase": RISK,
        # Four-eyes on releasing held chips: risk asks (ReleasePlayer, ResolveCase), finance decides.
        "DecideRelease": FINANCE,
        "ListReleaseRequests": FINANCE | RISK,
        # The staff directory: the staff administrator keeps it; the staff door reads one person at
        # a sign-in and a renewal.
        "SetStaffMember": STAFF_ADMIN,
        "ListStaff": STAFF_ADMIN,
        "FindStaffMember": services(ServiceName.GATEWAY),
    },
)


def history_service(application: HistoryApplication) -> GrpcService:
    servicer = HistoryServicer(application)
    return GrpcService(
        SERVICE_NAME, lambda server: history_pb2_grpc.add_HistoryServiceServicer_to_server(servicer, server)
    )


async def assemble(settings: HistorySettings) -> Assembly:
    url = settings.resolved_database_url()
    await asyncio.to_thread(migrate, url)
    # The detectors rank five-card boards, whose table the engine builds on first use (a second or
    # more of CPU): built now, not inside the first RecordHand that needs it, where it stalled every
    # call behind it (seen in the RecordHand bench's profile).
    strength_of((0, 5, 10, 15, 21))
    engine = create_engine(url, pool_size=settings.database_pool_size)
    tokens = ServiceTokenSource(TokenKeys.from_settings(settings.auth_keys), SERVICE_SUBJECT)
    cashier = create_channel(
        settings.cashier_address,
        timeout_seconds=settings.request_timeout_seconds,
        token=tokens,
        tls=TlsFiles.from_settings(settings),
        tls_check_seconds=settings.tls_reload_seconds,
    )
    application = HistoryApplication(
        create_session_factory(engine),
        PageTokens(settings.page_token_key.encode()),
        CashierStatements(cashier),
        holds=CashierHolds(cashier),
        permitted_automation=settings.permitted_automation_prefixes(),
        auto_hold_min_score=settings.auto_hold_min_score,
    )
    # Automatic holds still due from before a restart are applied at once, new ones as they come.
    application.start()

    async def close() -> None:
        await application.stop()
        await cashier.close()
        await close_engine(engine)

    return Assembly(services=[history_service(application)], access=ACCESS, close=close)
