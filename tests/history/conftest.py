"""History fixtures: a migrated database per backend (SQLite and real PostgreSQL), the application
over it with a clock the test controls, and a real history gRPC server on port 0."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2_grpc
from service_runtime.database import create_engine, create_session_factory
from service_runtime.errors import Unavailable
from service_runtime.testing import running_server, throwaway_postgres_database
from services.history.application import HistoryApplication
from services.history.assembly import ACCESS, history_service
from services.history.cashier_statements import StatementLine
from services.history.page_tokens import PageTokens
from services.history.storage import migrate

PAGE_TOKEN_KEY = b"test-page-token-key-0123456789"


@dataclass
class FakeClock:
    now: datetime = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


class NoCashier:
    """Statement source for tests that do not read balances: the cashier is 'down'."""

    async def page(
        self, player_id: str, pool: common_pb2.ChipPool.ValueType, page_size: int, page_token: str
    ) -> tuple[list[StatementLine], str]:
        raise Unavailable("UNAVAILABLE", "no cashier in this test")


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def history_database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A freshly migrated history database, shared by the tests of one module, removed afterwards."""
    if request.param == "sqlite":
        folder: Path = tmp_path_factory.mktemp("history-db")
        url = f"sqlite+aiosqlite:///{(folder / 'history.db').as_posix()}"
        migrate(url)
        yield url
        return
    server_url: str = request.getfixturevalue("postgres_server_url")
    with throwaway_postgres_database(server_url, prefix="history_test") as url:
        migrate(url)
        yield url


@pytest.fixture
async def application(history_database_url: str) -> AsyncIterator[HistoryApplication]:
    engine = create_engine(history_database_url, pool_size=5)
    try:
        yield HistoryApplication(
            create_session_factory(engine), PageTokens(PAGE_TOKEN_KEY), NoCashier(), clock=FakeClock()
        )
    finally:
        await engine.dispose()


@pytest.fixture
async def stub(application: HistoryApplication) -> AsyncIterator[history_pb2_grpc.HistoryServiceStub]:
    async with running_server([history_service(application)], ACCESS) as (_, channel):
        yield history_pb2_grpc.HistoryServiceStub(channel)
