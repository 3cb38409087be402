"""`Transactions`: SQLite write transactions take the lock at BEGIN, and the units of work one process
queues share a group commit whose answers are those of units run one after the other; PostgreSQL runs
each unit in its own transaction."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from service_runtime.database import Transactions, create_engine


async def _engine_with_table(url: str) -> Transactions:
    transactions = Transactions(create_engine(url))
    async with transactions.engine.begin() as connection:
        await connection.execute(
            sa.text("CREATE TABLE counters (name VARCHAR(16) PRIMARY KEY, value INTEGER)")
        )
        await connection.execute(sa.text("INSERT INTO counters VALUES ('a', 0)"))
    return transactions


async def _value(transactions: Transactions) -> int:
    async def read(connection: AsyncConnection) -> int:
        return int(
            (await connection.execute(sa.text("SELECT value FROM counters WHERE name = 'a'"))).scalar_one()
        )

    return await transactions.run(read)


async def _increment(connection: AsyncConnection) -> int:
    # Read, then write what was read plus one: lost updates show unless units are serialised.
    value = int(
        (await connection.execute(sa.text("SELECT value FROM counters WHERE name = 'a'"))).scalar_one()
    )
    await asyncio.sleep(0)
    await connection.execute(sa.text("UPDATE counters SET value = :v WHERE name = 'a'"), {"v": value + 1})
    return value + 1


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_concurrent_read_then_write_units_lose_no_update(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url: str = request.getfixturevalue(f"{backend}_url")
    transactions = await _engine_with_table(url)
    try:
        if backend == "postgres":
            # PostgreSQL needs the row lock the services take; SQLite needs nothing but BEGIN IMMEDIATE.
            async def locked(connection: AsyncConnection) -> int:
                await connection.execute(sa.text("SELECT value FROM counters WHERE name = 'a' FOR UPDATE"))
                return await _increment(connection)

            results = await asyncio.gather(*(transactions.run(locked) for _ in range(50)))
        else:
            results = await asyncio.gather(*(transactions.run(_increment) for _ in range(50)))
        assert sorted(results) == list(range(1, 51))
        assert await _value(transactions) == 50
    finally:
        await transactions.engine.dispose()


async def test_a_unit_that_raises_in_a_group_commit_changes_nothing_and_the_others_commit(
    sqlite_url: str,
) -> None:
    transactions = await _engine_with_table(sqlite_url)

    async def write_then_fail(connection: AsyncConnection) -> int:
        await connection.execute(sa.text("UPDATE counters SET value = value + 100 WHERE name = 'a'"))
        raise LookupError("refused after writing")

    try:
        outcomes = await asyncio.gather(
            transactions.run(_increment),
            transactions.run(write_then_fail),
            transactions.run(_increment),
            return_exceptions=True,
        )
        assert (outcomes[0], outcomes[2]) == (1, 2)
        assert isinstance(outcomes[1], LookupError)
        assert await _value(transactions) == 2
    finally:
        await transactions.engine.dispose()


async def test_no_answer_before_its_group_commit_is_durable(sqlite_url: str, tmp_path: Path) -> None:
    transactions = await _engine_with_table(sqlite_url)
    database = sqlite_url.partition(":///")[2]
    try:
        results = await asyncio.gather(*(transactions.run(_increment) for _ in range(20)))
        # Another connection, outside this process's pool, sees every answered write.
        with sqlite3.connect(database) as other:
            assert other.execute("SELECT value FROM counters").fetchone()[0] == max(results) == 20
    finally:
        await transactions.engine.dispose()


async def test_a_sqlite_transaction_holds_the_write_lock_from_its_first_statement(sqlite_url: str) -> None:
    transactions = await _engine_with_table(sqlite_url)
    database = sqlite_url.partition(":///")[2]
    try:
        async with transactions.engine.begin() as connection:
            await connection.execute(sa.text("SELECT 1"))  # a read only: the lock is taken at BEGIN
            other = sqlite3.connect(database, timeout=0, isolation_level=None)
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
            other.close()
    finally:
        await transactions.engine.dispose()
