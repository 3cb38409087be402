"""Composition of the history process: database, migrations, cashier channel, application, servicer."""

from __future__ import annotations

import asyncio

from poker.history.v1 import history_pb2_grpc
from service_runtime.access import ADMIN_ONLY, ANY_ROLE, SERVICE_ONLY, AccessPolicy
from service_runtime.auth import Role, TokenKeys
from service_runtime.clients import create_channel
from service_runtime.database import create_engine, create_session_factory
from service_runtime.process import Assembly
from service_runtime.server import GrpcService
from service_runtime.service_tokens import ServiceTokenSource
from services.history.application import HistoryApplication
from services.history.cashier_statements import CashierStatements
from services.history.grpc_adapter import SERVICE_NAME, HistoryServicer
from services.history.page_tokens import PageTokens
from services.history.settings import HistorySettings
from services.history.storage import migrate

# The subject of the history service's own token when it calls the cashier (GetStatement only).
SERVICE_SUBJECT = "history"

ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        # SERVICE_ONLY today; after issue 10: only the `table` service records hands.
        "RecordHand": SERVICE_ONLY,
        # Players read their own hands and statements (the application scopes them to the token's
        # subject); admins read everything. Services have no reason to read: after issue 10 these
        # become player + admin.
        "ListMyHands": ANY_ROLE,
        "GetHand": ANY_ROLE,
        "ListTableHands": ANY_ROLE,
        "ExportHands": ANY_ROLE,
        "ListBalanceChanges": ANY_ROLE,
        # Role.SERVICE today; after issue 10: `table` and `lobby` (voided hands, maintenance) plus admins.
        "RecordAuditEvent": frozenset({Role.SERVICE, Role.ADMIN}),
        "ListAuditEvents": ADMIN_ONLY,
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
    engine = create_engine(url, pool_size=settings.database_pool_size)
    tokens = ServiceTokenSource(TokenKeys.from_settings(settings.auth_keys), SERVICE_SUBJECT)
    cashier = create_channel(
        settings.cashier_address, timeout_seconds=settings.request_timeout_seconds, token=tokens
    )
    application = HistoryApplication(
        create_session_factory(engine),
        PageTokens(settings.page_token_key.encode()),
        CashierStatements(cashier),
    )

    async def close() -> None:
        await cashier.close()
        await engine.dispose()

    return Assembly(services=[history_service(application)], access=ACCESS, close=close)
