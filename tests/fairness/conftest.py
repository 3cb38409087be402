"""Fixtures of the fairness tests: a migrated database per backend (SQLite and real PostgreSQL) per
module, and the application over it with the development seed key."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from service_runtime.database import Transactions, create_engine
from service_runtime.testing import throwaway_postgres_database
from services.fairness.application import FairnessApplication
from services.fairness.seed_vault import SeedVault
from services.fairness.settings import DEV_SEED_KEY_HEX, DEV_SEED_KEY_ID
from services.fairness.storage import migrate

DEV_VAULT = SeedVault({DEV_SEED_KEY_ID: bytes.fromhex(DEV_SEED_KEY_HEX)}, DEV_SEED_KEY_ID)


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def fairness_database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A freshly migrated fairness database, shared by the tests of one module, removed afterwards."""
    if request.param == "sqlite":
        folder: Path = tmp_path_factory.mktemp("fairness-db")
        url = f"sqlite+aiosqlite:///{(folder / 'fairness.db').as_posix()}"
        migrate(url)
        yield url
        return
    server_url: str = request.getfixturevalue("postgres_server_url")
    with throwaway_postgres_database(server_url, prefix="fairness_test") as url:
        migrate(url)
        yield url


@pytest.fixture
async def application(fairness_database_url: str) -> AsyncIterator[FairnessApplication]:
    engine = create_engine(fairness_database_url, pool_size=5)
    try:
        yield FairnessApplication(Transactions(engine), DEV_VAULT)
    finally:
        await engine.dispose()
