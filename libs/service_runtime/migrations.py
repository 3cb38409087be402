"""Alembic, driven from code: each service keeps its own migration folder and version table.

A service's `migrations/env.py` is two lines that call `run_alembic_env(metadata)`; the service
calls `upgrade_to_head(url, folder)` at start-up (and tests do the same on a fresh database), so no
one has to remember a separate migration step on a laptop. On PostgreSQL the upgrade holds an
advisory lock named after the version table, so replicas that start together (a rollout, a scale-up)
migrate one after the other: the first applies the new revisions, the others find the schema at head
and change nothing, instead of racing each other's DDL.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command, context
from alembic.config import Config
from sqlalchemy import MetaData, create_engine, pool, text
from sqlalchemy.engine import make_url

from service_runtime.database import sync_url


def alembic_config(url: str, migrations_dir: Path, version_table: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir))
    # ConfigParser interpolation would read a `%` in a password as a placeholder.
    config.set_main_option("sqlalchemy.url", sync_url(url).replace("%", "%%"))
    config.attributes["version_table"] = version_table
    return config


def upgrade_to_head(url: str, migrations_dir: Path, version_table: str) -> None:
    """Bring the database at `url` to the newest revision in `migrations_dir` (synchronous)."""
    parsed = make_url(sync_url(url))
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        # A fresh data folder: SQLite creates the file but not the folders above it.
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    config = alembic_config(url, migrations_dir, version_table)
    if parsed.get_backend_name() != "postgresql":
        # SQLite: one process per file, and its write lock already serialises writers.
        command.upgrade(config, "head")
        return
    lock_engine = create_engine(parsed, poolclass=pool.NullPool, isolation_level="AUTOCOMMIT")
    try:
        with lock_engine.connect() as lock:
            # A session-level lock on its own connection: held across Alembic's transactions, and
            # released by PostgreSQL itself if this process dies half-way.
            key = {"name": f"poker-migrations:{version_table}"}
            lock.execute(text("SELECT pg_advisory_lock(hashtext(:name))"), key)
            try:
                command.upgrade(config, "head")
            finally:
                lock.execute(text("SELECT pg_advisory_unlock(hashtext(:name))"), key)
    finally:
        lock_engine.dispose()


def run_alembic_env(metadata: MetaData) -> None:
    """Body of every service's `env.py`: online migrations with a per-service version table."""
    config = context.config
    version_table = config.attributes.get("version_table", "alembic_version")
    url = config.get_main_option("sqlalchemy.url")
    if context.is_offline_mode():
        context.configure(url=url, target_metadata=metadata, version_table=version_table, literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(url or "", poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            version_table=version_table,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()
