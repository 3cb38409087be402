"""Composition of the lobby process: what it hosts and who may call what.

The lobby's RPCs are served by the lobby issue; until then each answers UNIMPLEMENTED (reason
NOT_IMPLEMENTED) while health, reflection, auth and access control already work for real.
"""

from __future__ import annotations

from poker.lobby.v1 import lobby_pb2_grpc
from service_runtime.access import ADMIN_ONLY, ANY_CALLER, PLAYERS, AccessPolicy
from service_runtime.process import Assembly
from service_runtime.server import GrpcService
from service_runtime.unimplemented import unimplemented_servicer
from services.lobby.settings import LobbySettings

SERVICE_NAME = "poker.lobby.v1.LobbyService"

ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        "ListRooms": ANY_CALLER,
        "GetRoom": ANY_CALLER,
        "ListTables": ANY_CALLER,
        "JoinTable": PLAYERS,
        "RedeemInviteCode": PLAYERS,
        "GetMaintenance": ANY_CALLER,
        "CreateRoom": ADMIN_ONLY,
        "SetMaintenance": ADMIN_ONLY,
        "UpdateAllowList": ADMIN_ONLY,
        "ListAllowList": ADMIN_ONLY,
        "CreateInviteCode": ADMIN_ONLY,
    },
)


async def assemble(settings: LobbySettings) -> Assembly:
    servicer = unimplemented_servicer(lobby_pb2_grpc.LobbyServiceServicer, SERVICE_NAME)
    return Assembly(
        services=[
            GrpcService(
                SERVICE_NAME,
                lambda server: lobby_pb2_grpc.add_LobbyServiceServicer_to_server(servicer, server),
            )
        ],
        access=ACCESS,
    )
