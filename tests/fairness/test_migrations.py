"""The fairness migrations build exactly the schema the code declares, on a fresh database."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from services.fairness.storage import VERSION_TABLE, migrate
from services.fairness.tables import metadata


def test_migrations_match_the_declared_tables_and_use_their_own_version_table(tmp_path: Path) -> None:
    database = tmp_path / "nested" / "fairness.db"
    migrate(f"sqlite+aiosqlite:///{database.as_posix()}")
    engine = create_engine(f"sqlite:///{database.as_posix()}")
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
            assert compare_metadata(context, metadata) == []
            assert VERSION_TABLE in inspect(connection).get_table_names()
    finally:
        engine.dispose()
