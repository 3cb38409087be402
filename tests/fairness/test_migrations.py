"""The fairness migrations build exactly the schema the code declares, on a fresh database, and a hand
committed under shuffle version 1 before the upgrade keeps its deck and verifies after it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from service_runtime.database import Transactions, sync_url
from service_runtime.database import create_engine as create_async_engine
from service_runtime.migrations import alembic_config
from services.fairness.application import FairnessApplication
from services.fairness.hands import ADMIN_READER, HandOutcome
from services.fairness.shuffle import GENESIS_COMMITMENT
from services.fairness.storage import MIGRATIONS_DIR, VERSION_TABLE, migrate
from services.fairness.tables import metadata
from services.fairness.verification import dealt_from_prefix
from tests.fairness.conftest import DEV_VAULT
from tests.fairness.test_shuffle import SHUFFLE_VECTORS


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


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_a_hand_committed_under_version_1_keeps_its_deck_and_verifies_after_the_upgrade(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url: str = request.getfixturevalue(f"{backend}_url")
    vector = next(v for v in SHUFFLE_VECTORS if v["shuffle_version"] == 1 and v["client_seeds"])
    seed, nonce = bytes.fromhex(vector["server_seed"]), bytes.fromhex(vector["nonce"])
    hand_id = "11111111-1111-4111-8111-111111111111"
    config = alembic_config(url, MIGRATIONS_DIR, VERSION_TABLE)
    await asyncio.to_thread(command.upgrade, config, "0001")
    key_id, ciphertext = DEV_VAULT.encrypt(hand_id, seed)
    engine = create_engine(sync_url(url))
    now = datetime.now(UTC)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO fairness_hands (hand_id, request_id, table_id, sequence, commitment,"
                " previous_commitment, nonce, shuffle_version, deal_now, state, seed_key_id, seed_ciphertext,"
                " created_at) VALUES (:hand_id, 'old/1', 'old-table', 1, :commitment, :genesis, :nonce, 1,"
                " false, 'committed', :key_id, :ciphertext, :now)"
            ),
            {
                "hand_id": hand_id, "commitment": vector["commitment"], "genesis": GENESIS_COMMITMENT,
                "nonce": nonce, "key_id": key_id, "ciphertext": ciphertext, "now": now,
            },
        )  # fmt: skip
    engine.dispose()
    await asyncio.to_thread(migrate, url)

    async_engine = create_async_engine(url)
    application = FairnessApplication(Transactions(async_engine), DEV_VAULT)
    try:
        for client_seed in vector["client_seeds"]:
            seat, value = client_seed["seat"], bytes.fromhex(client_seed["client_seed"])
            await application.add_player_entropy(hand_id, seat, f"p{seat}", value)
        dealt = await application.seal_hand(hand_id)
        assert list(dealt.deck) == vector["deck"]
        assert (dealt.hand.shuffle_version, dealt.hand.server_seed_hash) == (1, vector["commitment"])
        await application.reveal_hand(hand_id, HandOutcome.FINISHED)
        assert (
            await application.verify_stored_hand(hand_id, dealt_from_prefix(dealt.deck), reader=ADMIN_READER)
        ).passed
        # A new hand of the same table is version 3 and chains onto the version 1 hand.
        new = (await application.commit_hand("old/2", "old-table")).hand
        assert (new.shuffle_version, new.sequence, new.previous_commitment) == (3, 2, vector["commitment"])
    finally:
        await async_engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_a_downgrade_below_0005_is_refused_while_a_private_rooms_hand_exists(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """Code before 0005 would show a private room's hands to anyone: the downgrade refuses while one
    is stored and drops the column once none is."""
    url: str = request.getfixturevalue(f"{backend}_url")
    await asyncio.to_thread(migrate, url)
    async_engine = create_async_engine(url)
    try:
        application = FairnessApplication(Transactions(async_engine), DEV_VAULT)
        hidden = (await application.commit_hand("room/1", "private-room.1", private_room=True)).hand
        assert hidden.private_room
    finally:
        await async_engine.dispose()
    config = alembic_config(url, MIGRATIONS_DIR, VERSION_TABLE)
    with pytest.raises(RuntimeError, match="private rooms"):
        await asyncio.to_thread(command.downgrade, config, "0004")
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as connection:
            assert "private_room" in {c["name"] for c in inspect(connection).get_columns("fairness_hands")}
        with engine.begin() as connection:
            connection.execute(sa.text("UPDATE fairness_hands SET private_room = false"))
        await asyncio.to_thread(command.downgrade, config, "0004")
        with engine.connect() as connection:
            assert "private_room" not in {
                c["name"] for c in inspect(connection).get_columns("fairness_hands")
            }
    finally:
        engine.dispose()
