"""Composition of the fairness process: database, seed vault, application, servicer, access policy."""

from __future__ import annotations

import asyncio

from poker.fairness.v1 import fairness_pb2_grpc
from service_runtime.access import ANY_ROLE, SERVICE_ONLY, AccessPolicy
from service_runtime.database import Transactions, create_engine
from service_runtime.process import Assembly
from service_runtime.server import GrpcService
from services.fairness.application import FairnessApplication
from services.fairness.grpc_adapter import SERVICE_NAME, FairnessServicer
from services.fairness.seed_vault import SeedVault
from services.fairness.settings import FairnessSettings
from services.fairness.storage import migrate

# The table service (role `service`) drives each hand; anyone authenticated may read and check.
ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        "CommitHand": SERVICE_ONLY,  # needed by: table (and house games, wherever they deal)
        "AddPlayerEntropy": SERVICE_ONLY,  # needed by: table (it relays the seated players' seeds)
        "SealHand": SERVICE_ONLY,  # needed by: table (and house games, wherever they deal)
        "RevealHand": SERVICE_ONLY,  # needed by: table (and house games, wherever they deal)
        "GetCommitment": ANY_ROLE,
        "ListTableCommitments": ANY_ROLE,
        "GetReveal": ANY_ROLE,
        "VerifyHand": ANY_ROLE,
    },
)


def fairness_service(application: FairnessApplication) -> GrpcService:
    servicer = FairnessServicer(application)
    return GrpcService(
        SERVICE_NAME, lambda server: fairness_pb2_grpc.add_FairnessServiceServicer_to_server(servicer, server)
    )


async def assemble(settings: FairnessSettings) -> Assembly:
    url = settings.resolved_database_url()
    await asyncio.to_thread(migrate, url)
    engine = create_engine(url, pool_size=settings.database_pool_size)
    application = FairnessApplication(
        Transactions(engine), SeedVault.from_settings(settings.seed_encryption_keys)
    )
    return Assembly(services=[fairness_service(application)], access=ACCESS, close=engine.dispose)
