"""Composition of the history process: what it hosts and who may call what.

The history RPCs are served by the history issue; until then each answers UNIMPLEMENTED (reason
NOT_IMPLEMENTED) while health, reflection, auth and access control already work for real.
"""

from __future__ import annotations

from poker.history.v1 import history_pb2_grpc
from service_runtime.access import ADMIN_ONLY, PLAYERS_AND_ADMINS, AccessPolicy, services
from service_runtime.auth import ServiceName
from service_runtime.process import Assembly
from service_runtime.server import GrpcService
from service_runtime.unimplemented import unimplemented_servicer
from services.history.settings import HistorySettings

SERVICE_NAME = "poker.history.v1.HistoryService"

ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        "RecordHand": services(ServiceName.TABLE),
        "ListMyHands": PLAYERS_AND_ADMINS,
        "GetHand": PLAYERS_AND_ADMINS,
        "ListTableHands": PLAYERS_AND_ADMINS,
        "ExportHands": PLAYERS_AND_ADMINS,
        "ListBalanceChanges": PLAYERS_AND_ADMINS,
        "RecordAuditEvent": services(ServiceName.TABLE) | ADMIN_ONLY,
        "ListAuditEvents": ADMIN_ONLY,
    },
)


async def assemble(settings: HistorySettings) -> Assembly:
    servicer = unimplemented_servicer(history_pb2_grpc.HistoryServiceServicer, SERVICE_NAME)
    return Assembly(
        services=[
            GrpcService(
                SERVICE_NAME,
                lambda server: history_pb2_grpc.add_HistoryServiceServicer_to_server(servicer, server),
            )
        ],
        access=ACCESS,
    )
