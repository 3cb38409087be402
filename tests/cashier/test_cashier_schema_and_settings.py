"""The cashier migrations build exactly the declared schema; settings are read and validated."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.exc import DBAPIError

from service_runtime.database import sync_url
from service_runtime.migrations import alembic_config
from service_runtime.settings import SettingsError, load_settings
from services.cashier.assembly import MIGRATIONS_DIR, VERSION_TABLE, migrate
from services.cashier.settings import CashierSettings
from services.cashier.tables import metadata


def _compare(url: str) -> tuple[list[object], list[str], int]:
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
            differences = compare_metadata(context, metadata)
            tables = inspect(connection).get_table_names()
            system_accounts = connection.execute(text("SELECT count(*) FROM accounts")).scalar_one()
        return differences, tables, int(system_accounts)
    finally:
        engine.dispose()


def test_migrations_match_the_declared_tables_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{(tmp_path / 'nested' / 'cashier.db').as_posix()}"
    migrate(url)
    differences, tables, system_accounts = _compare(url)
    assert differences == []
    assert VERSION_TABLE in tables
    # Per pool: bank, its cover (the open house rounds' reservations), jackpot and the house-funding
    # mint; mints for GRAM, Stars and MPX (rake accounts come with tables).
    assert system_accounts == 2 * 4 + 3


@pytest.mark.postgres
async def test_accounts_are_never_deleted_and_transfers_never_change(postgres_url: str) -> None:
    await asyncio.to_thread(migrate, postgres_url)
    engine = create_engine(sync_url(postgres_url))
    try:
        for statement, message in (
            ("DELETE FROM accounts WHERE account_id = 'house:bank:GRAM'", "accounts are never deleted"),
            ("UPDATE transfers SET amount = 2", "transfers are append-only"),
            ("DELETE FROM transfers", "transfers are append-only"),
        ):
            with engine.connect() as connection:
                if statement.startswith(("UPDATE", "DELETE FROM transfers")):
                    connection.execute(
                        text(
                            "INSERT INTO transfers (transfer_id, debit_account_id, credit_account_id, pool, "
                            "amount, kind, created_at) VALUES ('t', 'mint:GRAM:GRAM', 'house:bank:GRAM', "
                            "'GRAM', 1, 'adjustment', now())"
                        )
                    )
                with pytest.raises(DBAPIError, match=message):
                    connection.execute(text(statement))
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM accounts")).scalar_one() == 2 * 4 + 3
    finally:
        engine.dispose()


@pytest.mark.postgres
async def test_migrations_match_on_postgres_and_downgrade_cleanly(postgres_url: str) -> None:
    await asyncio.to_thread(migrate, postgres_url)
    differences, _, _ = await asyncio.to_thread(_compare, postgres_url)
    assert differences == []
    config = alembic_config(postgres_url, MIGRATIONS_DIR, VERSION_TABLE)
    await asyncio.to_thread(command.downgrade, config, "base")
    engine = create_engine(sync_url(postgres_url))
    try:
        with engine.connect() as connection:
            assert set(inspect(connection).get_table_names()) <= {VERSION_TABLE}
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", [pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
def test_migration_0003_moves_system_owners_and_widens_transfer_ids_keeping_the_triggers(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url" if backend == "postgres" else "sqlite_url")
    config = alembic_config(url, MIGRATIONS_DIR, VERSION_TABLE)
    command.upgrade(config, "0002")
    engine = create_engine(sync_url(url))
    try:
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO accounts (account_id, owner_id, pool, kind, created_at) VALUES "
                    "('house:rake:GRAM:t1', 'house', 'GRAM', 'house_rake', CURRENT_TIMESTAMP), "
                    "('wallet:GRAM:house', 'house', 'GRAM', 'player_wallet', CURRENT_TIMESTAMP)"
                )
            )
        command.upgrade(config, "head")
        with engine.begin() as connection:
            owners = dict(connection.execute(text("SELECT account_id, owner_id FROM accounts")).all())
            long_id = "purchase:TELEGRAM_STARS:" + "r" * 128
            connection.execute(
                text(
                    "INSERT INTO transfers (transfer_id, debit_account_id, credit_account_id, pool, amount, kind, "
                    "created_at) VALUES (:id, 'mint:TELEGRAM_STARS:GRAM', 'wallet:GRAM:house', 'GRAM', 1, "
                    "'purchase', CURRENT_TIMESTAMP)"
                ),
                {"id": long_id},
            )
            connection.execute(
                text(
                    "INSERT INTO stars_lots (transfer_id, player_id, chips, unlocks_at) "
                    "VALUES (:id, 'house', 1, CURRENT_TIMESTAMP)"
                ),
                {"id": long_id},
            )
        with engine.connect() as connection, pytest.raises(DBAPIError, match="append-only"):
            connection.execute(text("DELETE FROM transfers"))
    finally:
        engine.dispose()
    assert owners["house:rake:GRAM:t1"] == owners["house:bank:MPX"] == "system/house"
    assert owners["mint:TELEGRAM_STARS:GRAM"] == "system/mint/TELEGRAM_STARS"
    assert owners["mint:HOUSE_FUNDING:MPX"] == "system/mint/HOUSE_FUNDING"
    # A wallet keeps its owner, whatever it is called: only system accounts move.
    assert owners["wallet:GRAM:house"] == "house"


@pytest.mark.parametrize("backend", [pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
def test_migration_0007_gives_each_payment_reference_to_its_first_transfer(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """Issue 41: references bought twice before the fix (one per source) belong to the first."""
    url = request.getfixturevalue("postgres_url" if backend == "postgres" else "sqlite_url")
    config = alembic_config(url, MIGRATIONS_DIR, VERSION_TABLE)
    command.upgrade(config, "0006")
    engine = create_engine(sync_url(url))
    try:
        with engine.begin() as connection:
            for transfer_id, debit, credit, pool, kind, reference in (
                ("purchase:GRAM:R", "mint:GRAM:GRAM", "wallet:GRAM:ann", "GRAM", "purchase", "R"),
                ("purchase:MPX:R", "mint:MPX:MPX", "wallet:MPX:ann", "MPX", "purchase", "R"),
                ("withdrawal:MPX:R", "wallet:MPX:ann", "mint:MPX:MPX", "MPX", "withdrawal", "R"),
                ("hand:h1:0", "seat:s1", "seat:s2", "GRAM", "hand_result", "R"),
            ):
                connection.execute(
                    text(
                        "INSERT INTO transfers (transfer_id, debit_account_id, credit_account_id, pool, amount, "
                        "kind, reference, created_at) VALUES (:id, :debit, :credit, :pool, 100, :kind, :reference, "
                        "CURRENT_TIMESTAMP)"
                    ),
                    {"id": transfer_id, "debit": debit, "credit": credit, "pool": pool, "kind": kind,
                     "reference": reference},
                )  # fmt: skip
        command.upgrade(config, "head")
        with engine.connect() as connection:
            held = connection.execute(
                text("SELECT kind, payment_reference, transfer_id FROM payment_references ORDER BY kind")
            ).all()
    finally:
        engine.dispose()
    assert [tuple(row) for row in held] == [
        ("purchase", "R", "purchase:GRAM:R"),
        ("withdrawal", "R", "withdrawal:MPX:R"),
    ]


def test_settings_default_to_stars_off_and_a_21_day_lock_on_port_50053() -> None:
    settings = load_settings(CashierSettings, {})
    assert (settings.stars_purchases_enabled, settings.stars_lock_days, settings.port) == (False, 21, 50053)
    enabled = load_settings(CashierSettings, {"POKER_CASHIER_STARS_PURCHASES_ENABLED": "true"})
    assert enabled.stars_purchases_enabled


def test_bad_settings_are_listed_together() -> None:
    with pytest.raises(SettingsError) as error:
        load_settings(
            CashierSettings,
            {"POKER_CASHIER_STARS_LOCK_DAYS": "0", "POKER_CASHIER_DATABASE_POOL_SIZE": "-1"},
        )
    assert len(error.value.problems) == 2
