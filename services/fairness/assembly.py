"""Composition of the fairness process: database, seed vault, application, servicer, access policy."""

from __future__ import annotations

import asyncio

from poker.fairness.v1 import fairness_pb2_grpc
from service_runtime.access import PLAYERS, RISK, SUPPORT, AccessPolicy, services
from service_runtime.auth import ServiceName
from service_runtime.database import Transactions, close_engine, create_engine
from service_runtime.process import Assembly
from service_runtime.server import GrpcService
from services.fairness.application import FairnessApplication
from services.fairness.grpc_adapter import SERVICE_NAME, FairnessServicer
from services.fairness.seed_vault import SeedVault
from services.fairness.settings import FairnessSettings
from services.fairness.storage import migrate

# Only table shards drive a hand (they alone ever see a live deck); players, support and risk read
# and check (the handlers narrow a player's reveals to the hands they played); no service reads.
TABLE = services(ServiceName.TABLE)
ACCESS = AccessPolicy.for_service(
    SERVICE_NAME,
    {
        "CommitHand": TABLE,
        "AddPlayerEntropy": TABLE,
        "SealHand": TABLE,
        "RevealHand": TABLE,
        "GetCommitment": PLAYERS | SUPPORT | RISK,
        "ListTableCommitments": PLAYERS | SUPPORT | RISK,
        "GetReveal": PLAYERS | SUPPORT | RISK,
        "VerifyHand": PLAYERS | SUPPORT | RISK,
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
    return Assembly(
        services=[fairness_service(application)], access=ACCESS, close=lambda: close_engine(engine)
    )
