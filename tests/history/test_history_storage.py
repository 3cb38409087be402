"""History storage on SQLite and PostgreSQL: the Alembic migration matches the schema and goes down and
up again, the player and table lists are served by their indexes, ties in time page exactly once, and
the settings refuse development keys in
production."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from prometheus_client import REGISTRY
from sqlalchemy.engine import make_url

from service_runtime.database import sync_url
from service_runtime.migrations import alembic_config
from service_runtime.settings import SettingsError, load_settings
from service_runtime.testing_pki import TestAuthority, tls_environment
from services.history.application import HistoryApplication
from services.history.records import Viewer
from services.history.settings import HistorySettings
from services.history.storage import MIGRATIONS_DIR, VERSION_TABLE, migrate
from services.history.tables import metadata
from tests.history.engine_hands import START, varied_records


def test_the_migration_builds_exactly_the_schema_and_goes_down_and_up(history_database_url: str) -> None:
    from alembic import command

    engine = sa.create_engine(sync_url(history_database_url))
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
            differences = [d for d in compare_metadata(context, metadata) if "history_" in str(d)]
            assert differences == []
            indexes = {
                tuple(i["column_names"]) for i in sa.inspect(connection).get_indexes("history_hand_players")
            }
            assert ("player_id", "end_us", "hand_number") in indexes
            assert ("player_id", "table_id", "end_us", "hand_number") in indexes
            table_indexes = {
                tuple(i["column_names"]) for i in sa.inspect(connection).get_indexes("history_hands")
            }
            assert ("table_id", "end_us", "number") in table_indexes
        config = alembic_config(history_database_url, MIGRATIONS_DIR, VERSION_TABLE)
        command.downgrade(config, "base")
        with engine.connect() as connection:
            assert not sa.inspect(connection).has_table("history_hands")
        migrate(history_database_url)
        with engine.connect() as connection:
            assert sa.inspect(connection).has_table("history_hands")
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_postgres_serves_a_players_hands_and_a_tables_hands_from_their_indexes(postgres_url: str) -> None:
    migrate(postgres_url)
    engine = sa.create_engine(sync_url(postgres_url))
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SET enable_seqscan = off"))
            player_plan = "\n".join(
                row[0]
                for row in connection.execute(
                    sa.text(
                        "EXPLAIN SELECT hand_number FROM history_hand_players WHERE player_id = 'p' "
                        "ORDER BY end_us DESC, hand_number DESC LIMIT 51"
                    )
                )
            )
            assert "ix_history_hand_players_player_id_end_us_hand_number" in player_plan
            table_plan = "\n".join(
                row[0]
                for row in connection.execute(
                    sa.text(
                        "EXPLAIN SELECT number FROM history_hands WHERE table_id = 't' "
                        "ORDER BY end_us DESC, number DESC LIMIT 51"
                    )
                )
            )
            assert "ix_history_hands_table_id_end_us_number" in table_plan
    finally:
        engine.dispose()


async def test_hands_ending_at_the_same_moment_page_once_each(application: HistoryApplication) -> None:
    prefix = f"tie{uuid.uuid4().hex[:6]}-"
    records = varied_records(12, prefix=prefix, table_id=f"{prefix}t", seed=21)
    for record in records:
        # Every hand ends at the same microsecond: only the insertion number orders them.
        record.start_time.FromDatetime(START)
        record.end_time.FromDatetime(START + timedelta(seconds=30))
        await application.record_hand(record)
    hero = records[0].seats[0].player_id
    expected = [r.hand_id for r in reversed(records) if any(s.player_id == hero for s in r.seats)]
    seen: list[str] = []
    token = ""
    while True:
        page, token = await application.list_my_hands(Viewer(hero), page_size=1, page_token=token)
        seen += [h.hand_id for h in page]
        if not token:
            break
    assert seen == expected


def test_production_refuses_the_development_page_token_key(tmp_path: Path) -> None:
    environment = {
        "POKER_ENVIRONMENT": "production",
        "POKER_AUTH_KEYS": "k1:production-secret-0123456789",
        "POKER_HISTORY_DATABASE_URL": "postgresql://db/history",
        **tls_environment(TestAuthority(tmp_path).issue("history")),
    }
    with pytest.raises(SettingsError) as error:
        load_settings(HistorySettings, environ=environment)
    assert "POKER_HISTORY_PAGE_TOKEN_KEY" in str(error.value)
    settings = load_settings(
        HistorySettings, environ={**environment, "POKER_HISTORY_PAGE_TOKEN_KEY": "x" * 32}
    )
    assert settings.cashier_address == "127.0.0.1:50053"


def sql_timed(backend: str, statement: str) -> float:
    return sum(
        sample.value
        for family in REGISTRY.collect()
        if family.name == "poker_sql_statement_seconds"
        for sample in family.samples
        if sample.name.endswith("_count") and sample.labels == {"backend": backend, "statement": statement}
    )


async def test_record_hand_s_round_trips_on_the_driver_are_in_the_sql_latency_figure(
    application: HistoryApplication, history_database_url: str
) -> None:
    """RecordHand skips SQLAlchemy, whose cursor events time every other statement: its own round
    trips are timed too (PostgreSQL: the hand's pipeline, PIPELINE; SQLite: each INSERT)."""
    backend = make_url(history_database_url).get_backend_name()
    kind = "PIPELINE" if backend == "postgresql" else "INSERT"
    prefix = f"timed{uuid.uuid4().hex[:6]}-"
    records = varied_records(3, prefix=prefix, table_id=f"{prefix}t", seed=5)
    before = sql_timed(backend, kind)
    for record in records:
        await application.record_hand(record)
    # PostgreSQL: at least the hand's one round trip each; SQLite: the hand and its players each.
    assert sql_timed(backend, kind) - before >= len(records) * (1 if backend == "postgresql" else 2)
