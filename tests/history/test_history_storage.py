"""History storage on SQLite and PostgreSQL: the Alembic migration matches the schema and goes down and
up again, the player and table lists are served by their indexes, ties in time page exactly once,
the detectors' pair count looks hands up by index, and the settings refuse development keys in
production."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from service_runtime.database import sync_url
from service_runtime.migrations import alembic_config
from service_runtime.settings import SettingsError, load_settings
from service_runtime.testing_pki import TestAuthority, tls_environment
from services.history.application import HistoryApplication
from services.history.records import Viewer
from services.history.settings import HistorySettings
from services.history.storage import MIGRATIONS_DIR, VERSION_TABLE, hands_together_query, migrate
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


async def test_the_chip_dumping_pair_count_looks_each_hand_up_instead_of_scanning_a_history(
    history_database_url: str,
) -> None:
    """Issue 28: joined on the hand number alone, SQLite scanned the second player's whole history for
    every hand of the first (RecordHand then spent most of its time there). The plan must look the
    second player's row up by (player, end time, number)."""
    if not history_database_url.startswith("sqlite"):
        pytest.skip("PostgreSQL hashes the join; the scan was SQLite's plan")
    query = hands_together_query("alice", "bob", (1_000, 5))
    engine = sa.create_engine(sync_url(history_database_url))
    try:
        with engine.connect() as connection:
            sql = str(query.compile(connection, compile_kwargs={"literal_binds": True}))
            plan = [row[-1] for row in connection.execute(sa.text("EXPLAIN QUERY PLAN " + sql))]
    finally:
        engine.dispose()
    (other,) = [step for step in plan if step.startswith("SEARCH other")]
    assert "player_id=? AND end_us=?" in other, plan
