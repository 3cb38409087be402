"""Composition of a table shard process: what it hosts and who may call what.

The table's RPCs are served by the table-service issue (it drives the poker engine and house games
with the cashier and fairness); until then each answers UNIMPLEMENTED (reason NOT_IMPLEMENTED).
"""

from __future__ import annotations

from poker.table.v1 import table_pb2_grpc
from service_runtime.access import ANY_CALLER, PLAYERS, AccessPolicy
from service_runtime.process import Assembly
from service_runtime.server import GrpcService
from service_runtime.unimplemented import unimplemented_servicer
from services.table.settings import TableSettings

SERVICE_NAME = "poker.table.v1.TableService"

# Seat-taking and betting are for players; watching is for anyone with a token.

ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        "SitDown": PLAYERS,
        "LeaveTable": PLAYERS,
        "Act": PLAYERS,
        "SitOut": PLAYERS,
        "SitIn": PLAYERS,
        "SetPlayerSeed": PLAYERS,
        "SendChat": PLAYERS,
        "PlaceHouseBets": PLAYERS,
        "MakeHouseDecision": PLAYERS,
        "WatchTable": PLAYERS,
        "SpectateTable": ANY_CALLER,
        "GetTableSnapshot": ANY_CALLER,
    },
)


async def assemble(settings: TableSettings) -> Assembly:
    servicer = unimplemented_servicer(table_pb2_grpc.TableServiceServicer, SERVICE_NAME)
    return Assembly(
        services=[
            GrpcService(
                SERVICE_NAME,
                lambda server: table_pb2_grpc.add_TableServiceServicer_to_server(servicer, server),
            )
        ],
        access=ACCESS,
    )
