"""Cashier fixtures: a migrated database (PostgreSQL, or SQLite where it matters) and a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from service_runtime.auth import Role
from service_runtime.database import create_engine
from service_runtime.migrations import upgrade_to_head
from service_runtime.testing import auth_metadata
from services.cashier.application import Cashier
from services.cashier.assembly import MIGRATIONS_DIR
from services.cashier.payments import PaymentSource

MIGRATIONS = MIGRATIONS_DIR


class FreshToken(Sequence[tuple[str, str]]):
    """Call metadata whose bearer token is minted each time a call reads it, so a module-level
    caller never expires however long the suite runs (tokens live ten minutes)."""

    def __init__(self, subject: str, *roles: Role) -> None:
        self.subject, self.roles = subject, roles

    def _pairs(self) -> tuple[tuple[str, str], ...]:
        return auth_metadata(self.subject, *self.roles)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._pairs())

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: int) -> tuple[str, str]:  # type: ignore[override]
        return self._pairs()[index]


@dataclass
class FakeClock:
    """A clock the test moves by hand (the Stars lock is 21 days)."""

    now: datetime = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


async def migrated_cashier(url: str, clock: FakeClock, *, pool_size: int = 10, stars: bool = True) -> Cashier:
    await asyncio.to_thread(upgrade_to_head, url, MIGRATIONS, "cashier_alembic_version")
    engine = create_engine(url, pool_size=pool_size)
    return Cashier(engine, clock=clock, stars_purchases_enabled=stars)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def cashier(postgres_url: str, clock: FakeClock) -> AsyncIterator[Cashier]:
    """A cashier on a brand-new, migrated PostgreSQL database (dropped after the test)."""
    service = await migrated_cashier(postgres_url, clock, pool_size=20)
    try:
        yield service
    finally:
        await service.engine.dispose()


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
async def any_cashier(request: pytest.FixtureRequest, clock: FakeClock) -> AsyncIterator[Cashier]:
    """A cashier on each backend in turn: PostgreSQL, then the embedded SQLite default."""
    url = request.getfixturevalue("postgres_url" if request.param == "postgres" else "sqlite_url")
    service = await migrated_cashier(url, clock)
    try:
        yield service
    finally:
        await service.engine.dispose()


@pytest.fixture
async def sqlite_cashier(sqlite_url: str, clock: FakeClock) -> AsyncIterator[Cashier]:
    """The same on the embedded SQLite default used by `make run`."""
    service = await migrated_cashier(sqlite_url, clock)
    try:
        yield service
    finally:
        await service.engine.dispose()


async def fund(cashier: Cashier, player_id: str, gram_chips: int = 0, mpx_chips: int = 0) -> None:
    """Buy chips for a player through the ordinary purchase path."""
    if gram_chips:
        await cashier.purchase(
            payment_reference=f"fund-{player_id}-gram-{gram_chips}",
            player_id=player_id,
            source=PaymentSource.GRAM,
            amount_minor=gram_chips * 10**6,
        )
    if mpx_chips:
        await cashier.purchase(
            payment_reference=f"fund-{player_id}-mpx-{mpx_chips}",
            player_id=player_id,
            source=PaymentSource.MPX,
            amount_minor=mpx_chips * 10**8,
        )


@pytest.fixture(name="fund")
def fund_fixture() -> object:
    return fund


@pytest.fixture(name="migrated_cashier")
def migrated_cashier_fixture() -> object:
    """The factory itself, for tests that build a cashier with other options or on their own loop."""
    return migrated_cashier
