"""Composition of the history process: what it hosts and who may call what.

The history RPCs are served by the history issue; until then each answers UNIMPLEMENTED (reason
NOT_IMPLEMENTED) while health, reflection, auth and access control already work for real.
"""

from __future__ import annotations

from poker.history.v1 import history_pb2_grpc
from service_runtime.access import ADMIN_ONLY, ANY_ROLE, SERVICE_ONLY, AccessPolicy
from service_runtime.auth import Role
from service_runtime.process import Assembly
from service_runtime.server import GrpcService
from service_runtime.unimplemented import unimplemented_servicer
from services.history.settings import HistorySettings

SERVICE_NAME = "poker.history.v1.HistoryService"

ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        "RecordHand": SERVICE_ONLY,
        "ListMyHands": ANY_ROLE,
        "GetHand": ANY_ROLE,
        "ListTableHands": ANY_ROLE,
        "ExportHands": ANY_ROLE,
        "ListBalanceChanges": ANY_ROLE,
        "RecordAuditEvent": frozenset({Role.SERVICE, Role.ADMIN}),
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
